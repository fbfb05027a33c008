// Durations as users write them on the command line and in pipeline.yaml:
// "30m", "5m", "2.5s", "500ms", "1h30m", or a bare number of seconds.
#ifndef FAULTLINE_SUPERVISE_DURATION_H_
#define FAULTLINE_SUPERVISE_DURATION_H_

#include <string>

#include "util/status.h"

namespace faultline::supervise {

Result<double> ParseDuration(const std::string& text);  // seconds

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_DURATION_H_
