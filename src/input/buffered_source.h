// Whole-input reshaping shares two pieces: reading a source's head into
// memory, and serving bytes already read before (or instead of) the rest.
#ifndef FAULTLINE_INPUT_BUFFERED_SOURCE_H_
#define FAULTLINE_INPUT_BUFFERED_SOURCE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "input/byte_source.h"
#include "util/status.h"

namespace faultline::input {

// Serves `data`, then whatever `rest` holds (nothing when null), then
// `deferred` (the status a damaged stream ended with).
class BufferedSource : public ByteSource {
 public:
  BufferedSource(std::string data, std::unique_ptr<ByteSource> rest, Compression compression, int64_t raw,
                 Status deferred);
  Result<size_t> Read(char* buf, size_t n) override;
  Compression compression() const override;
  int64_t raw_bytes_read() const override;

 private:
  std::string data_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
  Compression compression_;
  int64_t raw_;
  Status deferred_;
};

// What ReadUpTo read: the bytes, whether the stream ended, and the status a
// damaged stream stopped with (its bytes before the damage are in `data`).
struct ReadAhead {
  std::string data;
  bool eof = false;
  Status deferred;
};

// Appends to `ahead` until it holds at least `bytes` or the stream ends.
void ReadUpTo(ByteSource* source, size_t bytes, ReadAhead* ahead);

// The source that yields `ahead`'s bytes and then the rest of `source`, as
// `source` alone would have.
std::unique_ptr<ByteSource> Rejoined(ReadAhead ahead, std::unique_ptr<ByteSource> source);

// A source yielding `data` instead of what was read from `source` (which
// has ended, or is dropped), then the status `ahead` ended with.
std::unique_ptr<ByteSource> Replaced(std::string data, ReadAhead ahead, const ByteSource& source);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_BUFFERED_SOURCE_H_
