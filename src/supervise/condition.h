// Condition: the small predicate language of rules/stall.yaml — leaves such
// as "max_cpu_percent >= 80" or "root_cmdline !contains --enforce-eager",
// grouped with all: / any:. Parsed once at load (errors name the rule), then
// evaluated against a FeatureSet.
#ifndef FAULTLINE_SUPERVISE_CONDITION_H_
#define FAULTLINE_SUPERVISE_CONDITION_H_

#include <string>
#include <vector>

#include "supervise/features.h"
#include "util/status.h"

namespace faultline::supervise {

struct Condition {
  enum class Kind { kAll, kAny, kLeaf };
  Kind kind = Kind::kAll;  // an empty kAll is always true
  std::vector<Condition> children;
  // Leaf:
  std::string feature;
  std::string op;  // >= <= > < == != contains !contains matches
  std::string text_value;
  double number_value = 0;
  bool numeric_value = false;
  std::string source;  // the leaf as written
};

// Parses one leaf. Values may carry units: KiB MiB GiB (bytes), s (seconds),
// % (a plain number); quotes around a word are removed.
Result<Condition> ParseLeaf(const std::string& text);

// Whether the condition holds. Leaves that hold are appended to *matched
// (when given) with their actual values: "max_cpu_percent >= 80 (100)".
bool Evaluate(const Condition& c, const FeatureSet& features, std::vector<std::string>* matched = nullptr);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_CONDITION_H_
