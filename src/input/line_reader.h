// LineReader: splits a ByteSource into blocks of whole lines.
//
// A block is a run of complete lines, each ending in '\n' (the last line of
// the stream gets one added), so later stages can scan a whole block at once
// (one Hyperscan call for many lines) and still cut it into lines with
// memchr. Memory is bounded: the buffer grows only to fit the current line,
// up to max_line_bytes; a longer line is cut there (the rest is skipped and
// counted), so a 200 MB line costs max_line_bytes, not 200 MB.
//
// Not thread-safe. A block is valid until the next call to NextBlock().
#ifndef FAULTLINE_INPUT_LINE_READER_H_
#define FAULTLINE_INPUT_LINE_READER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "input/byte_source.h"
#include "util/status.h"

namespace faultline::input {

struct LineBlock {
  std::string_view data;     // whole lines, each ending in '\n'
  int64_t first_line = 1;    // 1-based number of the first line in the block
  int64_t first_offset = 0;  // byte offset of the block in the decoded stream
  int64_t line_count = 0;
};

struct LineReaderOptions {
  size_t block_bytes = 1 << 20;       // target size of a block
  size_t max_line_bytes = 256 << 10;  // longer lines are cut here
  // Counting newlines is a second pass over every block; a consumer that
  // walks the lines anyway turns it off and counts them itself (then
  // first_line, line_count and lines() are not maintained).
  bool count_lines = true;
};

class LineReader {
 public:
  LineReader(std::unique_ptr<ByteSource> source, LineReaderOptions options = {});

  // Fills *block with the next run of lines. Returns false at the end of the
  // stream. A read error ends the stream; it is kept in status().
  bool NextBlock(LineBlock* block);

  // Non-ok when the stream ended early (damaged archive, read error).
  const Status& status() const { return status_; }
  int64_t truncated_lines() const { return truncated_lines_; }
  int64_t bytes() const { return bytes_; }
  int64_t lines() const { return next_line_ - 1; }
  const ByteSource& source() const { return *source_; }

 private:
  bool Fill();  // reads more; false at end of stream

  std::unique_ptr<ByteSource> source_;
  LineReaderOptions options_;
  // Not zeroed (read() fills it): a file smaller than a block touches only
  // the pages it fills.
  std::unique_ptr<char[]> buf_;
  size_t buf_size_ = 0;
  size_t begin_ = 0;  // start of unconsumed bytes in buf_
  size_t end_ = 0;    // end of valid bytes in buf_
  bool eof_ = false;
  bool skipping_ = false;  // inside the cut-off rest of an over-long line
  int64_t next_line_ = 1;
  int64_t offset_ = 0;
  int64_t bytes_ = 0;
  int64_t truncated_lines_ = 0;
  Status status_;
};

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_LINE_READER_H_
