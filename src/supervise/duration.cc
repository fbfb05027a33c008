#include "supervise/duration.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace faultline::supervise {

Result<double> ParseDuration(const std::string& text) {
  const char* p = text.c_str();
  double total = 0;
  bool any = false;
  while (*p == ' ') ++p;
  while (*p != 0) {
    char* end = nullptr;
    double v = std::strtod(p, &end);
    if (end == p || v < 0)
      return Status::InvalidArgument(fmt::format("'{}' is not a duration (e.g. 30m, 5m, 2s, 500ms)", text));
    p = end;
    double scale = 1;
    if (p[0] == 'm' && p[1] == 's') {
      scale = 0.001;
      p += 2;
    } else if (*p == 'h') {
      scale = 3600;
      ++p;
    } else if (*p == 'm') {
      scale = 60;
      ++p;
    } else if (*p == 's') {
      ++p;
    } else if (*p != 0) {
      return Status::InvalidArgument(fmt::format("'{}' is not a duration (e.g. 30m, 5m, 2s, 500ms)", text));
    }
    total += v * scale;
    any = true;
  }
  if (!any) return Status::InvalidArgument("empty duration");
  // 1e400s is infinite, nan is no number; a year is longer than any job waits.
  if (!std::isfinite(total) || total > kMaxDurationSeconds) {
    return Status::InvalidArgument(fmt::format("'{}' is out of range (at most 365 days)", text));
  }
  return total;
}

}  // namespace faultline::supervise
