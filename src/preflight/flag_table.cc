#include "preflight/flag_table.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <mutex>

#include "preflight/embedded_rules.h"

namespace faultline::preflight {

const FlagSpec* FlagTable::Find(std::string_view name) const {
  for (const FlagSpec& f : flags) {
    for (const std::string& n : f.names) {
      if (n == name) return &f;
    }
  }
  if (name.size() < 4 || name.substr(0, 2) != "--") return nullptr;
  const FlagSpec* match = nullptr;
  for (const FlagSpec& f : flags) {
    for (const std::string& n : f.names) {
      if (n.size() > name.size() && n.compare(0, name.size(), name) == 0) {
        if (match && match != &f) return nullptr;  // ambiguous
        match = &f;
      }
    }
  }
  return match;
}

Result<FlagTable> LoadFlagTable(std::string_view yaml_text, const std::string& launcher) {
  FlagTable table;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    YAML::Node node = root["launchers"][launcher];
    if (!node) return Status::NotFound(fmt::format("no flag table for launcher '{}'", launcher));
    table.underscores = node["underscores"].as<bool>(false);
    if (node["defaults"]) {
      for (const auto& kv : node["defaults"]) table.defaults[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
    for (const YAML::Node& f : node["flags"]) {
      FlagSpec spec;
      for (const YAML::Node& n : f["names"]) spec.names.push_back(n.as<std::string>());
      spec.key = f["key"].as<std::string>("");
      std::string type = f["type"].as<std::string>("string");
      if (type == "int")
        spec.type = FlagType::kInt;
      else if (type == "float")
        spec.type = FlagType::kFloat;
      else if (type == "size")
        spec.type = FlagType::kSize;
      else if (type == "bool")
        spec.type = FlagType::kBool;
      else if (type == "list")
        spec.type = FlagType::kList;
      else if (type == "string")
        spec.type = FlagType::kString;
      else
        return Status::InvalidArgument(fmt::format("flag {}: unknown type '{}'", spec.names.front(), type));
      if (spec.names.empty()) return Status::InvalidArgument("flag entry without names");
      if (f["min"]) spec.min = f["min"].as<double>();
      if (f["max"]) spec.max = f["max"].as<double>();
      table.flags.push_back(std::move(spec));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("rules/preflight_flags.yaml: {}", e.what()));
  }
  return table;
}

const FlagTable& BuiltinFlagTable(const std::string& launcher) {
  static std::mutex mu;
  static std::map<std::string, FlagTable> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(launcher);
  if (it != cache.end()) return it->second;
  Result<FlagTable> t = LoadFlagTable(EmbeddedFlagTables(), launcher);
  return cache[launcher] = t.ok() ? *t : FlagTable{};
}

}  // namespace faultline::preflight
