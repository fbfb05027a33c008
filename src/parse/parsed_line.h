// ParsedLine: one log line split into who wrote it and what it says.
//
// Multi-process GPU jobs interleave many processes in one stream, each line
// wearing prefixes added by the framework (vLLM's "(Worker_TP1 pid=7506) ",
// torchrun's "[rank3]:", SGLang's "[2025-05-09 15:14:59 DP0 TP3] ") and a
// logger header ("INFO 05-09 15:14:59 [core.py:239] "). The parser peels them
// off; `message` is what remains. All string_views point into the line given
// to the parser and are valid only as long as it is.
#ifndef FAULTLINE_PARSE_PARSED_LINE_H_
#define FAULTLINE_PARSE_PARSED_LINE_H_

#include <cstdint>
#include <string_view>

namespace faultline::parse {

enum class Level { kUnknown, kTrace, kDebug, kInfo, kWarning, kError, kCritical };
const char* LevelName(Level level);

// Wall-clock time as logs print it; fields the format lacks stay 0 (vLLM
// prints no year and no sub-second part). Comparable across formats through
// OrderKey() when both carry the same fields.
struct Timestamp {
  bool valid = false;
  int year = 0;  // 0: not printed
  int month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int micros = 0;
  // Microseconds since the start of a (non-leap) year: orders two stamps of
  // the same year; the year is compared separately when both have one.
  int64_t OrderKey() const;
  bool operator==(const Timestamp&) const = default;
};

struct ParsedLine {
  std::string_view text;     // the whole (cleaned) line
  std::string_view message;  // text after every prefix and header
  // Process identity as the log shows it. `process` is the demultiplexing
  // key ("Worker_TP1 pid=7506", "rank3", "TP1", "" for unprefixed lines).
  std::string_view process;
  std::string_view role;    // "Worker_TP1", "rank", "TP1", "NCCL" ...
  std::string_view parent;  // outer prefix when prefixes nest (Ray inside vLLM)
  int64_t pid = -1;
  int rank = -1;
  Level level = Level::kUnknown;
  Timestamp time;
  std::string_view source;  // "core.py:239" from the header, when printed
  std::string_view format;  // which header format matched: "vllm", "glog", ...

  bool operator==(const ParsedLine&) const = default;  // views compared by content
};

}  // namespace faultline::parse

#endif  // FAULTLINE_PARSE_PARSED_LINE_H_
