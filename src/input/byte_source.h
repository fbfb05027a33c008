// ByteSource: a stream of bytes from a log file, decompressed when needed.
//
// The compression is detected from the first bytes (gzip 1f 8b, zstd
// 28 b5 2f fd), not from the file name, so a renamed or piped archive still
// reads. Sources are read with read(2) in chunks, never mmapped: logs may
// grow or be truncated while we read them.
#ifndef FAULTLINE_INPUT_BYTE_SOURCE_H_
#define FAULTLINE_INPUT_BYTE_SOURCE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "util/status.h"

namespace faultline::input {

enum class Compression { kNone, kGzip, kZstd };
const char* CompressionName(Compression c);  // "plain", "gzip", "zstd"

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes into buf. Returns 0 at the end of the stream. A
  // damaged stream (truncated gzip, corrupt zstd frame) returns the bytes
  // decoded so far and then a DataLoss status.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  virtual Compression compression() const = 0;
  // Compressed bytes consumed from the underlying file so far.
  virtual int64_t raw_bytes_read() const = 0;
};

// Opens path ("-" is standard input) and wraps it in the right decoder.
Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);

// Wraps an already open file descriptor (owned: closed by the source).
Result<std::unique_ptr<ByteSource>> ByteSourceFromFd(int fd, const std::string& name);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_BYTE_SOURCE_H_
