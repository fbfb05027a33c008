// The /api/log endpoint's logic, apart from HTTP: a query (tail, page before
// an offset, lines after an offset, or the lines around line N) in, the
// window as JSON out, with line numbers from the sparse LineIndex when it
// reaches that far. Reads are bounded (WindowLimits), never the whole log.
#ifndef FAULTLINE_WEB_API_H_
#define FAULTLINE_WEB_API_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "util/status.h"
#include "web/line_index.h"
#include "web/log_window.h"

namespace faultline::web {

struct LogQuery {
  int64_t before = -1;  // page ending at this offset (-1: the end of the file)
  int64_t after = -1;   // lines starting at this offset (live appends)
  int64_t line = 0;     // the lines around this 1-based line number
  size_t lines = 200;   // at most this many lines (capped at 5000)
  LineLevel min_level = LineLevel::kDebug;
  std::string query;    // substring, case-insensitive
};

// kNotFound for a missing log; kInvalidArgument for `line` past the indexed
// part (the message says so; the index grows in the background).
Result<nlohmann::json> LogWindowJson(const std::string& path, LineIndex* index, const LogQuery& q);

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_API_H_
