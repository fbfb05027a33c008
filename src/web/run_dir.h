// What a dashboard knows about one run directory (runs/<time>-<name>/, as
// `faultline run` writes it, docs/pipeline.md): the services (one <name>.log
// each), their events, status samples and end from live.jsonl
// (faultline.live/1, read incrementally: only the bytes appended since the
// last Refresh), and the diagnosis (diagnosis.json). A directory holding only
// logs works too: every *.log is a service whose state is unknown.
// Not thread-safe: the server serialises calls.
#ifndef FAULTLINE_WEB_RUN_DIR_H_
#define FAULTLINE_WEB_RUN_DIR_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "web/metrics.h"

namespace faultline::web {

// "2026-11-29T09:26:47.750Z" -> milliseconds since the epoch; -1 when malformed.
int64_t ParseIsoMillis(const std::string& iso);

// A run directory, or the newest run directory inside a runs/ directory
// (one whose sub-directories hold live.jsonl); "" when `path` is neither.
std::string ResolveRunDir(const std::string& path);

struct ServiceState {
  std::string name;
  std::string log_path;
  int64_t log_bytes = 0;
  int64_t log_mtime_ms = 0;
  std::string state = "unknown";  // starting running ready completed exited died stalled timeout stopped unknown
  std::optional<int64_t> pid;
  std::vector<std::string> command;
  std::vector<int> gpus;
  int64_t started_ms = -1;
  int64_t ended_ms = -1;
  std::optional<double> ready_seconds;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  std::string phase;               // last status record's phase
  nlohmann::json last_status;      // the last status record, or null
  int64_t last_status_ms = -1;
};

struct Sample {
  int64_t time_ms = 0;
  double cpu_percent = 0;  // summed over the tree
  int64_t rss_bytes = 0;
};

struct GpuSample {
  int64_t time_ms = 0;
  nlohmann::json devices;  // [{index, memory_used_bytes, memory_total_bytes, utilization_percent}]
};

class RunDir {
 public:
  explicit RunDir(std::string dir);

  // Re-reads what changed. Returns whether anything did.
  bool Refresh();

  const std::string& dir() const { return dir_; }
  std::string name() const;
  bool has_live() const { return live_offset_ > 0; }
  bool finished() const { return finished_; }
  const std::vector<ServiceState>& services() const { return services_; }
  const ServiceState* service(const std::string& name) const;
  // The last diagnosis record of a failure (diagnosis.json, else live.jsonl); null when none.
  const nlohmann::json& diagnosis() const { return diagnosis_; }
  // Bumped whenever diagnosis() changes.
  uint64_t diagnosis_changes() const { return diagnosis_changes_; }

  // The /api/run object (docs/dashboard-api.md).
  nlohmann::json RunJson(int64_t now_ms) const;
  // The /api/samples object: per-service CPU/RSS and per-GPU history.
  nlohmann::json SamplesJson() const;
  // The run's metrics (/metrics), fed the same records.
  const metrics::RunMetrics& metrics() const { return *metrics_; }

 private:
  ServiceState& Service(const std::string& name);
  void Apply(const nlohmann::json& record);
  void ReadLive();
  void ScanLogs();
  void ReadDiagnosisFile();

  std::string dir_;
  std::unique_ptr<metrics::RunMetrics> metrics_;
  std::string run_name_;          // the pipeline's name (the "stopped" event's service)
  std::vector<ServiceState> services_;
  std::map<std::string, std::deque<Sample>> samples_;
  std::deque<GpuSample> gpu_samples_;
  nlohmann::json gpu_latest_ = nullptr;
  nlohmann::json diagnosis_ = nullptr;
  nlohmann::json live_diagnosis_ = nullptr;
  bool finished_ = false;
  int64_t first_ms_ = -1;
  int64_t end_ms_ = -1;
  int64_t live_offset_ = 0;
  int64_t diagnosis_mtime_ = -1;
  std::string live_partial_;
  bool changed_ = false;
  uint64_t diagnosis_changes_ = 0;
};

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_RUN_DIR_H_
