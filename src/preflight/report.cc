#include "preflight/report.h"

namespace faultline::preflight {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kOk:
      return "ok";
    case Severity::kWarning:
      return "warning";
    case Severity::kBlocking:
      return "blocking";
  }
  return "?";
}

bool PreflightReport::blocking() const {
  for (const Finding& f : findings) {
    if (f.severity == Severity::kBlocking) return true;
  }
  return false;
}

}  // namespace faultline::preflight
