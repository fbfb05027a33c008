#include "web/line_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/unique_fd.h"

namespace faultline::web {
namespace {

constexpr int64_t kChunk = 1 << 20;

}  // namespace

Result<int64_t> LineIndex::Update(int64_t max_bytes) {
  util::UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Status::IoError(fmt::format("{}: {}", path_, strerror(errno)));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Status::IoError(fmt::format("{}: {}", path_, strerror(errno)));
  int64_t size = st.st_size;
  int64_t from;
  int64_t lines;
  std::vector<int64_t> added;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (size < indexed_) {  // truncated or replaced: start over
      checkpoints_.clear();
      indexed_ = 0;
      lines_ = 0;
    }
    if (checkpoints_.empty()) checkpoints_.push_back(0);
    from = indexed_;
    lines = lines_;
  }
  int64_t until = std::min(size, from + max_bytes);
  std::vector<char> buf(static_cast<size_t>(kChunk));
  int64_t pos = from;
  while (pos < until) {
    int64_t want = std::min(kChunk, until - pos);
    ssize_t n = pread(fd.get(), buf.data(), static_cast<size_t>(want), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError(fmt::format("{}: {}", path_, strerror(errno)));
    if (n == 0) break;
    const char* p = buf.data();
    const char* e = p + n;
    while ((p = static_cast<const char*>(memchr(p, '\n', static_cast<size_t>(e - p)))) != nullptr) {
      ++lines;
      ++p;
      if (lines % stride_ == 0) added.push_back(pos + (p - buf.data()));
    }
    pos += n;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (indexed_ != from) return int64_t{0};  // reset by someone else meanwhile
  checkpoints_.insert(checkpoints_.end(), added.begin(), added.end());
  indexed_ = pos;
  lines_ = lines;
  return pos - from;
}

Result<int64_t> LineIndex::SkipLines(int64_t from, int64_t count) const {
  if (count == 0) return from;
  util::UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Status::IoError(fmt::format("{}: {}", path_, strerror(errno)));
  std::vector<char> buf(64 * 1024);
  int64_t pos = from;
  while (true) {
    ssize_t n = pread(fd.get(), buf.data(), buf.size(), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::NotFound(fmt::format("{}: fewer lines than asked", path_));
    const char* p = buf.data();
    const char* e = p + n;
    while ((p = static_cast<const char*>(memchr(p, '\n', static_cast<size_t>(e - p)))) != nullptr) {
      ++p;
      if (--count == 0) return pos + (p - buf.data());
    }
    pos += n;
  }
}

Result<int64_t> LineIndex::CountLines(int64_t from, int64_t until) const {
  util::UniqueFd fd(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Status::IoError(fmt::format("{}: {}", path_, strerror(errno)));
  std::vector<char> buf(64 * 1024);
  int64_t pos = from;
  int64_t lines = 0;
  while (pos < until) {
    size_t want = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(buf.size()), until - pos));
    ssize_t n = pread(fd.get(), buf.data(), want, pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    lines += std::count(buf.data(), buf.data() + n, '\n');
    pos += n;
  }
  return lines;
}

std::optional<int64_t> LineIndex::OffsetOfLine(int64_t line) const {
  if (line < 1) return std::nullopt;
  int64_t checkpoint;
  int64_t skip;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Line `line` starts after line-1 newlines; it must lie in the indexed part.
    if (line - 1 > lines_ || checkpoints_.empty()) return std::nullopt;
    size_t k = static_cast<size_t>((line - 1) / stride_);
    if (k >= checkpoints_.size()) return std::nullopt;
    checkpoint = checkpoints_[k];
    skip = (line - 1) % stride_;
  }
  auto off = SkipLines(checkpoint, skip);
  if (!off.ok()) return std::nullopt;
  return *off;
}

std::optional<int64_t> LineIndex::LineAt(int64_t offset) const {
  int64_t checkpoint;
  int64_t base_line;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (offset < 0 || offset > indexed_ || checkpoints_.empty()) return std::nullopt;
    auto it = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), offset);
    size_t k = static_cast<size_t>(it - checkpoints_.begin()) - 1;
    checkpoint = checkpoints_[k];
    base_line = static_cast<int64_t>(k) * stride_ + 1;
  }
  auto n = CountLines(checkpoint, offset);
  if (!n.ok()) return std::nullopt;
  return base_line + *n;
}

int64_t LineIndex::indexed_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return indexed_;
}

int64_t LineIndex::complete_lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

}  // namespace faultline::web
