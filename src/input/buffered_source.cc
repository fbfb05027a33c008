#include "input/buffered_source.h"

#include <algorithm>
#include <cstring>

namespace faultline::input {

BufferedSource::BufferedSource(std::string data, std::unique_ptr<ByteSource> rest, Compression compression,
                               int64_t raw, Status deferred)
    : data_(std::move(data)),
      rest_(std::move(rest)),
      compression_(compression),
      raw_(raw),
      deferred_(std::move(deferred)) {}

Result<size_t> BufferedSource::Read(char* buf, size_t n) {
  if (pos_ < data_.size()) {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    if (pos_ == data_.size()) {  // the copy is not kept while the rest streams
      std::string().swap(data_);
      pos_ = 0;
    }
    return k;
  }
  if (rest_) return rest_->Read(buf, n);
  if (!deferred_.ok()) {
    Status s = deferred_;
    deferred_ = Status::Ok();
    return s;
  }
  return size_t{0};
}

Compression BufferedSource::compression() const { return rest_ ? rest_->compression() : compression_; }

int64_t BufferedSource::raw_bytes_read() const { return rest_ ? rest_->raw_bytes_read() : raw_; }

void ReadUpTo(ByteSource* source, size_t bytes, ReadAhead* ahead) {
  char chunk[16 << 10];
  while (!ahead->eof && ahead->data.size() < bytes) {
    auto n = source->Read(chunk, sizeof(chunk));
    if (!n.ok()) {
      ahead->deferred = n.status();  // a damaged tail: the lines before it are still the log
      ahead->eof = true;
      break;
    }
    if (*n == 0) {
      ahead->eof = true;
      break;
    }
    ahead->data.append(chunk, *n);
  }
}

std::unique_ptr<ByteSource> Rejoined(ReadAhead ahead, std::unique_ptr<ByteSource> source) {
  const Compression compression = source->compression();
  if (ahead.eof) {
    return std::make_unique<BufferedSource>(std::move(ahead.data), nullptr, compression, source->raw_bytes_read(),
                                            std::move(ahead.deferred));
  }
  return std::make_unique<BufferedSource>(std::move(ahead.data), std::move(source), compression, 0, Status::Ok());
}

std::unique_ptr<ByteSource> Replaced(std::string data, ReadAhead ahead, const ByteSource& source) {
  return std::make_unique<BufferedSource>(std::move(data), nullptr, source.compression(), source.raw_bytes_read(),
                                          std::move(ahead.deferred));
}

}  // namespace faultline::input
