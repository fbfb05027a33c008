#include "events/structure.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cctype>

namespace faultline::events {

const std::vector<std::pair<uint32_t, std::string>>& StructuralPatterns() {
  static const std::vector<std::pair<uint32_t, std::string>> patterns = {
      {kTracebackStart, R"(Traceback \(most recent call last\))"},
      {kChainMarker, R"(The above exception was the direct cause|During handling of the above exception)"},
      {kExceptionShape, R"([A-Za-z_][A-Za-z0-9_]*(Error|Exception|Interrupt|Exit|Failure|Fault)(:|$))"},
      // (and a bracketed one-letter level after a bracketed logger name: TensorRT-LLM's "[TRT-LLM] [E] ")
      {kLevelError, R"(ERROR|CRITICAL|FATAL|\[?[EF]\d{4} \d\d:\d\d|^\[[\w.-]+\] ?\[[EF]\] )"},
      // (and a Rust panic: "thread 'main' panicked at src/main.rs:4:5:", the runtime's report of an uncaught panic)
      {kTerminate, R"(terminate called|what\(\):|thread '[^']*' panicked at )"},
      {kSignalShape,
       R"(Segmentation fault|Fatal Python error|Bus error|Aborted|core dumped|Killed|SIGSEGV|SIGABRT|SIGBUS|SIGKILL|SIGTERM|SIGILL|SIGFPE|oom[-_]kill event|Out Of Memory)"},
      // "Assertion `cond` failed" (assert() in a kernel or in C), and a device assert printed as
      // "Assertion failed: FILE:LINE, ..." (deep_gemm's DG_DEVICE_ASSERT).
      {kKernelAssert, R"(Assertion .{0,600} failed|Assertion failed: [\w./-]+:\d+)"},
      {kNcclWarn, R"(NCCL WARN)"},
      {kExitShape, R"((?i)exit ?code|exited with|return code)"},
      {kFrameLine, R"(File ["“][^"”]{1,400}["”], [Ll]ine \d+)"},
      {kWarningHeader, R"(\.py:\d+: [A-Z]\w*Warning: )"},
      // (and CPython logging's Handler.handleError: "--- Logging error ---", the traceback, "Call stack:")
      // (and asyncio's report of a task that died unobserved: "Task exception was never retrieved")
      // (and CPython's site.py when sitecustomize / usercustomize fails to import: "Error in sitecustomize; set
      // PYTHONVERBOSE for traceback:" then "TYPE: message"; the interpreter goes on)
      // (and asyncio's report of a callback that raised: "Exception in callback <Handle ...>"; the loop goes on)
      {kIgnoredMarker,
       R"(Exception ignored in|--- Logging error ---|Call stack:|Task exception was never retrieved|Error in (site|user)customize; set PYTHONVERBOSE|Exception in callback )"},
      // (Tcl's errorInfo under an uncaught error: the message line, then "    while executing" and the command)
      {kTclTrace, R"(    while (?:executing|compiling)\s*$)"},
      {kCompilerError,
       R"([\w.+-]+:\d+(:\d+)?: (fatal )?error: |\(\d+\): (catastrophic )?error: |CMake Error|nvcc fatal|ninja: build stopped|fatal error: |LLVM ERROR: |^(error|fatal): |^g?make(\[\d+\])?: (\*\*\* |[^ ]+: No such file or directory)|^Hunk #\d+ FAILED|Reversed \(or previously applied\) patch detected)"},
  };
  return patterns;
}

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool ParseExceptionLine(std::string_view message, std::string_view* type, std::string_view* text) {
  size_t i = 0;
  while (i < message.size() &&
         (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '_' || message[i] == '.')) {
    ++i;
  }
  if (i == 0 || i > 200 || !(std::isalpha(static_cast<unsigned char>(message[0])) || message[0] == '_')) {
    return false;
  }
  std::string_view name = message.substr(0, i);
  std::string_view last = name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  static constexpr std::string_view kSuffixes[] = {"Error", "Exception", "Interrupt", "Exit", "Failure", "Fault"};
  bool exception_like = false;
  for (auto s : kSuffixes) exception_like = exception_like || EndsWith(last, s);
  if (!exception_like) return false;
  if (i == message.size()) {
    *type = name;
    *text = {};
    return true;
  }
  if (message[i] != ':') return false;
  *type = name;
  std::string_view rest = message.substr(i + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  *text = rest;
  return true;
}

std::string SignalOrExit(std::string_view message, bool* is_exit_status) {
  *is_exit_status = false;
  static const RE2 kFatal(R"(^(Fatal Python error: .*|Segmentation fault.*|Bus error.*|Aborted.*\(core dumped\).*))");
  static const RE2 kShellKilled(R"((^|\s)Killed(\s|$))");
  static const RE2 kSignalName(R"(\b(SIGSEGV|SIGABRT|SIGBUS|SIGKILL|SIGILL|SIGFPE)\b)");
  // The kernel's OOM killer (SIGKILL) as a scheduler reports it: slurmstepd "Detected N oom-kill event(s)
  // / oom_kill events", srun "node: task N: Out Of Memory".
  static const RE2 kOomKill(R"(\boom[-_]kill events?\b|: tasks? [\d,-]+: Out Of Memory\s*$)");
  static const RE2 kExit(R"((?i)(?:exit ?code|exited with(?: exit)? code|return code)\s*[:=]?\s*(-?\d+))");
  std::string m(message);
  if (RE2::PartialMatch(m, kFatal)) return m;
  int code = 0;
  if (RE2::PartialMatch(m, kExit, &code)) {
    if (code == 0) return "";
    *is_exit_status = true;
    return m;
  }
  std::string sig;
  if (RE2::PartialMatch(m, kSignalName, &sig)) return m;
  if (RE2::PartialMatch(m, kOomKill)) return m;
  if (RE2::PartialMatch(m, kShellKilled) && m.size() < 200) return m;
  return "";
}

}  // namespace faultline::events
