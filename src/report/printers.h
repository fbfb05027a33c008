// Sinks of the report model: human text and the faultline.triage/1 JSON.
// This is the only module that writes triage JSON.
#ifndef FAULTLINE_REPORT_PRINTERS_H_
#define FAULTLINE_REPORT_PRINTERS_H_

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>

#include "report/triage_report.h"

namespace faultline::report {

struct TextOptions {
  bool color = false;
  bool explain = false;     // show the ranker's reasons and every cascade item
  size_t width = 100;       // columns to wrap prose to (TerminalWidth)
  bool wrap_lines = false;  // wrap quoted log lines too (on a terminal; piped, they stay whole for grep)
};

void PrintText(const TriageReport& report, const TextOptions& options, std::ostream& out);
nlohmann::json ToJson(const TriageReport& report);
// Serialises with invalid UTF-8 replaced, never throwing.
std::string DumpJson(const nlohmann::json& j, int indent = 2);

// The root cause as GitHub Actions workflow commands: "::error file=F,line=N,
// title=...::message" (a stall is a ::warning, a healthy log a ::notice), so
// a failed CI job shows the diagnosis on the log line.
void PrintGithub(const TriageReport& report, std::ostream& out);

// How both printers name the cascade: "later error(s)", or "other error(s)"
// when some of them were logged before the root cause.
std::string CascadeNoun(const TriageReport& report);

// Whether to colour: --color=always|never|auto; for auto, NO_COLOR (set and
// non-empty) never, FORCE_COLOR or CLICOLOR_FORCE (set, not "0") always,
// else isatty(fd) and TERM is not dumb.
bool ShouldColor(const std::string& when, int fd);

// Columns to wrap to: the terminal's (fd a TTY), else $COLUMNS, else 100;
// never below 40.
size_t TerminalWidth(int fd);

}  // namespace faultline::report

#endif  // FAULTLINE_REPORT_PRINTERS_H_
