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

// Safe reads of a JSON value of unknown shape (a malformed live.jsonl or
// diagnosis.json reaches here): never operator[] on a const object (a
// missing key is undefined behaviour there), never value() (it throws on a
// type mismatch).
const nlohmann::json& At(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull = nullptr;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  const auto& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}
bool IsNum(const nlohmann::json& j, const char* key) { return At(j, key).is_number(); }
double Num(const nlohmann::json& j, const char* key, double fallback = 0) {
  const auto& v = At(j, key);
  return v.is_number() ? v.get<double>() : fallback;
}
const nlohmann::json& Arr(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  const auto& v = At(j, key);
  return v.is_array() ? v : kEmpty;
}

constexpr const char* kStates[] = {"starting", "running", "ready",   "completed", "exited",
                                   "died",     "stalled", "timeout", "stopped",   "unknown"};

}  // namespace

std::string PrometheusText(const nlohmann::json& run, const nlohmann::json& diagnosis) {
  using nlohmann::json;
  Writer w;
  const json& services = Arr(run, "services");
  std::string run_label = fmt::format("run=\"{}\"", Escape(Str(run, "name")));
  auto label = [&](const json& s) { return fmt::format("{},service=\"{}\"", run_label, Escape(Str(s, "name"))); };

  w.Family("faultline_service_state", "gauge", "1 for the state the service is in");
  for (const auto& s : services) {
    std::string cur = Str(s, "state", "unknown");
    for (const char* st : kStates) {
      w.Sample("faultline_service_state", label(s) + fmt::format(",state=\"{}\"", st), cur == st);
    }
  }
  w.Family("faultline_service_phase", "gauge", "1 for the last phase the service's log or samples show");
  for (const auto& s : services) {
    if (At(s, "phase").is_string()) {
      w.Sample("faultline_service_phase", label(s) + fmt::format(",phase=\"{}\"", Escape(Str(s, "phase"))), 1);
    }
  }
  const char* kServiceFamilies[][3] = {
      {"faultline_service_pid", "pid", "process id of the service's main process"},
      {"faultline_service_uptime_seconds", "uptime_s", "seconds since the service started (until it ended)"},
      {"faultline_service_exit_code", "exit_code", "exit code of the service's main process, once it exited"},
      {"faultline_service_cpu_percent", "cpu_percent", "CPU of the service's process tree, percent of one core"},
      {"faultline_service_rss_bytes", "rss_bytes", "resident memory of the service's process tree"}};
  for (const auto& f : kServiceFamilies) {
    w.Family(f[0], "gauge", f[2]);
    for (const auto& s : services) {
      if (IsNum(s, f[1])) w.Sample(f[0], label(s), Num(s, f[1]));
    }
  }
  w.Family("faultline_service_seconds_without_progress", "gauge", "seconds since anything progressed");
  for (const auto& s : services) {
    const json& progress = At(s, "progress");
    if (IsNum(progress, "seconds_since")) {
      w.Sample("faultline_service_seconds_without_progress", label(s), Num(progress, "seconds_since"));
    }
  }
  w.Family("faultline_service_log_bytes", "gauge", "size of the service's log");
  for (const auto& s : services) w.Sample("faultline_service_log_bytes", label(s), Num(At(s, "log"), "bytes"));

  w.Family("faultline_stall_seconds", "gauge", "how long the diagnosed stall lasted (0 when none)");
  double stalled = 0;
  std::string stall_labels = run_label;
  const json& stall = At(diagnosis, "stall");
  if (stall.is_object()) {
    stalled = Num(stall, "stalled_for_s");
    stall_labels += fmt::format(",service=\"{}\",class=\"{}\"", Escape(Str(diagnosis, "service")),
                                Escape(Str(stall, "class")));
  }
  w.Sample("faultline_stall_seconds", stall_labels, stalled);

  const json& gpu = At(run, "gpu");
  const char* kGpuFamilies[][3] = {
      {"faultline_gpu_memory_used_bytes", "memory_used_bytes", "GPU memory in use"},
      {"faultline_gpu_memory_total_bytes", "memory_total_bytes", "GPU memory in all"},
      {"faultline_gpu_utilization_percent", "utilization_percent", "GPU utilisation"}};
  for (const auto& f : kGpuFamilies) {
    w.Family(f[0], "gauge", f[2]);
    for (const auto& d : Arr(gpu, "devices")) {
      if (IsNum(d, f[1])) w.Sample(f[0], fmt::format("{},gpu=\"{}\"", run_label, Num(d, "index")), Num(d, f[1]));
    }
  }
  return w.Take();
}

}  // namespace faultline::web
