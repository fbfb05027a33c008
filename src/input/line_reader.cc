#include "input/line_reader.h"

#include <algorithm>
#include <cstring>

namespace faultline::input {

LineReader::LineReader(std::unique_ptr<ByteSource> source, LineReaderOptions options)
    : source_(std::move(source)), options_(options) {
  buf_size_ = options_.block_bytes + options_.max_line_bytes + 1;
  buf_ = std::make_unique_for_overwrite<char[]>(buf_size_);
}

bool LineReader::Fill() {
  if (eof_) return false;
  // Keep the unconsumed tail at the front of the buffer.
  if (begin_ > 0) {
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  size_t room = buf_size_ - 1 - end_;  // keep one byte for a final '\n'
  if (room == 0) return true;
  auto r = source_->Read(buf_.get() + end_, room);
  if (!r.ok()) {
    status_ = r.status();
    eof_ = true;
    return false;
  }
  if (*r == 0) {
    eof_ = true;
    return false;
  }
  end_ += *r;
  bytes_ += static_cast<int64_t>(*r);
  return true;
}

bool LineReader::NextBlock(LineBlock* block) {
  for (;;) {
    if (skipping_) {
      // Drop the rest of an over-long line, up to and including its '\n'.
      const char* nl = static_cast<const char*>(memchr(buf_.get() + begin_, '\n', end_ - begin_));
      if (nl == nullptr) {
        offset_ += static_cast<int64_t>(end_ - begin_);
        begin_ = end_;
        if (!Fill()) return false;
        continue;
      }
      size_t skip = static_cast<size_t>(nl - (buf_.get() + begin_)) + 1;
      offset_ += static_cast<int64_t>(skip);
      begin_ += skip;
      skipping_ = false;
    }
    size_t avail = end_ - begin_;
    const char* start = buf_.get() + begin_;
    // Last newline within the block-sized window.
    size_t window = std::min(avail, options_.block_bytes);
    const char* last_nl = nullptr;
    if (window > 0) last_nl = static_cast<const char*>(memrchr(start, '\n', window));
    if (last_nl == nullptr && window < avail) {
      last_nl = static_cast<const char*>(memchr(start + window, '\n', avail - window));
    }
    if (last_nl != nullptr &&
        (avail >= options_.block_bytes || eof_ || static_cast<size_t>(last_nl - start) + 1 == avail)) {
      size_t len = static_cast<size_t>(last_nl - start) + 1;
      block->data = std::string_view(start, len);
      block->first_line = next_line_;
      block->first_offset = offset_;
      int64_t n = options_.count_lines ? static_cast<int64_t>(std::count(start, start + len, '\n')) : 0;
      block->line_count = n;
      next_line_ += n;
      offset_ += static_cast<int64_t>(len);
      begin_ += len;
      return true;
    }
    if (last_nl == nullptr && avail > options_.max_line_bytes) {
      // Over-long line: hand out its head as a line of its own.
      char* head = buf_.get() + begin_;
      size_t len = options_.max_line_bytes;
      head[len] = '\n';  // the byte it replaces belongs to the skipped rest
      block->data = std::string_view(head, len + 1);
      block->first_line = next_line_++;
      block->first_offset = offset_;
      block->line_count = 1;
      offset_ += static_cast<int64_t>(len + 1);
      begin_ += len + 1;
      ++truncated_lines_;
      skipping_ = true;
      return true;
    }
    if (!Fill()) {
      // End of stream: whatever is left is a final line without '\n'.
      if (end_ > begin_) {
        buf_[end_] = '\n';
        size_t len = end_ - begin_ + 1;
        block->data = std::string_view(buf_.get() + begin_, len);
        block->first_line = next_line_;
        block->first_offset = offset_;
        int64_t n =
            options_.count_lines ? static_cast<int64_t>(std::count(block->data.begin(), block->data.end(), '\n')) : 0;
        block->line_count = n;
        next_line_ += n;
        offset_ += static_cast<int64_t>(len - 1);
        begin_ = end_ = 0;
        return true;
      }
      return false;
    }
  }
}

}  // namespace faultline::input
