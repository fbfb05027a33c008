// Monitor: watches one job — its process trees, its log, the compile caches
// and the GPUs — one Tick() at a time, keeps a bounded window of recent
// samples, tracks progress, and on request names the stall.
//
// The OS is reached only through the ProcFs, Clock and GpuUsageSource given,
// so tests drive it with fakes. Monitor never signals a process.
// Thread-safety: not thread-safe.
#ifndef FAULTLINE_SUPERVISE_MONITOR_H_
#define FAULTLINE_SUPERVISE_MONITOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/live_cache.h"
#include "probe/live_clock.h"
#include "probe/live_gpu.h"
#include "probe/live_log.h"
#include "probe/live_sample.h"
#include "probe/proc_fs.h"
#include "probe/proc_tree.h"
#include "supervise/feature_extractor.h"
#include "supervise/progress.h"
#include "supervise/stall_classifier.h"
#include "supervise/stall_rules.h"

namespace faultline::supervise {

struct MonitorOptions {
  std::vector<int64_t> roots;
  std::string log_path;  // "" for none
  double stall_after_seconds = 300;
  std::string root_cmdline;  // what suggestions are tailored to; "" = the root's own
  bool watch_caches = true;
};

class Monitor {
 public:
  Monitor(const StallRules& rules, probe::ProcFs* fs, probe::Clock* clock, probe::GpuUsageSource* gpu,
          MonitorOptions options);

  void AddRoot(int64_t pid) { sampler_.AddRoot(pid); }
  // Samples everything once. on_line sees every new complete log line.
  // detail: read every process in detail now (before classifying a stall);
  // otherwise the sampler reads details every few samples.
  const probe::LiveSample& Tick(const std::function<void(std::string_view)>& on_line = nullptr, bool detail = false);
  // Reads new log output only (between ticks).
  void PollLog(const std::function<void(std::string_view)>& on_line);

  bool has_sample() const { return !window_.empty(); }
  const probe::LiveSample& last() const { return window_.back(); }
  // Seconds without progress, as of the last tick.
  double SecondsSinceProgress() const;
  bool Stalled() const { return has_sample() && SecondsSinceProgress() >= options_.stall_after_seconds; }
  const std::vector<std::string>& last_progress() const { return progress_.last_reasons(); }
  // Features over the recent window (at most rules.window_seconds), or over
  // the last `seconds` when given.
  FeatureSet Features(double seconds = -1) const;
  // stacks: the Python stacks captured before classifying (their phase names
  // the class), or null.
  StallDiagnosis DiagnoseStall(const StackReport* stacks = nullptr) const;
  // The log's last phase ("" when none).
  std::string Phase() const;
  // Processes of the tree now (pid, start time), dead ones excluded.
  std::vector<std::pair<int64_t, uint64_t>> Members() const { return sampler_.Members(); }
  // CPU use per pid between the last two samples, in percent of one core.
  std::map<int64_t, double> CpuPercent() const;
  const MonitorOptions& options() const { return options_; }
  const StallRules& rules() const { return rules_; }

 private:
  const StallRules& rules_;
  probe::Clock* clock_;
  probe::GpuUsageSource* gpu_;
  MonitorOptions options_;
  probe::ProcessTreeSampler sampler_;
  std::unique_ptr<probe::LogFollower> log_;
  std::unique_ptr<probe::CacheDirWatcher> caches_;
  FeatureExtractor extractor_;
  ProgressTracker progress_;
  std::deque<probe::LiveSample> window_;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_MONITOR_H_
