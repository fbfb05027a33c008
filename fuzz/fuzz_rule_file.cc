// A rule file (YAML) as --rules reads it: parsed, validated, samples checked.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rules/rule_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rules = faultline::rules::ParseRuleFile(text, "fuzz.yaml");
  if (rules.ok()) (void)faultline::rules::CheckSamples(*rules);
  (void)faultline::rules::IsTriageRuleFile(text);
  return 0;
}
