// Reads a window of a log file — its tail, the lines after an offset, or the
// matches of a search going backwards — with pread, never the whole file: a
// 1 GB log costs what the window costs. Every call opens, reads a bounded
// number of bytes, and closes, so a growing or rotated log is always read as
// it is now.
#ifndef FAULTLINE_WEB_LOG_WINDOW_H_
#define FAULTLINE_WEB_LOG_WINDOW_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace faultline::web {

// Severity of a line, guessed from the level words logs print (vLLM/Python
// "ERROR", glog "E0509", "Traceback", "...Error:"). Ordered: a filter keeps
// lines at or above a level.
enum class LineLevel { kDebug = 0, kOther = 1, kInfo = 2, kWarning = 3, kError = 4 };
LineLevel ClassifyLine(std::string_view text);
const char* LineLevelName(LineLevel level);  // "debug", "other", "info", "warning", "error"
// "all"/"" -> kDebug, "info", "warning", "error"; false for anything else.
bool ParseLineLevel(std::string_view name, LineLevel* level);

struct LogLine {
  int64_t offset = 0;  // byte offset of the line's first byte
  std::string text;    // without the newline; cut at kMaxLineBytes
  LineLevel level = LineLevel::kOther;
};

struct LogWindow {
  std::vector<LogLine> lines;  // in file order
  int64_t start = 0;           // offset of the first line returned (or where reading stopped)
  int64_t end = 0;             // offset just past the last byte looked at
  int64_t size = 0;            // file size when read
  bool reached_start = false;  // nothing earlier left (backward reads)
  bool partial_last = false;   // the last line returned has no newline yet (backward reads)
};

inline constexpr size_t kMaxLineBytes = 4096;

struct WindowLimits {
  size_t max_lines = 200;
  int64_t max_bytes = 4 << 20;  // bytes read at most
  LineLevel min_level = LineLevel::kDebug;
  std::string query;  // case-insensitive substring; "" = every line
};

// The last lines before `end` (-1 = end of file) that pass the filters.
// `reached_start` says whether the scan got to offset 0; `start` is where it
// stopped, to be passed as `end` for the page before.
Result<LogWindow> ReadBackward(const std::string& path, int64_t end, const WindowLimits& limits);
// The lines starting at `start` (which should be a line start). A last line
// without a newline is returned only when `include_partial`.
Result<LogWindow> ReadForward(const std::string& path, int64_t start, const WindowLimits& limits,
                              bool include_partial = true);

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_LOG_WINDOW_H_
