// Spawning a supervised command: in a process group of its own (so a stop
// reaches the whole group, and the terminal's Ctrl-C reaches only faultline),
// with PR_SET_PDEATHSIG(SIGKILL) (it dies if faultline dies), stdin from
// /dev/null, stdout and stderr merged into one pipe that faultline reads (to
// tee it), signal dispositions reset. An exec failure (command not found) is
// reported as a Status, not as a child exiting 127.
#ifndef FAULTLINE_SUPERVISE_CHILD_PROCESS_H_
#define FAULTLINE_SUPERVISE_CHILD_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::supervise {

struct SpawnOptions {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH
  std::map<std::string, std::string> env;  // added to / replacing faultline's environment
  std::string working_dir;                 // "" = faultline's
};

struct Child {
  pid_t pid = -1;      // also its process group id
  int output_fd = -1;  // read end of stdout+stderr (non-blocking, close-on-exec)
  int pidfd = -1;      // readable when the child exits; -1 where unsupported
};

Result<Child> Spawn(const SpawnOptions& options);

// pidfd_open(2), or -1 (with errno) where the kernel lacks it.
int OpenPidFd(pid_t pid);

// Makes this process a child subreaper: orphaned descendants are re-parented
// to it (instead of init) so they can still be found and stopped.
void BecomeSubreaper();

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_CHILD_PROCESS_H_
