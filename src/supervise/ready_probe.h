// Readiness probes: is the service answering yet? An HTTP GET that returns
// 2xx, a TCP port that accepts a connection, or a log line matching a regex.
// HTTP and TCP checks can block (a server that accepts but never answers),
// so ProbeThread runs them on a thread of their own and wakes the
// supervisor's poll() through an eventfd: a death is never noticed late
// because a probe was waiting.
#ifndef FAULTLINE_SUPERVISE_READY_PROBE_H_
#define FAULTLINE_SUPERVISE_READY_PROBE_H_

#include <atomic>
#include <string>
#include <thread>

#include "util/status.h"

namespace faultline::supervise {

struct ReadySpec {
  enum class Kind { kNone, kHttp, kTcp, kLog, kExec };
  Kind kind = Kind::kNone;
  std::string target;       // URL, host:port, RE2 pattern, or a shell command (exec: ready when it exits 0)
  double timeout = 0;       // seconds to become ready; 0 = no limit
  double interval = 0.5;    // between HTTP/TCP/exec attempts
  std::string working_dir;  // exec: where the command runs
};

// One attempt. http: GET, true on 2xx. tcp: connect() succeeds.
bool HttpReady(const std::string& url, double timeout_seconds = 2.0);
bool TcpReady(const std::string& host_port, double timeout_seconds = 1.0);
// exec: /bin/sh -c command in dir exits 0 within timeout_seconds (killed after).
bool ExecReady(const std::string& command, const std::string& dir, double timeout_seconds);
// Checks the form of a probe target (URL scheme, host:port, regex).
Status ValidateReadySpec(const ReadySpec& spec);

class ProbeThread {
 public:
  // REQUIRES: spec.kind is kHttp, kTcp or kExec.
  explicit ProbeThread(ReadySpec spec);
  ~ProbeThread();
  ProbeThread(const ProbeThread&) = delete;
  ProbeThread& operator=(const ProbeThread&) = delete;

  bool ready() const { return ready_.load(); }
  // Readable once the probe has succeeded (for poll()).
  int wake_fd() const { return wake_fd_; }

 private:
  void Run();
  ReadySpec spec_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;
  std::thread thread_;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_READY_PROBE_H_
