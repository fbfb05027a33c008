// ProgressTracker: decides whether a watched job is getting anywhere. Each
// sample is compared with the state at the last progress; progress is any
// counter moving by its threshold (rules/stall.yaml, progress:): new log
// output, bytes read from storage or weight files, bytes written (storage
// writes or write() calls: checkpoints), RSS, GPU memory, GPU utilisation
// moving (GPU work; a pinned value is a stuck kernel), compile caches, a
// process starting or exiting. CPU time never counts: a busy loop
// is not progress. Read bytes are summed over per-process increases, so a
// process exiting does not look like negative progress.
#ifndef FAULTLINE_SUPERVISE_PROGRESS_H_
#define FAULTLINE_SUPERVISE_PROGRESS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "probe/live_sample.h"
#include "supervise/stall_rules.h"

namespace faultline::supervise {

class ProgressTracker {
 public:
  explicit ProgressTracker(ProgressThresholds thresholds) : t_(thresholds) {}
  // Feeds the next sample; returns what progressed (empty: nothing did).
  // The first sample always counts as progress ("started").
  std::vector<std::string> Update(const probe::LiveSample& s);
  double last_progress_time() const { return last_progress_time_; }
  const std::vector<std::string>& last_reasons() const { return last_reasons_; }

 private:
  struct Totals {
    int64_t log_bytes = 0;
    int64_t read_bytes = 0;   // accumulated increases
    int64_t write_bytes = 0;  // accumulated increases
    int gpu_util = -1;        // highest utilisation of a device, -1 unknown
    int64_t rss = 0;
    int64_t gpu = 0;
    int64_t cache = 0;
  };
  Totals Measure(const probe::LiveSample& s);

  ProgressThresholds t_;
  bool started_ = false;
  double last_progress_time_ = 0;
  std::vector<std::string> last_reasons_;
  Totals baseline_;
  int64_t read_accum_ = 0;
  int64_t write_accum_ = 0;
  struct Counters {
    uint64_t read = 0;  // io.read_bytes
    int64_t pos = 0;    // weight-file read offsets, summed
    uint64_t write_bytes = 0, wchar = 0;
  };
  std::map<std::pair<int64_t, uint64_t>, Counters> last_counters_;
  std::set<std::pair<int64_t, uint64_t>> members_;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_PROGRESS_H_
