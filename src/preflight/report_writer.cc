#include "preflight/report_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "rules/redactor.h"

namespace faultline::preflight {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

template <typename T>
ordered Opt(const std::optional<T>& v) {
  return v ? ordered(*v) : ordered(nullptr);
}

ordered OptRounded(const std::optional<double>& v, int digits = 2) {
  if (!v) return nullptr;
  double scale = std::pow(10.0, digits);
  return std::round(*v * scale) / scale;
}

ordered StrOrNull(const std::string& s) { return s.empty() ? ordered(nullptr) : ordered(s); }

std::string DisplayName(const std::string& launcher) {
  if (launcher == "vllm") return "vLLM";
  if (launcher == "sglang") return "SGLang";
  return launcher;
}

}  // namespace

std::string WriteJson(const PreflightReport& r) {
  ordered j;
  j["schema"] = kPreflightSchemaId;
  j["blocking"] = r.blocking();
  j["launcher"] = r.launcher;
  j["entry"] = r.entry;
  j["model"] = r.model;
  j["model_config"] = StrOrNull(r.model_config);
  j["gpu_source"] = r.gpu_source;
  j["visible_devices"] = r.visible_setting;
  ordered gpus = ordered::array();
  for (const GpuLine& g : r.gpus) {
    ordered o;
    o["cuda_index"] = g.cuda_index;
    o["node_index"] = g.node_index;
    o["name"] = g.name;
    o["uuid"] = StrOrNull(g.uuid);
    o["memory_total_gib"] = std::round(g.total_gib * 100) / 100;
    o["memory_used_gib"] = std::round(g.used_gib * 100) / 100;
    o["processes"] = g.processes;
    gpus.push_back(o);
  }
  j["gpus"] = gpus;
  ordered findings = ordered::array();
  for (const Finding& f : r.findings) {
    ordered o;
    o["check"] = f.check;
    o["severity"] = SeverityName(f.severity);
    o["message"] = f.message;
    o["tool_error"] = StrOrNull(f.tool_error);
    o["source"] = StrOrNull(f.source);
    o["fix"] = StrOrNull(f.fix);
    ordered nums = ordered::object();
    for (const auto& [k, v] : f.numbers) nums[k] = v;
    o["numbers"] = nums;
    findings.push_back(o);
  }
  j["findings"] = findings;
  const Estimates& e = r.estimates;
  ordered est;
  est["gpus_needed"] = Opt(e.gpus_needed);
  est["gpus_visible"] = Opt(e.gpus_visible);
  est["weights_gib_per_gpu"] = OptRounded(e.weights_gib_per_gpu);
  est["kv_cache_gib_per_gpu"] = OptRounded(e.kv_cache_gib_per_gpu);
  est["kv_cache_tokens"] = Opt(e.kv_cache_tokens);
  est["max_model_len"] = Opt(e.max_model_len);
  est["activation_gib_per_gpu"] = OptRounded(e.activation_gib_per_gpu);
  est["gpu_memory_gib"] = OptRounded(e.gpu_memory_gib);
  est["gpu_memory_utilization"] = OptRounded(e.gpu_memory_utilization, 3);
  j["estimates"] = est;
  j["notes"] = r.notes;
  rules::Secrets().Json(&j);  // the redaction choke point: flags and paths echo the command line
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string WriteText(const PreflightReport& r) {
  std::string out = fmt::format("faultline preflight: {} {}\n", r.entry, r.model);
  out += fmt::format("  GPUs: {}; {}\n", r.gpu_source, r.visible_setting);
  if (!r.model_config.empty()) out += fmt::format("  model config: {}\n", r.model_config);
  out += "\n";
  for (const Finding& f : r.findings) {
    std::string label;
    switch (f.severity) {
      case Severity::kBlocking:
        label = "BLOCKING";
        break;
      case Severity::kWarning:
        label = "WARNING";
        break;
      case Severity::kOk:
        label = "ok";
        break;
    }
    out += fmt::format("{:<9} {}\n", label, f.message);
    if (!f.tool_error.empty()) {
      out += fmt::format("{:<9} {} would fail with: {}\n", "", DisplayName(r.launcher), f.tool_error);
    }
    if (!f.fix.empty()) out += fmt::format("{:<9} fix: {}\n", "", f.fix);
  }
  for (const std::string& n : r.notes) out += fmt::format("note      {}\n", n);
  int blocking = 0;
  for (const Finding& f : r.findings) blocking += f.severity == Severity::kBlocking;
  out += "\n";
  out += blocking ? fmt::format("{} blocking problem{}: this launch would fail.\n", blocking, blocking > 1 ? "s" : "")
                  : "no blocking problem found.\n";
  return rules::Secrets().Text(out);
}

}  // namespace faultline::preflight
