// FeatureExtractor: turns a window of live samples (oldest first) into the
// FeatureSet that stall rules test — CPU use per process over the window,
// thread states and wait-channel groups, weight files and read rates, RSS and
// cache growth, GPU memory and utilisation, and the log's idle time and last
// phase (LogPhase: triage's phase rules and the markers of rules/stall.yaml).
// Thread-safety: const methods are safe to call from several threads.
#ifndef FAULTLINE_SUPERVISE_FEATURE_EXTRACTOR_H_
#define FAULTLINE_SUPERVISE_FEATURE_EXTRACTOR_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "probe/live_sample.h"
#include "supervise/features.h"
#include "supervise/log_phase.h"
#include "supervise/stall_rules.h"

namespace re2 {
class RE2;
}

namespace faultline::supervise {

class FeatureExtractor {
 public:
  explicit FeatureExtractor(const StallRules& rules);
  ~FeatureExtractor();

  // The phase of the last tail line that marks one (LogPhase); "" if none.
  std::string PhaseOf(const std::deque<std::string>& tail) const;
  // REQUIRES: !window.empty(). now: monotonic seconds (for the log's idle time).
  FeatureSet Compute(const std::vector<const probe::LiveSample*>& window, double now) const;

  // The command line suggestions are tailored to (defaults to the root
  // process's own).
  void set_root_cmdline(std::string cmdline) { root_cmdline_ = std::move(cmdline); }
  // Whether py-spy is installed (defaults to a PATH lookup).
  void set_py_spy(bool available) { py_spy_ = available; }

 private:
  bool IsCompileWorker(const probe::ProcessSample& p) const;
  const StallRules& rules_;
  LogPhase log_phase_;
  std::vector<std::unique_ptr<re2::RE2>> compile_workers_;
  std::string root_cmdline_;
  bool py_spy_ = false;
};

// Whether an executable of that name is in PATH.
bool InPath(const std::string& program);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_FEATURE_EXTRACTOR_H_
