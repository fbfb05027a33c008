// LogPhase: the phase a live log's tail shows, read with the same phase
// knowledge as post-mortem triage (the `kind: phase` rules of rules/*.yaml,
// generic progress counters included) and the extra live markers of
// rules/stall.yaml, so `run`/`watch` name the phase that `triage` would.
// Thread-safety: const methods are safe to call from several threads.
#ifndef FAULTLINE_SUPERVISE_LOG_PHASE_H_
#define FAULTLINE_SUPERVISE_LOG_PHASE_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "rules/rule.h"
#include "supervise/stall_rules.h"

namespace re2 {
class RE2;
}

namespace faultline::supervise {

class LogPhase {
 public:
  // phase_rules: triage rules; only those of kind phase are kept.
  LogPhase(const std::vector<rules::Rule>& phase_rules, const std::vector<PhaseMarker>& markers);
  ~LogPhase();

  // The phase of the last tail line that marks one; "" if none. A progress
  // rule (a generic counter such as "step 3 loss ...") marks its phase only
  // when the tail shows the counter at two different values.
  std::string PhaseOf(const std::deque<std::string>& tail) const;

  // The built-in triage rules' phase markers (loaded once per process).
  static const std::vector<rules::Rule>& BuiltinPhaseRules();

 private:
  struct Marker {
    std::string phase;
    bool progress = false;
    std::unique_ptr<re2::RE2> re;
  };
  bool CounterRises(const Marker& m, const std::deque<std::string>& tail) const;
  std::vector<Marker> markers_;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_LOG_PHASE_H_
