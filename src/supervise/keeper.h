// Keeper: the guarantee that nothing `faultline run` started outlives it,
// even when faultline itself is SIGKILLed (no handler runs then).
//
// Start() forks a small process before any thread exists. It sits in its own
// process group (the terminal's Ctrl-C does not reach it), ignores SIGINT,
// SIGTERM and SIGHUP, and blocks reading a pipe from faultline, which tells it
// every process group and process it starts or discovers. When the pipe
// closes without a "done" message — faultline died — the keeper sends
// SIGTERM to all of them, waits the grace period, SIGKILLs what is left, and
// exits. A clean Release() makes it exit without touching anything.
// Together with PR_SET_PDEATHSIG on each direct child and the subreaper
// flag, this covers every way faultline can end.
#ifndef FAULTLINE_SUPERVISE_KEEPER_H_
#define FAULTLINE_SUPERVISE_KEEPER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "util/status.h"

namespace faultline::supervise {

class Keeper {
 public:
  // REQUIRES: no other thread is running.
  // marker: an environment entry every started process carries
  // ("FAULTLINE_RUN_ID=..."); after stopping what it was told, the keeper
  // also stops every process whose environment holds it (setsid daemons that
  // left both the group and the tree). "" for none.
  static Result<std::unique_ptr<Keeper>> Start(double grace_seconds, const std::string& marker = "");
  ~Keeper();  // Release()s

  void TrackGroup(pid_t pgid);
  void TrackProcess(int64_t pid, uint64_t start_time);
  // Tells the keeper all is stopped; it exits without signalling.
  void Release();
  pid_t pid() const { return pid_; }

 private:
  Keeper(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void Send(const std::string& line);
  pid_t pid_;
  int fd_;
  std::set<std::pair<int64_t, uint64_t>> sent_;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_KEEPER_H_
