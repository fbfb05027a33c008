#include "input/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "input/input_files.h"

namespace faultline::input {
namespace {

constexpr size_t kRawChunk = 256 * 1024;

// Reads raw bytes from a descriptor, with a small look-ahead buffer so the
// decoders can sniff magic bytes without losing them.
class FdReader {
 public:
  FdReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
    struct stat st;
    regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  }
  ~FdReader() {
    if (fd_ > 0) ::close(fd_);  // never close stdin (0)
  }
  Result<size_t> Read(char* buf, size_t n) {
    if (!pushback_.empty()) {
      size_t k = std::min(n, pushback_.size());
      std::memcpy(buf, pushback_.data(), k);
      pushback_.erase(pushback_.begin(), pushback_.begin() + k);
      return k;
    }
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r == 0 && regular_ && !shrink_reported_) {
        // The end of a regular file: did it shrink under us (truncated, or
        // rotated by copy-and-truncate)? Then what was read is not the file.
        struct stat st;
        if (::fstat(fd_, &st) == 0 && st.st_size < consumed_) {
          shrink_reported_ = true;
          return Status::DataLoss(fmt::format("{}: truncated while being read ({} bytes read, {} now)", name_,
                                              consumed_, static_cast<int64_t>(st.st_size)));
        }
      }
      if (r >= 0) {
        consumed_ += r;
        return static_cast<size_t>(r);
      }
      if (errno == EINTR) continue;
      return Status::IoError(fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
    }
  }
  // Peeks at up to n leading bytes (only before any Read).
  Result<std::string> Peek(size_t n) {
    std::string head(n, '\0');
    size_t got = 0;
    while (got < n) {
      auto r = Read(head.data() + got, n - got);
      if (!r.ok()) return r.status();
      if (*r == 0) break;
      got += *r;
    }
    head.resize(got);
    pushback_.assign(head.begin(), head.end());
    return head;
  }
  int64_t consumed() const { return consumed_; }
  const std::string& name() const { return name_; }

 private:
  int fd_;
  std::string name_;
  std::vector<char> pushback_;
  int64_t consumed_ = 0;
  bool regular_ = false;
  bool shrink_reported_ = false;
};

class PlainSource : public ByteSource {
 public:
  explicit PlainSource(std::unique_ptr<FdReader> in) : in_(std::move(in)) {}
  Result<size_t> Read(char* buf, size_t n) override { return in_->Read(buf, n); }
  Compression compression() const override { return Compression::kNone; }
  int64_t raw_bytes_read() const override { return in_->consumed(); }

 private:
  std::unique_ptr<FdReader> in_;
};

class GzipSource : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<FdReader> in) : in_(std::move(in)), raw_(kRawChunk) {
    std::memset(&z_, 0, sizeof(z_));
    // 15 + 32: zlib or gzip header, auto-detected.
    inflateInit2(&z_, 15 + 32);
  }
  ~GzipSource() override { inflateEnd(&z_); }
  Compression compression() const override { return Compression::kGzip; }
  int64_t raw_bytes_read() const override { return in_->consumed(); }

  Result<size_t> Read(char* buf, size_t n) override {
    if (!deferred_.ok()) return std::exchange(deferred_, Status());
    if (done_) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out == n) {
      if (z_.avail_in == 0) {
        auto r = in_->Read(raw_.data(), raw_.size());
        if (!r.ok()) return r.status();
        if (*r == 0) {
          done_ = true;
          if (!at_member_end_) {
            return Status::DataLoss(fmt::format("{}: truncated gzip stream", in_->name()));
          }
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(raw_.data());
        z_.avail_in = static_cast<uInt>(*r);
      }
      at_member_end_ = false;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members (cat a.gz b.gz) are one stream to gunzip.
        at_member_end_ = true;
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        done_ = true;
        size_t got = n - z_.avail_out;
        Status err =
            Status::DataLoss(fmt::format("{}: corrupt gzip data ({})", in_->name(), z_.msg ? z_.msg : "inflate error"));
        if (got == 0) return err;
        deferred_ = err;  // hand out what was decoded, report the damage next
        return got;
      }
    }
    return n - z_.avail_out;
  }

 private:
  std::unique_ptr<FdReader> in_;
  std::vector<char> raw_;
  z_stream z_;
  bool done_ = false;
  bool at_member_end_ = false;
  Status deferred_;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(std::unique_ptr<FdReader> in)
      : in_(std::move(in)), raw_(ZSTD_DStreamInSize()), dctx_(ZSTD_createDCtx()) {}
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  Compression compression() const override { return Compression::kZstd; }
  int64_t raw_bytes_read() const override { return in_->consumed(); }

  Result<size_t> Read(char* buf, size_t n) override {
    if (!deferred_.ok()) return std::exchange(deferred_, Status());
    if (done_) return size_t{0};
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (input_.pos == input_.size) {
        auto r = in_->Read(raw_.data(), raw_.size());
        if (!r.ok()) return r.status();
        if (*r == 0) {
          done_ = true;
          if (last_ret_ != 0) {
            return Status::DataLoss(fmt::format("{}: truncated zstd stream", in_->name()));
          }
          break;
        }
        input_ = ZSTD_inBuffer{raw_.data(), *r, 0};
      }
      size_t ret = ZSTD_decompressStream(dctx_, &out, &input_);
      if (ZSTD_isError(ret)) {
        done_ = true;
        Status err = Status::DataLoss(fmt::format("{}: corrupt zstd data ({})", in_->name(), ZSTD_getErrorName(ret)));
        if (out.pos == 0) return err;
        deferred_ = err;
        return out.pos;
      }
      last_ret_ = ret;
    }
    return out.pos;
  }

 private:
  std::unique_ptr<FdReader> in_;
  std::vector<char> raw_;
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  size_t last_ret_ = 0;
  bool done_ = false;
  Status deferred_;
};

constexpr size_t kSniffBytes = 64 << 10;
constexpr size_t kTextChunk = 256 << 10;
constexpr int64_t kMaxWithoutNewline = int64_t{64} << 20;

Result<std::unique_ptr<ByteSource>> DecoderFromFd(int fd, const std::string& name);

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A decoded stream made text: what it is is decided on its first 64 KiB.
// UTF-8 passes (a BOM is stripped); UTF-16 (a BOM, or NULs in every other
// byte: PowerShell's `>` and Out-File) becomes UTF-8; CR-only line ends
// (no '\n' at all in the prefix) become '\n'; binary data is refused at open,
// and a stream that goes 64 MiB without a line end is stopped.
class TextSource : public ByteSource {
 public:
  static Result<std::unique_ptr<ByteSource>> Open(std::unique_ptr<ByteSource> inner, const std::string& name) {
    std::unique_ptr<TextSource> t(new TextSource(std::move(inner), name));
    Status st = t->Sniff();
    if (!st.ok()) return st;
    return std::unique_ptr<ByteSource>(std::move(t));
  }
  Compression compression() const override { return inner_->compression(); }
  int64_t raw_bytes_read() const override { return inner_->raw_bytes_read(); }

  Result<size_t> Read(char* buf, size_t n) override {
    if (pos_ == out_.size() && encoding_ == Encoding::kUtf8 && !cr_only_ && n >= kTextChunk && deferred_.ok() &&
        !eof_) {
      // UTF-8 needs no conversion: the chunk Fill() would read goes straight
      // to the caller (one copy less on the reader's serial path).
      auto r = inner_->Read(buf, kTextChunk);
      if (!r.ok()) {
        eof_ = true;
        return r.status();
      }
      if (*r == 0) {
        eof_ = true;
        return size_t{0};
      }
      Status st = CheckLineEnds(std::string_view(buf, *r));
      if (!st.ok()) deferred_ = st;
      return *r;
    }
    while (pos_ == out_.size()) {
      out_.clear();
      pos_ = 0;
      if (!deferred_.ok()) return std::exchange(deferred_, Status());
      if (eof_) return size_t{0};
      Status st = Fill();
      if (!st.ok()) {
        if (out_.empty()) return st;
        deferred_ = st;
      }
    }
    size_t k = std::min(n, out_.size() - pos_);
    std::memcpy(buf, out_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  enum class Encoding { kUtf8, kUtf16Le, kUtf16Be };

  TextSource(std::unique_ptr<ByteSource> inner, std::string name) : inner_(std::move(inner)), name_(std::move(name)) {}

  Status Sniff() {
    std::string head;
    Status err;
    while (head.size() < kSniffBytes) {
      std::string chunk(kSniffBytes - head.size(), '\0');
      auto r = inner_->Read(chunk.data(), chunk.size());
      if (!r.ok()) {
        err = r.status();
        eof_ = true;
        break;
      }
      if (*r == 0) {
        eof_ = true;
        break;
      }
      head.append(chunk.data(), *r);
    }
    if (head.empty() && !err.ok()) return err;  // e.g. a corrupt archive: nothing readable at all
    auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
    size_t skip = 0;
    if (head.size() >= 3 && byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF) {
      skip = 3;
    } else if (head.size() >= 2 && byte(0) == 0xFF && byte(1) == 0xFE) {
      encoding_ = Encoding::kUtf16Le;
      skip = 2;
    } else if (head.size() >= 2 && byte(0) == 0xFE && byte(1) == 0xFF) {
      encoding_ = Encoding::kUtf16Be;
      skip = 2;
    } else {
      // No BOM: UTF-16 shows as a NUL in (nearly) every other byte.
      size_t pairs = std::min<size_t>(head.size(), 4096) / 2, odd = 0, even = 0;
      for (size_t i = 0; i < pairs; ++i) {
        even += head[2 * i] == 0;
        odd += head[2 * i + 1] == 0;
      }
      if (pairs >= 8 && odd * 10 >= pairs * 8 && even * 10 < pairs) encoding_ = Encoding::kUtf16Le;
      if (pairs >= 8 && even * 10 >= pairs * 8 && odd * 10 < pairs) encoding_ = Encoding::kUtf16Be;
    }
    Convert(std::string_view(head).substr(skip));
    if (LooksBinary(out_)) {
      return Status::DataLoss(fmt::format("{}: binary data, not a log (compressed logs must be gzip or zstd)", name_));
    }
    cr_only_ = out_.find('\n') == std::string::npos && out_.find('\r') != std::string::npos;
    if (cr_only_) std::replace(out_.begin(), out_.end(), '\r', '\n');
    if (!err.ok()) deferred_ = err;
    return CheckLineEnds(0);
  }

  Status Fill() {
    if (!raw_) raw_ = std::make_unique_for_overwrite<char[]>(kTextChunk);  // not zeroed: read() fills it
    auto r = inner_->Read(raw_.get(), kTextChunk);
    if (!r.ok()) {
      eof_ = true;
      return r.status();
    }
    if (*r == 0) {
      eof_ = true;
      if (!carry_.empty() || high_ != 0) AppendUtf8(0xFFFD, &out_);  // a cut last character
      carry_.clear();
      high_ = 0;
      return Status::Ok();
    }
    size_t from = out_.size();
    Convert(std::string_view(raw_.get(), *r));
    if (cr_only_) std::replace(out_.begin() + static_cast<std::ptrdiff_t>(from), out_.end(), '\r', '\n');
    return CheckLineEnds(from);
  }

  void Convert(std::string_view raw) {
    if (encoding_ == Encoding::kUtf8) {
      out_.append(raw);
      return;
    }
    std::string bytes = carry_;
    bytes.append(raw);
    carry_.clear();
    const bool le = encoding_ == Encoding::kUtf16Le;
    size_t i = 0;
    for (; i + 1 < bytes.size(); i += 2) {
      auto b0 = static_cast<unsigned char>(bytes[i]);
      auto b1 = static_cast<unsigned char>(bytes[i + 1]);
      uint32_t u = le ? (b0 | (b1 << 8)) : ((b0 << 8) | b1);
      if (high_ != 0) {
        if (u >= 0xDC00 && u <= 0xDFFF) {
          AppendUtf8(0x10000 + ((high_ - 0xD800) << 10) + (u - 0xDC00), &out_);
          high_ = 0;
          continue;
        }
        AppendUtf8(0xFFFD, &out_);
        high_ = 0;
      }
      if (u >= 0xD800 && u <= 0xDBFF) {
        high_ = u;
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        AppendUtf8(0xFFFD, &out_);
      } else {
        AppendUtf8(u, &out_);
      }
    }
    if (i < bytes.size()) carry_ = bytes.substr(i);
  }

  // The cap on data without a line end (random text, a stuck writer).
  Status CheckLineEnds(size_t from) { return CheckLineEnds(std::string_view(out_.data() + from, out_.size() - from)); }
  Status CheckLineEnds(std::string_view added) {
    size_t nl = added.rfind('\n');
    without_newline_ = nl == std::string_view::npos ? without_newline_ + static_cast<int64_t>(added.size())
                                                    : static_cast<int64_t>(added.size() - nl - 1);
    if (without_newline_ > kMaxWithoutNewline) {
      eof_ = true;
      return Status::DataLoss(
          fmt::format("{}: {} MiB without a line end: not a log; reading stopped", name_, kMaxWithoutNewline >> 20));
    }
    return Status::Ok();
  }

  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  Encoding encoding_ = Encoding::kUtf8;
  bool cr_only_ = false;
  bool eof_ = false;
  std::string out_;
  size_t pos_ = 0;
  std::unique_ptr<char[]> raw_;  // what Fill() reads, kTextChunk bytes
  std::string carry_;            // an odd byte of UTF-16 between reads
  uint32_t high_ = 0;            // a high surrogate waiting for its pair
  int64_t without_newline_ = 0;
  Status deferred_;
};

}  // namespace

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "plain";
}

Result<std::unique_ptr<ByteSource>> ByteSourceFromFd(int fd, const std::string& name) {
  auto decoded = DecoderFromFd(fd, name);
  if (!decoded.ok()) return decoded.status();
  return TextSource::Open(std::move(*decoded), name);
}

namespace {

Result<std::unique_ptr<ByteSource>> DecoderFromFd(int fd, const std::string& name) {
  auto reader = std::make_unique<FdReader>(fd, name);
  auto head = reader->Peek(4);
  if (!head.ok()) return head.status();
  const std::string& h = *head;
  if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x1f && static_cast<unsigned char>(h[1]) == 0x8b) {
    return std::unique_ptr<ByteSource>(new GzipSource(std::move(reader)));
  }
  if (h.size() >= 4 && static_cast<unsigned char>(h[0]) == 0x28 && static_cast<unsigned char>(h[1]) == 0xb5 &&
      static_cast<unsigned char>(h[2]) == 0x2f && static_cast<unsigned char>(h[3]) == 0xfd) {
    return std::unique_ptr<ByteSource>(new ZstdSource(std::move(reader)));
  }
  return std::unique_ptr<ByteSource>(new PlainSource(std::move(reader)));
}

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  if (path == "-") return ByteSourceFromFd(0, "<stdin>");
  // O_NONBLOCK: a FIFO without a writer must not block in open(); reads
  // block again (a FIFO with no writer then reads as empty).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return Status::IoError(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return ByteSourceFromFd(fd, path);
}

}  // namespace faultline::input
