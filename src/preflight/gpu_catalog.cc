#include "preflight/gpu_catalog.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>

#include "preflight/embedded_rules.h"

namespace faultline::preflight {
namespace {

std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' || c == '-' || c == '_') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* prefix : {"nvidia", "tesla", "geforce"}) {
    std::string p(prefix);
    if (out.rfind(p, 0) == 0 && out.size() > p.size()) out = out.substr(p.size());
  }
  return out;
}

}  // namespace

Result<GpuCatalog> GpuCatalog::Load(std::string_view yaml_text) {
  GpuCatalog cat;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    for (const YAML::Node& g : root["gpus"]) {
      CatalogGpu gpu;
      gpu.name = g["name"].as<std::string>();
      if (g["aliases"]) {
        for (const YAML::Node& a : g["aliases"]) gpu.aliases.push_back(a.as<std::string>());
      }
      gpu.memory_mib = g["memory_mib"].as<uint64_t>();
      gpu.cuda_memory_mib = g["cuda_memory_mib"].as<uint64_t>(0);
      gpu.compute = g["compute"].as<std::string>("");
      gpu.interconnect = g["interconnect"].as<std::string>("");
      if (gpu.memory_mib == 0)
        return Status::InvalidArgument(fmt::format("rules/gpus.yaml: {} has no memory", gpu.name));
      cat.gpus_.push_back(std::move(gpu));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("rules/gpus.yaml: {}", e.what()));
  }
  return cat;
}

const GpuCatalog& GpuCatalog::Builtin() {
  static const GpuCatalog* cat = [] {
    Result<GpuCatalog> c = Load(EmbeddedGpuCatalog());
    return new GpuCatalog(c.ok() ? *c : GpuCatalog());
  }();
  return *cat;
}

const CatalogGpu* GpuCatalog::Find(std::string_view name) const {
  std::string want = Normalize(name);
  if (want.empty()) return nullptr;
  for (const CatalogGpu& g : gpus_) {
    if (Normalize(g.name) == want) return &g;
    for (const std::string& a : g.aliases) {
      if (Normalize(a) == want) return &g;
    }
  }
  return nullptr;
}

}  // namespace faultline::preflight
