#include "supervise/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "supervise/tree_stopper.h"

namespace faultline::supervise {
namespace {

[[noreturn]] void KeeperMain(int fd, double grace, const std::string& marker) {
  setpgid(0, 0);
  prctl(PR_SET_NAME, "faultline-keep", 0, 0, 0);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  // Close everything but the pipe and stderr.
  for (int i = 3; i < 1024; ++i) {
    if (i != fd) close(i);
  }
  std::vector<pid_t> groups;
  std::vector<ProcessId> members;
  std::string buf;
  char chunk[4096];
  bool released = false;
  while (true) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      long long a = 0;
      unsigned long long b = 0;
      if (line == "Q")
        released = true;
      else if (sscanf(line.c_str(), "G %lld", &a) == 1)
        groups.push_back(static_cast<pid_t>(a));
      else if (sscanf(line.c_str(), "P %lld %llu", &a, &b) == 2)
        members.emplace_back(a, b);
    }
  }
  if (!released) {
    auto reap = [] {
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    };
    std::vector<ProcessId> all = members;
    for (const auto& m : ProcessesMarked(marker)) all.push_back(m);
    StopProcesses(groups, all, grace, reap);
    SweepMarked(marker, grace, reap);
  }
  _exit(0);
}

}  // namespace

Result<std::unique_ptr<Keeper>> Keeper::Start(double grace_seconds, const std::string& marker) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Status::IoError(fmt::format("pipe: {}", strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) return Status::IoError(fmt::format("fork: {}", strerror(errno)));
  if (pid == 0) {
    close(p[1]);
    KeeperMain(p[0], grace_seconds, marker);
  }
  close(p[0]);
  return std::unique_ptr<Keeper>(new Keeper(pid, p[1]));
}

Keeper::~Keeper() { Release(); }

void Keeper::Send(const std::string& line) {
  if (fd_ < 0) return;
  ssize_t n;
  do {
    n = write(fd_, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
}

void Keeper::TrackGroup(pid_t pgid) { Send(fmt::format("G {}\n", pgid)); }

void Keeper::TrackProcess(int64_t pid, uint64_t start_time) {
  if (!sent_.insert({pid, start_time}).second) return;
  Send(fmt::format("P {} {}\n", pid, start_time));
}

void Keeper::Release() {
  if (fd_ < 0) return;
  Send("Q\n");
  close(fd_);
  fd_ = -1;
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace faultline::supervise
