// Capturing the Python stacks of a stalled job, before anything is stopped.
//
// `run` prepares a bootstrap (PrepareStackBootstrap): the sitecustomize.py of
// src/supervise/py/ written into the run directory, put first on the
// children's PYTHONPATH, which registers faulthandler on StackSignal() and
// then loads the user's own sitecustomize. CaptureStacks() sends that signal
// only to processes whose /proc/PID/status shows it caught (never to one that
// would die of it), waits for each dump, and parses it. For processes faultline
// did not start (`watch`), PySpyStacks() runs `py-spy dump` when installed.
#ifndef FAULTLINE_SUPERVISE_STACK_CAPTURE_H_
#define FAULTLINE_SUPERVISE_STACK_CAPTURE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "supervise/stacks.h"
#include "util/status.h"

namespace faultline::supervise {

// The real-time signal the bootstrap registers (SIGRTMIN+6: not SIGUSR1 or
// SIGUSR2, which Lightning, Slurm and others use).
int StackSignal();

struct StackBootstrap {
  std::string python_dir;  // holds sitecustomize.py
  std::string stack_dir;   // where each process writes <pid>.txt
  int signal = 0;
  // The variables to add to a child's environment, given the PYTHONPATH it
  // would otherwise get ("" when none).
  std::map<std::string, std::string> Env(const std::string& user_pythonpath) const;
};

Result<StackBootstrap> PrepareStackBootstrap(const std::string& run_dir);

// Whether /proc/PID/status says the process catches `signal` (SigCgt).
bool CatchesSignal(int64_t pid, int signal);

// Signals every member that catches the bootstrap's signal, waits up to
// timeout_seconds for the dumps, and returns them parsed and summarized.
StackReport CaptureStacks(const std::vector<std::pair<int64_t, uint64_t>>& members, const StackBootstrap& bootstrap,
                          const std::vector<StackPhase>& phases, double timeout_seconds = 3);

// `py-spy dump --pid PID` for each Python process of pids; note says how
// to get stacks when py-spy is missing.
StackReport PySpyStacks(const std::vector<int64_t>& pids, const std::vector<StackPhase>& phases,
                        double timeout_seconds = 10);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_STACK_CAPTURE_H_
