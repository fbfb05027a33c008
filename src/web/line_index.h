// A sparse line index of one log file: the byte offset of every 1024th line,
// built incrementally by streaming the file in 1 MiB preads (never holding
// it), and extended as the file grows. Turns "line 41" (what a diagnosis
// names) into a byte offset, and an offset into a line number, reading at
// most one stride of lines. Reset when the file shrinks (truncation).
#ifndef FAULTLINE_WEB_LINE_INDEX_H_
#define FAULTLINE_WEB_LINE_INDEX_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::web {

class LineIndex {
 public:
  explicit LineIndex(std::string path, int64_t stride = 1024) : path_(std::move(path)), stride_(stride) {}

  // Indexes what was appended since the last call, at most `max_bytes` of it
  // (so one call stays short; call again to go on). Returns the bytes indexed.
  Result<int64_t> Update(int64_t max_bytes = int64_t{1} << 62);

  // The byte offset where 1-based line `line` starts, if indexed that far.
  std::optional<int64_t> OffsetOfLine(int64_t line) const;
  // The 1-based number of the line starting at `offset`, if indexed that far.
  std::optional<int64_t> LineAt(int64_t offset) const;

  int64_t indexed_bytes() const;
  int64_t complete_lines() const;  // newline-terminated lines in the indexed part
  const std::string& path() const { return path_; }

 private:
  // Reads from `from` counting newlines until `count` of them are passed
  // (returns the offset after the last) or `until` is reached.
  Result<int64_t> SkipLines(int64_t from, int64_t count) const;
  Result<int64_t> CountLines(int64_t from, int64_t until) const;

  std::string path_;
  int64_t stride_;
  mutable std::mutex mu_;
  std::vector<int64_t> checkpoints_;  // [k] = offset of line k*stride_+1
  int64_t indexed_ = 0;               // bytes indexed
  int64_t lines_ = 0;                 // newlines in [0, indexed_)
};

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_LINE_INDEX_H_
