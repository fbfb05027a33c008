#include "input/byte_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace faultline::input {
namespace {

constexpr size_t kRawChunk = 256 * 1024;

// Reads raw bytes from a descriptor, with a small look-ahead buffer so the
// decoders can sniff magic bytes without losing them.
class FdReader {
 public:
  FdReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
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
        Status err = Status::DataLoss(fmt::format("{}: corrupt gzip data ({})", in_->name(),
                                                  z_.msg ? z_.msg : "inflate error"));
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
        Status err = Status::DataLoss(
            fmt::format("{}: corrupt zstd data ({})", in_->name(), ZSTD_getErrorName(ret)));
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

}  // namespace

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
    case Compression::kNone: break;
  }
  return "plain";
}

Result<std::unique_ptr<ByteSource>> ByteSourceFromFd(int fd, const std::string& name) {
  auto reader = std::make_unique<FdReader>(fd, name);
  auto head = reader->Peek(4);
  if (!head.ok()) return head.status();
  const std::string& h = *head;
  if (h.size() >= 2 && static_cast<unsigned char>(h[0]) == 0x1f &&
      static_cast<unsigned char>(h[1]) == 0x8b) {
    return std::unique_ptr<ByteSource>(new GzipSource(std::move(reader)));
  }
  if (h.size() >= 4 && static_cast<unsigned char>(h[0]) == 0x28 &&
      static_cast<unsigned char>(h[1]) == 0xb5 && static_cast<unsigned char>(h[2]) == 0x2f &&
      static_cast<unsigned char>(h[3]) == 0xfd) {
    return std::unique_ptr<ByteSource>(new ZstdSource(std::move(reader)));
  }
  return std::unique_ptr<ByteSource>(new PlainSource(std::move(reader)));
}

Result<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  if (path == "-") return ByteSourceFromFd(0, "<stdin>");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return Status::IoError(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  return ByteSourceFromFd(fd, path);
}

}  // namespace faultline::input
