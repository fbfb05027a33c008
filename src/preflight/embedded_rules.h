// The preflight rule files (rules/gpus.yaml, rules/preflight_*.yaml), built
// into the binary at build time so that faultline runs from any directory.
#ifndef FAULTLINE_PREFLIGHT_EMBEDDED_RULES_H_
#define FAULTLINE_PREFLIGHT_EMBEDDED_RULES_H_

#include <string_view>

namespace faultline::preflight {

std::string_view EmbeddedGpuCatalog();   // rules/gpus.yaml
std::string_view EmbeddedCheckTexts();   // rules/preflight_checks.yaml
std::string_view EmbeddedFlagTables();   // rules/preflight_flags.yaml
std::string_view EmbeddedMemoryModel();  // rules/preflight_memory.yaml

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_EMBEDDED_RULES_H_
