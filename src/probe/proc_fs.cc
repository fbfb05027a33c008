#include "probe/proc_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace faultline::probe {
namespace {

class RealProcFs : public ProcFs {
 public:
  std::optional<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[8192];
    while (out.size() < max_bytes) {
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0) {
        close(fd);
        return std::nullopt;
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    if (out.size() > max_bytes) out.resize(max_bytes);
    return out;
  }

  std::vector<std::string> ListDir(const std::string& path) override {
    std::vector<std::string> names;
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return names;
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) continue;
      names.emplace_back(e->d_name);
    }
    closedir(dir);
    return names;
  }

  std::optional<std::string> ReadLink(const std::string& path) override {
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }

  std::optional<int64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return std::nullopt;
    return static_cast<int64_t>(st.st_size);
  }

  int64_t ClockTicksPerSecond() override {
    static const int64_t ticks = sysconf(_SC_CLK_TCK);
    return ticks > 0 ? ticks : 100;
  }
};

}  // namespace

std::unique_ptr<ProcFs> NewRealProcFs() { return std::make_unique<RealProcFs>(); }

}  // namespace faultline::probe
