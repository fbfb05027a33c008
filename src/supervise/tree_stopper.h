// Stopping what faultline started: SIGTERM to each process group and to each
// known member of the trees (members re-parented out of the group included),
// a grace period for them to exit, then SIGKILL for what is left. A pid is
// only signalled while its start time still matches the one recorded, so a
// recycled pid is never hit. Only `run` stops processes; watch and
// wait-ready never do.
#ifndef FAULTLINE_SUPERVISE_TREE_STOPPER_H_
#define FAULTLINE_SUPERVISE_TREE_STOPPER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::supervise {

using ProcessId = std::pair<int64_t, uint64_t>;  // pid, start time (ticks since boot)

struct StopReport {
  int signalled = 0;            // processes sent SIGTERM
  std::vector<int64_t> killed;  // still there after the grace period: SIGKILLed
  double seconds = 0;           // how long the stop took
};

// Start time of a living (non-zombie) process, or 0 when it is gone.
uint64_t StartTimeOf(int64_t pid);

// REQUIRES: reap() reaps exited children of this process (waitpid WNOHANG
// loop) so that they stop counting as alive.
// kill_now, when given, is asked during the grace period: true ends it at
// once (a second Ctrl-C). Each process appears once in the report.
StopReport StopProcesses(const std::vector<pid_t>& groups, const std::vector<ProcessId>& members, double grace_seconds,
                         const std::function<void()>& reap, const std::function<bool()>& kill_now = nullptr);

// Living processes whose environment holds `marker` (e.g.
// "FAULTLINE_RUN_ID=...": every process `run` starts inherits it, setsid
// daemons included), except this process and `keep`. The way to find what
// escaped both the process groups and the tree.
std::vector<ProcessId> ProcessesMarked(const std::string& marker, pid_t keep = -1);

// Stops marked processes until none is left: StopProcesses with `grace`,
// then SIGKILL rounds for what forks meanwhile (at most `rounds`). Returns
// how many were signalled in all.
int SweepMarked(const std::string& marker, double grace_seconds, const std::function<void()>& reap, pid_t keep = -1,
                int rounds = 20);

// Living children of this process (orphans re-parented to a subreaper
// included), except `keep`.
std::vector<ProcessId> ChildrenOfSelf(pid_t keep = -1);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_TREE_STOPPER_H_
