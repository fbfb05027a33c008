// Reading a small file whole (a pipeline, rule file, stall rules, miner
// profiles, a model's config.json), safely: opened O_NONBLOCK so a FIFO named
// by mistake never blocks in open(); anything but a regular file is refused
// (a FIFO, /dev/zero, a directory); the size is bounded, checked before and
// while reading (a file growing under us stops at the bound).
#ifndef FAULTLINE_UTIL_READ_FILE_H_
#define FAULTLINE_UTIL_READ_FILE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/status.h"

namespace faultline {

inline constexpr size_t kMaxConfigBytes = 16 << 20;

inline Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = kMaxConfigBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::NotFound(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::InvalidArgument(path + ": " + std::to_string(st.st_size) + " bytes; files here are limited to " +
                                   std::to_string(max_bytes >> 20) + " MiB");
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::IoError(path + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      return Status::InvalidArgument(path + ": grew past " + std::to_string(max_bytes >> 20) + " MiB while read");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace faultline

#endif  // FAULTLINE_UTIL_READ_FILE_H_
