// The metrics model: what one faultline (one run, watch or wait-ready on one
// node) knows, fed by the faultline.live/1 records it writes (status, event,
// diagnosis: docs/live.schema.json) and rendered in the Prometheus text
// exposition format (0.0.4) for /metrics and node_exporter's textfile
// collector (docs/metrics.md lists every series).
//
// Naming follows Prometheus, node_exporter and DCGM exporter conventions so
// faultline's series join theirs: base units (seconds, bytes, ratios),
// counters for cumulative values (_total), start and progress times as Unix
// timestamps (_timestamp_seconds / _start_time_seconds) rather than ages,
// state and phase as one series per possible value, GPU labels as DCGM names
// them (gpu, UUID, modelName, Hostname), and every series carrying run_id and
// the scheduler's identity (job_id, node_id, rank, pod) so many nodes' and
// many runs' series never collide.
//
// Thread-safe: Apply (the supervising thread) and Render (the server thread)
// may run concurrently.
#ifndef FAULTLINE_WEB_METRICS_H_
#define FAULTLINE_WEB_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// The scheduler's identity of this process, from its environment: Slurm
// (SLURM_JOB_ID -> job_id, SLURM_NODEID -> node_id, SLURM_PROCID -> rank),
// Kubernetes (POD_NAME, or HOSTNAME inside a pod -> pod; POD_NAMESPACE ->
// namespace; JOB_COMPLETION_INDEX of an indexed Job -> rank). Only the
// labels whose variables are set. `env` returns "" for an unset variable.
Labels SchedulerLabels(const std::function<std::string(const char *)> &env);

struct Identity {
  std::string run_id;               // unique per run: the run directory's name (or
                                    // watch-<host>-<pid>-<time>)
  std::string pipeline;             // the pipeline's (or watched job's) name
  std::string hostname;             // DCGM's Hostname label on GPU series
  std::string version;              // faultline_build_info
  Labels scheduler;                 // SchedulerLabels()
  std::vector<std::string> phases;  // every phase a service can report
                                    // (rules/stall.yaml phase_markers)
};

// The states of docs/dashboard-api.md, and the outcomes of faultline.live/1.
const std::vector<std::string> &ServiceStates();
const std::vector<std::string> &RunOutcomes();

class RunMetrics {
 public:
  explicit RunMetrics(Identity id);

  // One faultline.live/1 record. Unknown types and malformed fields are
  // ignored.
  void Apply(const nlohmann::json &record);
  // A log seen on disk (a directory of logs has no records): the service
  // exists, its log has `bytes`.
  void ObserveLog(const std::string &service, int64_t bytes);
  // The exposition text.
  std::string Render() const;
  // Whether the run's end (a diagnosis record of any outcome) was applied.
  bool ended() const;
  const Identity &identity() const { return id_; }

 private:
  struct GpuProcess {
    int64_t pid = 0;
    int gpu = 0;
    int64_t bytes = 0;
  };
  struct Service {
    std::string state = "unknown";
    std::string phase;
    int64_t start_ms = -1;
    int64_t end_ms = -1;
    std::optional<int> exit_code;
    std::map<int64_t, double> cpu_seconds;  // per pid ever seen: the most it
                                            // used (a counter never falls)
    std::optional<int64_t> rss_bytes;
    std::optional<int64_t> processes;
    int64_t last_progress_ms = -1;
    std::optional<int64_t> log_bytes, log_lines;
    std::vector<GpuProcess> gpu_processes;
    std::string stall_class;
  };
  Service &ServiceNamed(const std::string &name);

  const Identity id_;
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, Service>> services_;  // in order of appearance
  int64_t start_ms_ = -1;
  int64_t last_update_ms_ = -1;
  std::string outcome_ = "running";
  bool ended_ = false;
  nlohmann::json gpu_devices_ = nlohmann::json::array();
};

}  // namespace faultline::metrics

#endif  // FAULTLINE_WEB_METRICS_H_
