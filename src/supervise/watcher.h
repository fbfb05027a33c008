// Watch: the loop behind `faultline watch` and `faultline wait-ready`. It
// observes processes faultline did not start — it never signals them — and
// returns how the watch ended: ready (probe answered), died (a watched pid
// exited; noticed at once through pidfd_open), stalled (no progress for
// stall_after, with the stall class), timeout, or interrupted (SIGINT/TERM).
#ifndef FAULTLINE_SUPERVISE_WATCHER_H_
#define FAULTLINE_SUPERVISE_WATCHER_H_

#include <functional>
#include <string>
#include <vector>

#include "probe/live_clock.h"
#include "probe/live_gpu.h"
#include "probe/proc_fs.h"
#include "supervise/job_end.h"
#include "supervise/monitor.h"
#include "supervise/ready_probe.h"
#include "supervise/stall_rules.h"

namespace faultline::supervise {

struct WatchOptions {
  std::string name;              // label in status lines and records
  std::vector<int64_t> pids;     // roots to watch; may be empty with a ready probe
  std::string log_path;          // "" for none
  ReadySpec ready;               // kNone: watch until death or stall
  double sample_interval = 1.0;  // seconds between samples
  double status_interval = 10;   // seconds between status callbacks; 0 = none
  double stall_after = 300;
  double timeout = 0;         // 0 = none
  bool stop_on_stall = true;  // false: keep watching after reporting
  bool stacks = true;         // py-spy dump of the Python processes on a stall, when installed
  // Called after every sample (what --metrics renders); elapsed seconds since the watch began.
  std::function<void(const Monitor&, double)> on_sample;
};

// on_status: called every status_interval with the monitor. stop_fd: a fd
// that becomes readable to interrupt (InstallStopSignals()), or -1.
JobEnd Watch(const WatchOptions& options, const StallRules& rules, probe::ProcFs* fs, probe::Clock* clock,
             probe::GpuUsageSource* gpu, int stop_fd, const std::function<void(const Monitor&, double)>& on_status);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_WATCHER_H_
