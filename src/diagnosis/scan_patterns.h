// The pattern list every log scan uses: the rules' patterns plus the
// structural patterns of events/, each structural id encoding its bit.
// Shared by the scanner and by the build-time precompiler so that both
// compile exactly the same list.
#ifndef FAULTLINE_DIAGNOSIS_SCAN_PATTERNS_H_
#define FAULTLINE_DIAGNOSIS_SCAN_PATTERNS_H_

#include <string>
#include <utility>
#include <vector>

#include "events/structure.h"
#include "rules/rule_set.h"

namespace faultline::diagnosis {

inline std::vector<std::pair<unsigned, std::string>> StructuralScanPatterns() {
  std::vector<std::pair<unsigned, std::string>> out;
  for (const auto& [bit, pattern] : events::StructuralPatterns()) {
    out.emplace_back(rules::kStructuralBase + static_cast<unsigned>(__builtin_ctz(bit)), pattern);
  }
  return out;
}

// The built-in rules' database, compiled at build time (precompiled_rules.cc,
// written by precompile_rules_main.cc).
const rules::PrecompiledDatabase& PrecompiledBuiltinDatabase();
// The same file registers the serialised built-in rules before main
// (rules::RegisterBuiltinRules); true once it has.
bool BuiltinRulesRegistered();

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_SCAN_PATTERNS_H_
