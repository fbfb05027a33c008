// ProcFs: the seam between the live sampler and the kernel's /proc.
//
// Everything the process sampler learns about running processes goes through
// these four calls, so the parsing and tree-walking code can be tested with
// FakeProcFs (an in-memory file table fed from recordings of real /proc
// files) and no real processes. Paths are absolute ("/proc/12/stat").
// Thread-safety: implementations are not thread-safe; use one per thread.
#ifndef FAULTLINE_PROBE_PROC_FS_H_
#define FAULTLINE_PROBE_PROC_FS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace faultline::probe {

class ProcFs {
 public:
  virtual ~ProcFs() = default;
  // The whole content of a small file (at most max_bytes); nullopt when it
  // cannot be read (the process is gone, permission denied).
  virtual std::optional<std::string> ReadFile(const std::string& path, size_t max_bytes = 1 << 20) = 0;
  // Entry names of a directory, without "." and ".."; empty when unreadable.
  virtual std::vector<std::string> ListDir(const std::string& path) = 0;
  // Target of a symbolic link (e.g. /proc/12/fd/3 -> "/models/x.safetensors").
  virtual std::optional<std::string> ReadLink(const std::string& path) = 0;
  // Size in bytes of a regular file; nullopt when it does not exist.
  virtual std::optional<int64_t> FileSize(const std::string& path) = 0;
  // Clock ticks per second used by /proc/PID/stat CPU times.
  virtual int64_t ClockTicksPerSecond() = 0;
};

// The real /proc of this machine.
std::unique_ptr<ProcFs> NewRealProcFs();

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_PROC_FS_H_
