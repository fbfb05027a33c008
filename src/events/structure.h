// The structural patterns: shapes of error lines that every framework's
// output shares (a traceback header, an exception line, a C++ terminate, a
// signal report, a kernel assertion, an NCCL WARN, an ERROR level field).
// They are the grammar of errors, not failure knowledge, so they live in
// code; they join the rules' Hyperscan database so that one scan of a block
// finds every line worth a closer look.
#ifndef FAULTLINE_EVENTS_STRUCTURE_H_
#define FAULTLINE_EVENTS_STRUCTURE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::events {

enum StructureBit : uint32_t {
  kTracebackStart = 1u << 0,
  kChainMarker = 1u << 1,
  kExceptionShape = 1u << 2,
  kLevelError = 1u << 3,
  kTerminate = 1u << 4,
  kSignalShape = 1u << 5,
  kKernelAssert = 1u << 6,
  kNcclWarn = 1u << 7,
  kExitShape = 1u << 8,
  kFrameLine = 1u << 9,       // a Python traceback frame: '  File "x.py", line 3, in f'
  kCompilerError = 1u << 10,  // a compiler's diagnostic: "x.cu:12:3: error: ...", "nvcc fatal   : ..."
  kWarningHeader = 1u << 11,  // Python's warnings module: "x.py:12: UserWarning: ..."
  kIgnoredMarker = 1u << 12,  // Python's unraisable hook: "Exception ignored in: <function X.__del__ ...>";
                              // logging's handleError: "--- Logging error ---" (and its "Call stack:")
  kTclTrace = 1u << 13,       // Tcl's error trace under an uncaught error's message: "    while executing"
};

// (bit, pattern) for every structural pattern.
const std::vector<std::pair<uint32_t, std::string>>& StructuralPatterns();

// "Type: message" or a bare "Type" where Type looks like an exception class
// (dotted identifier ending in Error, Exception, Interrupt, Exit, ...).
// On success sets *type and *text (text after ": ").
bool ParseExceptionLine(std::string_view message, std::string_view* type, std::string_view* text);

// A launcher's or shell's report of an abnormal end: returns a short
// normalised description ("exit code -9", "Segmentation fault") or "".
std::string SignalOrExit(std::string_view message, bool* is_exit_status);

}  // namespace faultline::events

#endif  // FAULTLINE_EVENTS_STRUCTURE_H_
