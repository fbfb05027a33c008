// Loads wrapper descriptions (rules/wrappers.yaml, or a --rules file with a
// top-level wrappers: list) into parse::WrapperSpec values; an error names
// file:line and what to change. docs/rules.md describes the format.
#ifndef FAULTLINE_RULES_WRAPPER_LOADER_H_
#define FAULTLINE_RULES_WRAPPER_LOADER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parse/wrapper.h"
#include "util/status.h"

namespace faultline::rules {

// Parses the wrappers: list of one YAML file (an empty list when it has none).
Result<std::vector<parse::WrapperSpec>> ParseWrapperFile(std::string_view yaml_text, const std::string& name);

// The wrappers of the rule files compiled into the binary plus those of
// `extra_files` (--rules), compiled and sample-checked.
Result<std::unique_ptr<parse::WrapperSet>> LoadWrappers(const std::vector<std::string>& extra_files);

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_WRAPPER_LOADER_H_
