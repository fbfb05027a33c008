// Python stacks of the processes of a stalled job: parsing the text that
// faulthandler (the bootstrap sitecustomize of `run`) or `py-spy dump` (for
// `watch` of a foreign pid) prints, the phase each process is in (frame
// patterns of rules/stall.yaml, stack_phases:), and the grouping of ranks by
// the innermost function of their main thread ("ranks 0-2 in barrier()").
// Pure functions over text; the capture itself is in stack_capture.h.
#ifndef FAULTLINE_SUPERVISE_STACKS_H_
#define FAULTLINE_SUPERVISE_STACKS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace faultline::supervise {

struct StackFrame {
  std::string file;
  int line = 0;
  std::string function;
};

struct ThreadStack {
  std::string id;                  // "0x00007f..." or py-spy's thread name
  std::vector<StackFrame> frames;  // innermost first
};

// One process's stacks.
struct ProcessStacks {
  int64_t pid = 0;
  std::string rank;  // RANK (or LOCAL_RANK) of its environment, "" when none
  std::vector<ThreadStack> threads;
  int main_thread = -1;     // index into threads: the one running <module>, else the first
  std::string innermost;    // "barrier (torch/distributed/distributed_c10d.py:4000)"
  std::string where;        // the innermost function: "barrier"
  std::string phase;        // from stack_phases, "" when none matched
  std::string phase_frame;  // the frame that matched
  double capture_ms = 0;    // signal to complete dump
};

struct StackPhase {
  std::string phase;     // "weight-loading"
  std::string class_id;  // the stall class it names
  std::string pattern;   // RE2 over "FILE:FUNCTION" of one frame
};

struct StackReport {
  std::string source;  // "faulthandler" or "py-spy"
  std::vector<ProcessStacks> processes;
  std::vector<std::string> groups;  // "ranks 0-2 (pids 11,12,13) in barrier() -> distributed-init"
  std::string phase;                // the job's phase (see ReadPhases); "" when none
  std::string class_id;             // its stall class
  std::string evidence;             // the frame that gave the phase, with its process
  std::string note;                 // why stacks are missing or partial
  double capture_ms_max = 0;
};

// Parses faulthandler's dump ("Thread 0x... (most recent call first):" then
// `  File "F", line N in FUNC`) or py-spy dump's ("Thread N (idle): "Name""
// then `    FUNC (F:N)`). The last dump in the text wins when there are several.
std::vector<ThreadStack> ParseStackDump(const std::string& text);

// Fills main_thread, innermost, where, phase (first frame, innermost first,
// of the main thread that matches a stack phase; other threads when it has
// none).
void ReadProcessPhase(const std::vector<StackPhase>& phases, ProcessStacks* p);

// Groups processes by `where`, and names the job's phase: of the phases the
// processes are in, the one listed first in `phases` (rules put the phases
// a straggler is in before the waiting ones: a rank loading weights while
// the others wait in a barrier is the one to look at).
void SummarizeStacks(const std::vector<StackPhase>& phases, StackReport* r);

nlohmann::json StacksJson(const StackReport& r);
// Human form: the groups, then each process's main-thread frames (at most
// max_frames each).
std::string StacksText(const StackReport& r, int max_frames = 12);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_STACKS_H_
