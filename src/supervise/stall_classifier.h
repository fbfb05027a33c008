// Classify: names a stall from the features of the watched tree by trying the
// classes of rules/stall.yaml in order; the first whose condition holds wins.
// The diagnosis carries the class, its explanation and evidence filled in
// with measured values, the conditions that matched (why this class), and
// the suggestions whose own conditions hold.
#ifndef FAULTLINE_SUPERVISE_STALL_CLASSIFIER_H_
#define FAULTLINE_SUPERVISE_STALL_CLASSIFIER_H_

#include <optional>
#include <string>
#include <vector>

#include "supervise/features.h"
#include "supervise/stacks.h"
#include "supervise/stall_rules.h"

namespace faultline::supervise {

struct StallDiagnosis {
  std::string class_id;  // "busy-spin", "weight-loading", ..., "unknown"
  std::string title;
  std::string explanation;
  std::vector<std::string> evidence;
  std::vector<std::string> suggestions;
  std::vector<std::string> matched;  // conditions that held, with values
  std::string last_phase;            // the log's, "unknown" when none
  double stalled_for_seconds = 0;
  std::optional<StackReport> stacks;  // Python stacks captured before anything was stopped
};

StallDiagnosis Classify(const StallRules& rules, const FeatureSet& features);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_STALL_CLASSIFIER_H_
