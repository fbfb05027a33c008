// FakeProcFs: an in-memory /proc for tests. Files, links and sizes are set
// explicitly; directories are implied by the paths put in (adding
// "/proc/12/stat" makes "12" an entry of "/proc"). Tests feed it text
// recorded from a real /proc.
#ifndef FAULTLINE_PROBE_PROC_FS_FAKE_H_
#define FAULTLINE_PROBE_PROC_FS_FAKE_H_

#include <map>
#include <set>
#include <string>

#include "probe/proc_fs.h"

namespace faultline::probe {

class FakeProcFs : public ProcFs {
 public:
  void SetFile(const std::string& path, std::string content);
  void SetLink(const std::string& path, std::string target);
  void SetSize(const std::string& path, int64_t size) { sizes_[path] = size; }
  // Removes every file and link under prefix (a process exiting).
  void RemoveTree(const std::string& prefix);
  int reads() const { return reads_; }

  std::optional<std::string> ReadFile(const std::string& path, size_t max_bytes) override;
  std::vector<std::string> ListDir(const std::string& path) override;
  std::optional<std::string> ReadLink(const std::string& path) override;
  std::optional<int64_t> FileSize(const std::string& path) override;
  int64_t ClockTicksPerSecond() override { return 100; }

 private:
  void AddParents(const std::string& path);
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> links_;
  std::map<std::string, int64_t> sizes_;
  std::map<std::string, std::set<std::string>> dirs_;
  int reads_ = 0;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_PROC_FS_FAKE_H_
