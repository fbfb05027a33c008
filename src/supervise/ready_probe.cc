#include "supervise/ready_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <re2/re2.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace faultline::supervise {
namespace {

bool SplitHostPort(const std::string& hp, std::string* host, std::string* port) {
  size_t colon = hp.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= hp.size()) return false;
  *host = hp.substr(0, colon);
  *port = hp.substr(colon + 1);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  return true;
}

}  // namespace

bool HttpReady(const std::string& url, double timeout_seconds) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  size_t path_start = url.find('/', scheme_end + 3);
  std::string base = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);
  httplib::Client client(base);
  auto usec = static_cast<long>(timeout_seconds * 1e6);
  client.set_connection_timeout(usec / 1000000, usec % 1000000);
  client.set_read_timeout(usec / 1000000, usec % 1000000);
  client.set_write_timeout(usec / 1000000, usec % 1000000);
  auto res = client.Get(path);
  return res && res->status >= 200 && res->status < 300;
}

bool TcpReady(const std::string& host_port, double timeout_seconds) {
  std::string host, port;
  if (!SplitHostPort(host_port, &host, &port)) return false;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return false;
  bool ok = false;
  for (addrinfo* a = res; a != nullptr && !ok; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc == 0) {
      ok = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(timeout_seconds * 1000)) == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        ok = err == 0;
      }
    }
    close(fd);
  }
  freeaddrinfo(res);
  return ok;
}

bool ExecReady(const std::string& command, const std::string& dir, double timeout_seconds) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(126);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r < 0 && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status ValidateReadySpec(const ReadySpec& spec) {
  switch (spec.kind) {
    case ReadySpec::Kind::kNone:
      return Status::Ok();
    case ReadySpec::Kind::kHttp:
      if (spec.target.rfind("http://", 0) != 0) {
        return Status::InvalidArgument(fmt::format("ready URL '{}': only http:// is supported", spec.target));
      }
      return Status::Ok();
    case ReadySpec::Kind::kTcp: {
      std::string host, port;
      if (!SplitHostPort(spec.target, &host, &port)) {
        return Status::InvalidArgument(fmt::format("ready tcp '{}': expected HOST:PORT", spec.target));
      }
      return Status::Ok();
    }
    case ReadySpec::Kind::kExec:
      if (spec.target.empty()) return Status::InvalidArgument("ready exec: empty command");
      return Status::Ok();
    case ReadySpec::Kind::kLog: {
      RE2 re(spec.target, RE2::Quiet);
      if (!re.ok()) return Status::InvalidArgument(fmt::format("ready log regex '{}': {}", spec.target, re.error()));
      return Status::Ok();
    }
  }
  return Status::Ok();
}

ProbeThread::ProbeThread(ReadySpec spec) : spec_(std::move(spec)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

ProbeThread::~ProbeThread() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void ProbeThread::Run() {
  using Clock = std::chrono::steady_clock;
  while (!stop_) {
    auto start = Clock::now();
    double attempt_timeout = std::max(0.2, std::min(2.0, spec_.interval * 4));
    bool ok = spec_.kind == ReadySpec::Kind::kHttp   ? HttpReady(spec_.target, attempt_timeout)
              : spec_.kind == ReadySpec::Kind::kExec ? ExecReady(spec_.target, spec_.working_dir,
                                                                 std::max(attempt_timeout, spec_.interval))
                                                     : TcpReady(spec_.target, attempt_timeout);
    if (ok) {
      ready_ = true;
      uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof(one));
      return;
    }
    auto next = start + std::chrono::duration<double>(spec_.interval);
    while (!stop_ && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace faultline::supervise
