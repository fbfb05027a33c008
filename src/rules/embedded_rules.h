// Rule files embedded at build time (generated embedded_rules.cc).
#ifndef FAULTLINE_RULES_EMBEDDED_RULES_H_
#define FAULTLINE_RULES_EMBEDDED_RULES_H_

#include <string_view>
#include <utility>
#include <vector>

namespace faultline::rules {

// (file name, YAML text) for every rules/*.yaml, sorted by name.
const std::vector<std::pair<std::string_view, std::string_view>>& EmbeddedRuleFiles();

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_EMBEDDED_RULES_H_
