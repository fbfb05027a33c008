#include "supervise/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace faultline::supervise {

int OpenPidFd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

void BecomeSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

Result<Child> Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Status::InvalidArgument("empty command");
  // Everything the child needs is built before fork(): after it, only
  // async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env_map[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : options.env) env_map[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env_map) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  // PATH lookup in the parent, with the child's PATH.
  std::string program = options.argv[0];
  if (program.find('/') == std::string::npos) {
    std::string path = env_map.count("PATH") ? env_map["PATH"] : "/usr/bin:/bin";
    std::string found;
    size_t i = 0;
    while (i <= path.size() && found.empty()) {
      size_t j = path.find(':', i);
      if (j == std::string::npos) j = path.size();
      std::string candidate = (j > i ? path.substr(i, j - i) : ".") + "/" + program;
      if (access(candidate.c_str(), X_OK) == 0) found = candidate;
      i = j + 1;
    }
    if (found.empty()) return Status::NotFound(fmt::format("{}: command not found", program));
    program = found;
  }

  int out[2], err_pipe[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Status::IoError(fmt::format("pipe: {}", strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return Status::IoError(fmt::format("pipe: {}", strerror(errno)));
  }
  const char* cwd = options.working_dir.empty() ? nullptr : options.working_dir.c_str();
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(out[0]);
    close(out[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    return Status::IoError(fmt::format("fork: {}", strerror(e)));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(127);  // faultline died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    int e = 0;
    if (cwd != nullptr && chdir(cwd) != 0) {
      e = errno;
    } else {
      execve(program.c_str(), argv.data(), envp.data());
      e = errno;
    }
    (void)!write(err_pipe[1], &e, sizeof(e));
    _exit(127);
  }
  setpgid(pid, pid);  // also in the parent: no race with a stop right after
  close(out[1]);
  close(err_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(err_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n == sizeof(child_errno)) {
    close(out[0]);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    if (cwd != nullptr && child_errno != ENOENT) {
      return Status::IoError(fmt::format("{}: {}", options.argv[0], strerror(child_errno)));
    }
    return Status::NotFound(fmt::format("{}: {}", options.argv[0], strerror(child_errno)));
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  Child c;
  c.pid = pid;
  c.output_fd = out[0];
  c.pidfd = OpenPidFd(pid);
  return c;
}

}  // namespace faultline::supervise
