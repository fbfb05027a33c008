# Generates a C++ source holding every rules/*.yaml as a raw string.
# Usage: cmake -DRULES_DIR=... -DOUTPUT=... -P embed_rules.cmake
file(GLOB rule_files ${RULES_DIR}/*.yaml)
list(SORT rule_files)
set(body "")
foreach(f ${rule_files})
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  string(APPEND body "    {\"${name}\", R\"FLRULES(${text})FLRULES\"},\n")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from rules/*.yaml by embed_rules.cmake. Do not edit.
#include \"rules/embedded_rules.h\"
namespace faultline::rules {
const std::vector<std::pair<std::string_view, std::string_view>>& EmbeddedRuleFiles() {
  static const std::vector<std::pair<std::string_view, std::string_view>> files = {
${body}  };
  return files;
}
}  // namespace faultline::rules
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
