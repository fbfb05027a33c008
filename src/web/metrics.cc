#include "web/metrics.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "rules/redactor.h"
#include "web/run_dir.h"

namespace faultline::metrics {
namespace {

using nlohmann::json;

// Label values: backslash, double quote and newline escaped (exposition format
// 0.0.4).
std::string Escape(const std::string &v) {
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

std::string Join(const Labels &labels) {
  std::string out;
  for (const auto &[k, v] : labels) {
    if (v.empty()) continue;  // an empty label is no label in Prometheus
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", k, Escape(v));
  }
  return out;
}

Labels With(Labels base, const Labels &more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

class Writer {
 public:
  // Every family's HELP and TYPE come once, before its samples, even when it
  // has none.
  void Family(const char *name, const char *type, const char *help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void Sample(const char *name, const Labels &labels, double value) {
    text_ += fmt::format("{}{{{}}} {}\n", name, Join(labels), Number(value));
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

template <typename T>
std::optional<T> Field(const json &j, const char *key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_arithmetic_v<T>) {
    if (!it->is_number()) return std::nullopt;
  } else {
    if (!it->is_string()) return std::nullopt;
  }
  return it->get<T>();
}

bool IsFailure(const std::string &o) { return o == "died" || o == "stalled" || o == "timeout"; }

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

}  // namespace

Labels SchedulerLabels(const std::function<std::string(const char *)> &env) {
  Labels out;
  auto add = [&](const char *label, const std::string &value) {
    if (value.empty()) return;
    for (const auto &[k, v] : out) {
      if (k == label) return;  // the first source wins
    }
    out.emplace_back(label, value);
  };
  add("job_id", env("SLURM_JOB_ID"));
  add("node_id", env("SLURM_NODEID"));
  add("rank", env("SLURM_PROCID"));
  std::string pod = env("POD_NAME");
  if (pod.empty() && !env("KUBERNETES_SERVICE_HOST").empty()) pod = env("HOSTNAME");
  add("pod", pod);
  add("namespace", env("POD_NAMESPACE"));
  add("rank", env("JOB_COMPLETION_INDEX"));
  return out;
}

const std::vector<std::string> &ServiceStates() {
  static const std::vector<std::string> states = {"starting", "running", "ready",   "completed", "exited",
                                                  "died",     "stalled", "timeout", "stopped",   "unknown"};
  return states;
}

const std::vector<std::string> &RunOutcomes() {
  static const std::vector<std::string> outcomes = {"running", "ready",   "completed",  "died",
                                                    "stalled", "timeout", "interrupted"};
  return outcomes;
}

namespace {
// Names that reach labels pass the redaction rules once, as they are recorded.
Identity Redacted(Identity id) {
  const auto &secrets = rules::Secrets();
  id.run_id = secrets.Text(id.run_id);
  id.pipeline = secrets.Text(id.pipeline);
  return id;
}
}  // namespace

RunMetrics::RunMetrics(Identity id) : id_(Redacted(std::move(id))) {}

RunMetrics::Service &RunMetrics::ServiceNamed(const std::string &name) {
  const std::string key = rules::Secrets().Text(name);
  for (auto &[n, s] : services_) {
    if (n == key) return s;
  }
  services_.emplace_back(key, Service{});
  return services_.back().second;
}

bool RunMetrics::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

void RunMetrics::ObserveLog(const std::string &service, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Service &s = ServiceNamed(service);
  if (!s.log_bytes || *s.log_bytes < bytes) s.log_bytes = bytes;
}

void RunMetrics::Apply(const json &r) {
  if (!r.is_object()) return;
  std::lock_guard<std::mutex> lock(mu_);
  const std::string type = Field<std::string>(r, "type").value_or("");
  const std::string svc = Field<std::string>(r, "service").value_or("");
  const int64_t t = web::ParseIsoMillis(Field<std::string>(r, "time").value_or(""));
  if (t >= 0) {
    if (start_ms_ < 0 || t < start_ms_) start_ms_ = t;
    last_update_ms_ = std::max(last_update_ms_, t);
  }
  if (type == "event") {
    const std::string ev = Field<std::string>(r, "event").value_or("");
    if (ev == "stopped") {  // the pipeline's end: what was still up was stopped
      for (auto &[n, s] : services_) {
        if (s.state == "running" || s.state == "ready" || s.state == "starting") s.state = "stopped";
        if (s.start_ms >= 0 && s.end_ms < 0) s.end_ms = t;
      }
      return;
    }
    if (ev != "started" && ev != "ready" && ev != "exited") return;
    Service &s = ServiceNamed(svc);
    if (ev == "started") {
      s.state = "running";
      s.start_ms = t;
      s.end_ms = -1;
      s.exit_code.reset();
    } else if (ev == "ready") {
      s.state = "ready";
    } else {
      s.exit_code = Field<int>(r, "exit_code");
      s.state = s.exit_code && *s.exit_code == 0 ? "completed" : "exited";
      s.end_ms = t;
    }
  } else if (type == "status") {
    Service &s = ServiceNamed(svc);
    if (s.state == "unknown") s.state = "running";  // watch: no started event
    if (s.start_ms < 0 && t >= 0) {
      auto elapsed = Field<double>(r, "elapsed_s");
      s.start_ms = t - static_cast<int64_t>(std::llround(elapsed.value_or(0) * 1000));
    }
    if (auto p = Field<std::string>(r, "phase")) s.phase = *p;
    if (r.contains("progress") && t >= 0) {
      if (auto since = Field<double>(r["progress"], "seconds_since")) {
        s.last_progress_ms = t - static_cast<int64_t>(std::llround(*since * 1000));
      }
    }
    std::set<int64_t> tree;
    if (r.contains("processes") && r["processes"].is_array()) {
      int64_t rss = 0;
      for (const auto &p : r["processes"]) {
        auto pid = Field<int64_t>(p, "pid");
        if (!pid) continue;
        tree.insert(*pid);
        rss += Field<int64_t>(p, "rss_bytes").value_or(0);
        double &cpu = s.cpu_seconds[*pid];
        cpu = std::max(cpu, Field<double>(p, "cpu_seconds").value_or(0));
      }
      s.rss_bytes = rss;
      s.processes = static_cast<int64_t>(tree.size());
    }
    if (r.contains("log") && r["log"].is_object()) {
      s.log_bytes = Field<int64_t>(r["log"], "bytes");
      s.log_lines = Field<int64_t>(r["log"], "lines");
    }
    if (r.contains("gpu") && r["gpu"].is_object()) {
      const json &g = r["gpu"];
      if (g.contains("devices") && g["devices"].is_array()) gpu_devices_ = g["devices"];
      s.gpu_processes.clear();
      if (g.contains("processes") && g["processes"].is_array()) {
        for (const auto &p : g["processes"]) {
          auto pid = Field<int64_t>(p, "pid");
          auto bytes = Field<int64_t>(p, "memory_used_bytes");
          // The driver lists every process on the GPUs; a service owns those of
          // its tree.
          if (!pid || !bytes || !tree.count(*pid)) continue;
          s.gpu_processes.push_back({*pid, Field<int>(p, "gpu").value_or(0), *bytes});
        }
      }
    }
  } else if (type == "diagnosis") {
    const std::string outcome = Field<std::string>(r, "outcome").value_or("");
    if (outcome.empty()) return;
    outcome_ = outcome;
    ended_ = true;
    if (IsFailure(outcome) || outcome == "ready") {
      Service &s = ServiceNamed(svc);
      s.state = outcome;
      if (IsFailure(outcome) && s.end_ms < 0) s.end_ms = t;
      if (!s.exit_code) s.exit_code = Field<int>(r, "exit_code");
      if (r.contains("stall") && r["stall"].is_object()) {
        s.stall_class = Field<std::string>(r["stall"], "class").value_or("");
      }
    }
  }
}

std::string RunMetrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  Writer w;
  Labels base = {{"run_id", id_.run_id}};
  base.insert(base.end(), id_.scheduler.begin(), id_.scheduler.end());

  w.Family("faultline_build_info", "gauge", "1, labelled with the faultline version");
  w.Sample("faultline_build_info", With(base, {{"version", id_.version}}), 1);
  w.Family("faultline_run_info", "gauge", "1, labelled with the run's pipeline and host");
  w.Sample("faultline_run_info", With(base, {{"pipeline", id_.pipeline}, {"hostname", id_.hostname}}), 1);
  w.Family("faultline_run_start_time_seconds", "gauge", "when the run started, seconds since the Unix epoch");
  if (start_ms_ >= 0) w.Sample("faultline_run_start_time_seconds", base, Seconds(start_ms_));
  w.Family("faultline_last_update_timestamp_seconds", "gauge",
           "when faultline last recorded anything, seconds since the Unix "
           "epoch (stale textfiles show here)");
  if (last_update_ms_ >= 0) w.Sample("faultline_last_update_timestamp_seconds", base, Seconds(last_update_ms_));
  w.Family("faultline_run_outcome", "gauge", "1 for how the run ended (running while it has not), 0 for the others");
  for (const auto &o : RunOutcomes()) w.Sample("faultline_run_outcome", With(base, {{"outcome", o}}), outcome_ == o);

  auto each = [&](const char *name, const char *type, const char *help, auto &&fn) {
    w.Family(name, type, help);
    for (const auto &[n, s] : services_) fn(With(base, {{"service", n}}), s);
  };
  each("faultline_service_state", "gauge", "1 for the state the service is in, 0 for the others",
       [&](const Labels &l, const Service &s) {
         for (const auto &st : ServiceStates())
           w.Sample("faultline_service_state", With(l, {{"state", st}}), s.state == st);
       });
  std::vector<std::string> phases = id_.phases;
  for (const auto &[n, s] : services_) {
    if (!s.phase.empty() && std::find(phases.begin(), phases.end(), s.phase) == phases.end()) phases.push_back(s.phase);
  }
  each("faultline_service_phase", "gauge",
       "1 for the last phase the service's log shows, 0 for the other phases "
       "(all 0 before the first)",
       [&](const Labels &l, const Service &s) {
         for (const auto &ph : phases) w.Sample("faultline_service_phase", With(l, {{"phase", ph}}), s.phase == ph);
       });
  each("faultline_service_start_time_seconds", "gauge", "when the service started, seconds since the Unix epoch",
       [&](const Labels &l, const Service &s) {
         if (s.start_ms >= 0) w.Sample("faultline_service_start_time_seconds", l, Seconds(s.start_ms));
       });
  each("faultline_service_end_time_seconds", "gauge", "when the service ended, seconds since the Unix epoch",
       [&](const Labels &l, const Service &s) {
         if (s.end_ms >= 0) w.Sample("faultline_service_end_time_seconds", l, Seconds(s.end_ms));
       });
  each("faultline_service_exit_code", "gauge", "exit code of the service's main process, once it exited",
       [&](const Labels &l, const Service &s) {
         if (s.exit_code) w.Sample("faultline_service_exit_code", l, *s.exit_code);
       });
  each("faultline_service_last_progress_timestamp_seconds", "gauge",
       "when anything of the service last progressed (log, CPU, I/O, GPU), "
       "seconds since the Unix epoch",
       [&](const Labels &l, const Service &s) {
         if (s.last_progress_ms >= 0) {
           w.Sample("faultline_service_last_progress_timestamp_seconds", l, Seconds(s.last_progress_ms));
         }
       });
  each("faultline_service_cpu_seconds_total", "counter", "CPU time used by the service's process tree",
       [&](const Labels &l, const Service &s) {
         if (s.cpu_seconds.empty()) return;
         double total = 0;
         for (const auto &[pid, c] : s.cpu_seconds) total += c;
         w.Sample("faultline_service_cpu_seconds_total", l, std::round(total * 10) / 10);
       });
  each("faultline_service_resident_memory_bytes", "gauge", "resident memory of the service's process tree",
       [&](const Labels &l, const Service &s) {
         if (s.rss_bytes) w.Sample("faultline_service_resident_memory_bytes", l, static_cast<double>(*s.rss_bytes));
       });
  each("faultline_service_processes", "gauge", "processes in the service's tree",
       [&](const Labels &l, const Service &s) {
         if (s.processes) w.Sample("faultline_service_processes", l, static_cast<double>(*s.processes));
       });
  each("faultline_service_log_bytes_total", "counter", "bytes the service has written to its log",
       [&](const Labels &l, const Service &s) {
         if (s.log_bytes) w.Sample("faultline_service_log_bytes_total", l, static_cast<double>(*s.log_bytes));
       });
  each("faultline_service_log_lines_total", "counter", "lines the service has written to its log",
       [&](const Labels &l, const Service &s) {
         if (s.log_lines) w.Sample("faultline_service_log_lines_total", l, static_cast<double>(*s.log_lines));
       });
  each("faultline_service_gpu_memory_used_bytes", "gauge", "GPU memory used by the service's processes, all GPUs",
       [&](const Labels &l, const Service &s) {
         if (s.processes) {
           double sum = 0;
           for (const auto &g : s.gpu_processes) sum += static_cast<double>(g.bytes);
           w.Sample("faultline_service_gpu_memory_used_bytes", l, sum);
         }
       });
  each("faultline_service_stall_info", "gauge", "1, labelled with the class of the stall diagnosed",
       [&](const Labels &l, const Service &s) {
         if (!s.stall_class.empty()) w.Sample("faultline_service_stall_info", With(l, {{"class", s.stall_class}}), 1);
       });

  // GPUs, labelled as DCGM exporter labels them, so the series join
  // DCGM_FI_DEV_*.
  auto gpu_labels = [&](int index) {
    Labels l = With(base, {{"gpu", std::to_string(index)}});
    for (const auto &d : gpu_devices_) {
      if (d.is_object() && Field<int>(d, "index").value_or(-1) == index) {
        l.emplace_back("UUID", Field<std::string>(d, "uuid").value_or(""));
        l.emplace_back("modelName", Field<std::string>(d, "name").value_or(""));
      }
    }
    l.emplace_back("Hostname", id_.hostname);
    return l;
  };
  w.Family("faultline_gpu_process_memory_used_bytes", "gauge", "GPU memory used by one process of a service");
  for (const auto &[n, s] : services_) {
    for (const auto &g : s.gpu_processes) {
      Labels l = gpu_labels(g.gpu);
      l.insert(l.begin() + static_cast<long>(base.size()), {{"service", n}, {"pid", std::to_string(g.pid)}});
      w.Sample("faultline_gpu_process_memory_used_bytes", l, static_cast<double>(g.bytes));
    }
  }
  struct GpuFamily {
    const char *name;
    const char *field;
    const char *help;
    double scale;
  };
  const GpuFamily families[] = {
      {"faultline_gpu_memory_used_bytes", "memory_used_bytes", "GPU memory in use", 1},
      {"faultline_gpu_memory_total_bytes", "memory_total_bytes", "GPU memory in all", 1},
      {"faultline_gpu_utilization_ratio", "utilization_percent", "GPU utilisation, 0 to 1", 0.01}};
  for (const auto &f : families) {
    w.Family(f.name, "gauge", f.help);
    for (const auto &d : gpu_devices_) {
      auto v = Field<double>(d, f.field);
      auto index = Field<int>(d, "index");
      if (v && index) w.Sample(f.name, gpu_labels(*index), *v * f.scale);
    }
  }
  return w.Take();
}

}  // namespace faultline::metrics
