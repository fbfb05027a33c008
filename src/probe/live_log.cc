#include "probe/live_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace faultline::probe {

LogFollower::LogFollower(std::string path, Clock* clock, Options options) : clock_(clock), options_(options) {
  state_.path = std::move(path);
}

LogFollower::~LogFollower() {
  if (fd_ >= 0) close(fd_);
}

void LogFollower::EndLine(bool newline, const std::function<void(std::string_view)>& on_line) {
  if (newline) ++state_.lines;
  if (partial_.empty()) return;
  if (on_line) on_line(partial_);
  state_.last_line = partial_;
  state_.tail.push_back(partial_);
  while (state_.tail.size() > options_.tail_lines) state_.tail.pop_front();
  partial_.clear();
}

void LogFollower::Feed(std::string_view data, const std::function<void(std::string_view)>& on_line) {
  size_t i = 0;
  while (i < data.size()) {
    size_t j = data.find_first_of("\r\n", i);
    if (j == std::string_view::npos) {
      size_t room = options_.max_line_bytes > partial_.size() ? options_.max_line_bytes - partial_.size() : 0;
      partial_.append(data.substr(i, std::min(room, data.size() - i)));
      return;
    }
    size_t room = options_.max_line_bytes > partial_.size() ? options_.max_line_bytes - partial_.size() : 0;
    partial_.append(data.substr(i, std::min(room, j - i)));
    EndLine(data[j] == '\n', on_line);
    i = j + 1;
  }
}

int64_t LogFollower::Drain(const std::function<void(std::string_view)>& on_line) {
  int64_t total = 0;
  char buf[65536];
  while (static_cast<size_t>(total) < options_.max_bytes_per_poll) {
    ssize_t n = pread(fd_, buf, sizeof(buf), offset_);
    if (n <= 0) break;
    offset_ += n;
    total += n;
    Feed(std::string_view(buf, static_cast<size_t>(n)), on_line);
  }
  return total;
}

int64_t LogFollower::Poll(const std::function<void(std::string_view)>& on_line) {
  int64_t got = 0;
  struct stat st;
  bool at_path = stat(state_.path.c_str(), &st) == 0;
  if (fd_ >= 0 && at_path && (st.st_ino != inode_ || st.st_dev != dev_)) {
    got += Drain(on_line);  // the rest of the rotated file
    close(fd_);
    fd_ = -1;
    ++state_.rotations;
  }
  if (fd_ < 0 && at_path) {
    fd_ = open(state_.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) {
      struct stat fst;
      fstat(fd_, &fst);
      inode_ = fst.st_ino;
      dev_ = fst.st_dev;
      offset_ = 0;
    }
  }
  state_.exists = fd_ >= 0;
  if (fd_ >= 0) {
    struct stat fst;
    if (fstat(fd_, &fst) == 0 && fst.st_size < offset_) {  // truncated in place
      offset_ = 0;
      partial_.clear();
      ++state_.rotations;
    }
    got += Drain(on_line);
  }
  if (got > 0) {
    state_.bytes += got;
    state_.last_output_time = clock_->MonotonicSeconds();
  }
  return got;
}

}  // namespace faultline::probe
