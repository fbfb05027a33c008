// Durations as users write them on the command line and in pipeline.yaml:
// "30m", "5m", "2.5s", "500ms", "1h30m", or a bare number of seconds.
#ifndef FAULTLINE_SUPERVISE_DURATION_H_
#define FAULTLINE_SUPERVISE_DURATION_H_

#include <string>

#include "util/status.h"

namespace faultline::supervise {

inline constexpr double kMaxDurationSeconds = 365.0 * 86400;

// Seconds; an error for non-numbers, negatives, infinities (1e400s) and
// more than kMaxDurationSeconds.
Result<double> ParseDuration(const std::string& text);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_DURATION_H_
