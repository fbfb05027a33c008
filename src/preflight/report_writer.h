// The one place that turns a PreflightReport into output: human text and the
// faultline.preflight/1 JSON document (docs/preflight.schema.json).
#ifndef FAULTLINE_PREFLIGHT_REPORT_WRITER_H_
#define FAULTLINE_PREFLIGHT_REPORT_WRITER_H_

#include <string>

#include "preflight/report.h"

namespace faultline::preflight {

inline constexpr const char* kPreflightSchemaId = "faultline.preflight/1";

std::string WriteJson(const PreflightReport& report);
std::string WriteText(const PreflightReport& report);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_REPORT_WRITER_H_
