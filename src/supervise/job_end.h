// JobEnd: how a watched or supervised job ended — ready, completed, died,
// stalled, timed out or interrupted — with the facts for the diagnosis.
#ifndef FAULTLINE_SUPERVISE_JOB_END_H_
#define FAULTLINE_SUPERVISE_JOB_END_H_

#include <optional>
#include <string>
#include <vector>

#include "supervise/stall_classifier.h"

namespace faultline::supervise {

enum class Outcome { kReady, kCompleted, kDied, kStalled, kTimeout, kInterrupted };
const char* OutcomeName(Outcome o);  // "ready", "completed", "died", "stalled", "timeout", "interrupted"
// Whether the outcome is a diagnosed failure (exit code 1).
bool IsFailure(Outcome o);

struct JobEnd {
  std::string service;  // the job's name
  Outcome outcome = Outcome::kCompleted;
  int64_t pid = 0;
  std::optional<int> exit_code;    // when faultline saw the exit status
  std::optional<int> term_signal;  // killed by this signal
  double elapsed_seconds = 0;      // since the watch began
  std::string detail;              // one line: "exited with code 1", "ready: http://...", ...
  std::optional<StallDiagnosis> stall;
  std::string log_path;  // the log the diagnosis reads
  // What the kernel said about a death (kernel_evidence.h): explain is ""
  // when nothing explains it.
  std::string kernel_explain;
  std::vector<std::string> kernel_lines;
  std::vector<std::string> kernel_notes;
  // The run directory's copy of the log is incomplete from this byte (a
  // write failed, e.g. ENOSPC); -1 when complete.
  int64_t log_incomplete_from = -1;
  std::string log_write_error;
};

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_JOB_END_H_
