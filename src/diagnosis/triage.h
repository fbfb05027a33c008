// Triage: logs in, a TriageReport out. This is the one entry point the CLI,
// the supervisor (run / watch / wait-ready) and the dashboard call.
#ifndef FAULTLINE_DIAGNOSIS_TRIAGE_H_
#define FAULTLINE_DIAGNOSIS_TRIAGE_H_

#include <string>
#include <vector>

#include "report/triage_report.h"
#include "util/status.h"

namespace faultline::diagnosis {

struct TriageOptions {
  // Files, directories (every log inside) or "-" for stdin.
  std::vector<std::string> inputs;
  // Rule files to load in addition to (or, with no_builtin_rules, instead of)
  // the rules embedded in the binary.
  std::vector<std::string> rule_files;
  bool no_builtin_rules = false;
  // How many cascade items to keep in the report (the total is still counted).
  size_t max_cascade = 50;
  // Mine line templates over the whole log: reported lines get their
  // template's id and count, and the report lists what the log is made of.
  // Costs a full parse of every line, so it is off by default.
  bool templates = false;
  size_t max_templates_listed = 12;
};

// Reads every input once, streaming, and diagnoses it. Returns a non-ok Status
// only when nothing could be read (missing file, empty directory, binary
// input); damaged but readable input gives a report with warnings.
Result<report::TriageReport> Triage(const TriageOptions& options);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_TRIAGE_H_
