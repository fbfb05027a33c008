// Event: an error found in a log by its structure, whatever words it holds:
// a Python traceback, an exception line, a C++ terminate, a signal or exit
// status, a CUDA kernel assertion, an NCCL WARN, an ERROR-level line.
// Rules later add an explanation; they are never needed to find an event.
#ifndef FAULTLINE_EVENTS_EVENT_H_
#define FAULTLINE_EVENTS_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "parse/parsed_line.h"
#include "rules/rule_set.h"

namespace faultline::events {

enum class EventKind {
  kPythonTraceback,   // "Traceback (most recent call last):" ... "Type: message"
  kExceptionLine,     // "Type: message" outside a traceback
  kCxxTerminate,      // "terminate called after throwing an instance of 'T'" + what()
  kSignal,            // segfault, Fatal Python error, Killed, abort
  kExitStatus,        // a launcher reporting a non-zero exit code
  kCudaKernelAssert,  // "... Assertion `cond` failed." from a CUDA kernel
  kNcclWarn,          // "NCCL WARN ..."
  kErrorLog,          // a line logged at ERROR / CRITICAL / FATAL level
  kCompilerError,     // a compiler's or CLI's own diagnostic: "x.cu:3:1: error: ...", "nvcc fatal", "error: ..."
};
const char* EventKindName(EventKind kind);

// Strong events end a process by themselves; weak ones (ERROR logs, NCCL
// WARN) often precede recovery and rank below strong ones.
bool IsStrong(EventKind kind);

struct LineInfo {
  int file = 0;              // index into the inputs
  int64_t line = 0;          // 1-based
  std::string text;          // cleaned line
  int64_t template_id = -1;  // the miner's template of this line, when mining
};

struct ProcessId {
  std::string key;  // demultiplexing key, "" for unprefixed lines
  std::string role;
  std::string parent;
  int64_t pid = -1;
  int rank = -1;
};

// A confirmed rule match on one of the event's key lines.
struct RuleMatch {
  size_t rule = 0;  // index into RuleSet::rules()
  rules::Captures captures;
  int64_t line = 0;  // the line it matched (an event spans several)
};

struct Event {
  EventKind kind = EventKind::kErrorLog;
  std::string message;    // the error line's message, without prefixes
  std::string exception;  // Python / C++ type, "" when none
  LineInfo where;         // the message line
  ProcessId process;
  parse::Timestamp time;
  std::vector<LineInfo> context;   // traceback and related lines, in order (capped)
  std::vector<std::string> chain;  // every exception of a chained traceback, first printed first
  // The chain's exception that is the message: 0, or the one raised while handling a control-flow
  // exception (a bare StopIteration, rules' control_flow) printed before it.
  size_t chain_message = 0;
  std::vector<RuleMatch> matches;  // signature/cascade rules on the key lines
  int64_t repeats = 0;             // identical events folded into this one
  // Lines that continue the exception's message after its key line (NCCL's
  // "Last error:" + the detail, pydantic's field and reason), capped.
  std::vector<LineInfo> continuation;
  bool cut_off = false;  // a traceback that ends before its exception line
  // A traceback printed under a chain marker after an earlier event of its
  // process had closed (build output in between): it re-raises that one.
  bool chained = false;
  // A traceback that Python's unraisable-exception hook printed ("Exception ignored in: <function
  // X.__del__ ...>" right above it: a destructor, a finalizer, a callback at interpreter exit): the
  // exception was swallowed and the process went on, so it never ends a process by itself.
  bool ignored = false;
  // A traceback whose first line carries a logging header at WARNING level or
  // below (torch._logging's "[WARNING] " on every line of dynamo's "WON'T
  // CONVERT" record): the process logged a handled exception and went on.
  bool logged = false;
  // A traceback that asyncio printed for a task that had died earlier ("Task exception was never
  // retrieved" / "future: <Task finished ... exception=...>" right above it, printed when the task object
  // is garbage-collected, often at exit after a Ctrl-C): the exception was raised when the task failed,
  // before the lines around the report; the remote traceback continued under it shares the flag.
  bool reported_late = false;
  // Frames with no "Traceback (most recent call last):" header and no exception line: a stack listing of a
  // live process (pystack, a stack printer's per-thread dump, traceback.print_stack), or a paste cut at both
  // ends. No exception was raised there: it fails nothing, and its frames say where the process was.
  bool listing = false;
};

}  // namespace faultline::events

#endif  // FAULTLINE_EVENTS_EVENT_H_
