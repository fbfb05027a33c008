#include "input/newest_first.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace faultline::input {
namespace {

bool Digit(char c) { return c >= '0' && c <= '9'; }

bool DigitsAt(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (!Digit(s[i])) return false;
  }
  return true;
}

// The line's clock as a key that sorts as time does, among keys of one kind
// (the kind says which date, if any, came with the clock). Empty: no clock.
std::string TimeKey(std::string_view line) {
  constexpr size_t kLook = 96;
  std::string_view s = line.substr(0, std::min(line.size(), kLook + 8));
  for (size_t i = 0; i + 8 <= s.size() && i < kLook; ++i) {
    if ((i > 0 && Digit(s[i - 1])) || !DigitsAt(s, i, 2) || s[i + 2] != ':' || !DigitsAt(s, i + 3, 2) ||
        s[i + 5] != ':' || !DigitsAt(s, i + 6, 2)) {
      continue;
    }
    std::string key;
    auto date_sep = [](char c) { return c == '-' || c == '/'; };
    if (i >= 11 && (s[i - 1] == 'T' || s[i - 1] == ' ') && DigitsAt(s, i - 11, 4) && date_sep(s[i - 7]) &&
        DigitsAt(s, i - 6, 2) && date_sep(s[i - 4]) && DigitsAt(s, i - 3, 2)) {
      key = "D";
      key.append(s.substr(i - 11, 4)).append(s.substr(i - 6, 2)).append(s.substr(i - 3, 2));
    } else if (i >= 6 && (s[i - 1] == ' ') && DigitsAt(s, i - 6, 2) && date_sep(s[i - 4]) && DigitsAt(s, i - 3, 2) &&
               (i == 6 || !Digit(s[i - 7]))) {
      key = "M";
      key.append(s.substr(i - 6, 2)).append(s.substr(i - 3, 2));
    } else {
      key = "C";
    }
    key.append(s.substr(i, 2)).append(s.substr(i + 3, 2)).append(s.substr(i + 6, 2));
    std::string fraction;
    size_t f = i + 8;
    if (f < line.size() && (line[f] == '.' || line[f] == ',')) {
      for (++f; f < line.size() && Digit(line[f]) && fraction.size() < 9; ++f) fraction += line[f];
    }
    fraction.resize(9, '0');
    return key + fraction;
  }
  return {};
}

// Serves `data`, then whatever `rest` holds (nothing when null), then `deferred`.
class BufferedSource : public ByteSource {
 public:
  BufferedSource(std::string data, std::unique_ptr<ByteSource> rest, Compression compression, int64_t raw,
                 Status deferred)
      : data_(std::move(data)),
        rest_(std::move(rest)),
        compression_(compression),
        raw_(raw),
        deferred_(std::move(deferred)) {}

  Result<size_t> Read(char* buf, size_t n) override {
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
  Compression compression() const override { return rest_ ? rest_->compression() : compression_; }
  int64_t raw_bytes_read() const override { return rest_ ? rest_->raw_bytes_read() : raw_; }

 private:
  std::string data_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
  Compression compression_;
  int64_t raw_;
  Status deferred_;
};

std::string LinesReversed(const std::string& data) {
  std::vector<std::string_view> lines;
  std::string_view all(data);
  size_t at = 0;
  while (at < all.size()) {
    size_t nl = all.find('\n', at);
    if (nl == std::string_view::npos) nl = all.size();
    lines.push_back(all.substr(at, nl - at));
    at = nl + 1;
  }
  std::string out;
  out.reserve(data.size() + 1);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) out.append(*it).push_back('\n');
  return out;
}

}  // namespace

bool LooksNewestFirst(std::string_view head) {
  constexpr int kLines = 200;
  int newer_first = 0, older_first = 0, lines = 0;
  std::string previous;
  size_t at = 0;
  while (at < head.size() && lines < kLines) {
    size_t nl = head.find('\n', at);
    if (nl == std::string_view::npos) break;  // a cut line's clock may be cut too
    std::string key = TimeKey(head.substr(at, nl - at));
    at = nl + 1;
    ++lines;
    if (key.empty()) continue;
    if (!previous.empty() && previous[0] == key[0] && previous != key) {
      (key < previous ? newer_first : older_first) += 1;
    }
    previous = std::move(key);
  }
  return newer_first >= 8 && newer_first >= 9 * older_first;
}

Result<std::unique_ptr<ByteSource>> OldestFirst(std::unique_ptr<ByteSource> source, size_t max_bytes,
                                                NewestFirst* how) {
  *how = NewestFirst{};
  constexpr size_t kHead = 16 << 10;
  std::string data;
  char chunk[16 << 10];
  bool eof = false;
  // A damaged stream (a truncated gzip) still yields the lines before the
  // damage, then its status, as the source itself would.
  Status deferred;
  while (data.size() < kHead) {
    auto n = source->Read(chunk, sizeof(chunk));
    if (!n.ok()) {
      deferred = n.status();
      eof = true;
      break;
    }
    if (*n == 0) {
      eof = true;
      break;
    }
    data.append(chunk, *n);
  }
  const Compression compression = source->compression();
  if (!LooksNewestFirst(data)) {
    if (eof)
      return std::unique_ptr<ByteSource>(
          new BufferedSource(std::move(data), nullptr, compression, source->raw_bytes_read(), std::move(deferred)));
    return std::unique_ptr<ByteSource>(
        new BufferedSource(std::move(data), std::move(source), compression, 0, Status::Ok()));
  }
  while (!eof && data.size() <= max_bytes) {
    auto n = source->Read(chunk, sizeof(chunk));
    if (!n.ok()) {
      deferred = n.status();  // a damaged tail: the lines before it are still the log
      break;
    }
    if (*n == 0) eof = true;
    data.append(chunk, *n);
  }
  if (data.size() > max_bytes) {
    how->too_large = true;
    if (eof || !deferred.ok()) {
      return std::unique_ptr<ByteSource>(
          new BufferedSource(std::move(data), nullptr, compression, source->raw_bytes_read(), std::move(deferred)));
    }
    return std::unique_ptr<ByteSource>(
        new BufferedSource(std::move(data), std::move(source), compression, 0, Status::Ok()));
  }
  how->reversed = true;
  return std::unique_ptr<ByteSource>(
      new BufferedSource(LinesReversed(data), nullptr, compression, source->raw_bytes_read(), std::move(deferred)));
}

}  // namespace faultline::input
