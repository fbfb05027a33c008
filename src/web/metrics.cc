#include "web/metrics.h"

#include <fmt/format.h>

namespace faultline::web {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Writer {
 public:
  void Family(const char* name, const char* type, const char* help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(const char* name, const std::string& labels, double value) {
    text_ += fmt::format("{}{{{}}} {}\n", name, labels, value);
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

constexpr const char* kStates[] = {"starting", "running", "ready",   "completed", "exited",
                                   "died",     "stalled", "timeout", "stopped",   "unknown"};

}  // namespace

std::string PrometheusText(const nlohmann::json& run, const nlohmann::json& diagnosis) {
  using nlohmann::json;
  Writer w;
  const json services = run.value("services", json::array());
  std::string run_label = fmt::format("run=\"{}\"", Escape(run.value("name", "")));
  auto label = [&](const json& s) { return fmt::format("{},service=\"{}\"", run_label, Escape(s.value("name", ""))); };

  w.Family("faultline_service_state", "gauge", "1 for the state the service is in");
  for (const auto& s : services) {
    std::string cur = s.value("state", "unknown");
    for (const char* st : kStates) w.Sample("faultline_service_state", label(s) + fmt::format(",state=\"{}\"", st), cur == st);
  }
  w.Family("faultline_service_phase", "gauge", "1 for the last phase the service's log or samples show");
  for (const auto& s : services) {
    if (s["phase"].is_string()) {
      w.Sample("faultline_service_phase", label(s) + fmt::format(",phase=\"{}\"", Escape(s["phase"])), 1);
    }
  }
  w.Family("faultline_service_pid", "gauge", "process id of the service's main process");
  for (const auto& s : services) {
    if (s["pid"].is_number()) w.Sample("faultline_service_pid", label(s), s["pid"].get<double>());
  }
  w.Family("faultline_service_uptime_seconds", "gauge", "seconds since the service started (until it ended)");
  for (const auto& s : services) {
    if (s["uptime_s"].is_number()) w.Sample("faultline_service_uptime_seconds", label(s), s["uptime_s"].get<double>());
  }
  w.Family("faultline_service_exit_code", "gauge", "exit code of the service's main process, once it exited");
  for (const auto& s : services) {
    if (s["exit_code"].is_number()) w.Sample("faultline_service_exit_code", label(s), s["exit_code"].get<double>());
  }
  w.Family("faultline_service_cpu_percent", "gauge", "CPU of the service's process tree, percent of one core");
  for (const auto& s : services) {
    if (s["cpu_percent"].is_number()) w.Sample("faultline_service_cpu_percent", label(s), s["cpu_percent"].get<double>());
  }
  w.Family("faultline_service_rss_bytes", "gauge", "resident memory of the service's process tree");
  for (const auto& s : services) {
    if (s["rss_bytes"].is_number()) w.Sample("faultline_service_rss_bytes", label(s), s["rss_bytes"].get<double>());
  }
  w.Family("faultline_service_seconds_without_progress", "gauge", "seconds since anything progressed");
  for (const auto& s : services) {
    if (s["progress"].is_object() && s["progress"]["seconds_since"].is_number()) {
      w.Sample("faultline_service_seconds_without_progress", label(s), s["progress"]["seconds_since"].get<double>());
    }
  }
  w.Family("faultline_service_log_bytes", "gauge", "size of the service's log");
  for (const auto& s : services) w.Sample("faultline_service_log_bytes", label(s), s["log"].value("bytes", 0.0));

  w.Family("faultline_stall_seconds", "gauge", "how long the diagnosed stall lasted (0 when none)");
  double stalled = 0;
  std::string stall_labels = run_label;
  if (diagnosis.is_object() && diagnosis.contains("stall") && diagnosis["stall"].is_object()) {
    stalled = diagnosis["stall"].value("stalled_for_s", 0.0);
    stall_labels += fmt::format(",service=\"{}\",class=\"{}\"", Escape(diagnosis.value("service", "")),
                                Escape(diagnosis["stall"].value("class", "")));
  }
  w.Sample("faultline_stall_seconds", stall_labels, stalled);

  const json gpu = run.contains("gpu") && run["gpu"].is_object() ? run["gpu"] : json::object();
  const char* kGpuFamilies[][3] = {
      {"faultline_gpu_memory_used_bytes", "memory_used_bytes", "GPU memory in use"},
      {"faultline_gpu_memory_total_bytes", "memory_total_bytes", "GPU memory in all"},
      {"faultline_gpu_utilization_percent", "utilization_percent", "GPU utilisation"}};
  for (const auto& f : kGpuFamilies) {
    w.Family(f[0], "gauge", f[2]);
    for (const auto& d : gpu.value("devices", json::array())) {
      if (d.contains(f[1]) && d[f[1]].is_number()) {
        w.Sample(f[0], fmt::format("{},gpu=\"{}\"", run_label, d.value("index", 0)), d[f[1]].get<double>());
      }
    }
  }
  return w.Take();
}

}  // namespace faultline::web
