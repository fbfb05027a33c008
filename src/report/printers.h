// Sinks of the report model: human text and the faultline.triage/1 JSON.
// This is the only module that writes triage JSON.
#ifndef FAULTLINE_REPORT_PRINTERS_H_
#define FAULTLINE_REPORT_PRINTERS_H_

#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "report/triage_report.h"

namespace faultline::report {

struct TextOptions {
  bool color = false;
  bool explain = false;  // show the ranker's reasons and every cascade item
};

void PrintText(const TriageReport& report, const TextOptions& options, std::ostream& out);
nlohmann::json ToJson(const TriageReport& report);
// Serialises with invalid UTF-8 replaced, never throwing.
std::string DumpJson(const nlohmann::json& j, int indent = 2);

// Whether to colour: --color=always|never|auto, NO_COLOR, and isatty(fd).
bool ShouldColor(const std::string& when, int fd);

}  // namespace faultline::report

#endif  // FAULTLINE_REPORT_PRINTERS_H_
