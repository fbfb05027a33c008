// Findings: what the scan of the inputs collected, before ranking.
// Bounded: events are capped (the earliest are kept: they hold the root
// cause), phases are kept once per (process, phase), facts once per name.
#ifndef FAULTLINE_DIAGNOSIS_FINDINGS_H_
#define FAULTLINE_DIAGNOSIS_FINDINGS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "events/event.h"
#include "input/unfold.h"
#include "mining/template_miner.h"
#include "report/triage_report.h"

namespace faultline::diagnosis {

// A Python traceback frame ('  File "x.py", line 3, in f', maybe behind a
// prefix): it says where an error was raised, so a phase mark on it (a frame
// inside Trainer._inner_training_loop) tells the phase of that error, not
// that the process went on after it.
inline bool IsTracebackFrame(std::string_view text) {
  const size_t file = text.find("File \"");
  if (file == std::string_view::npos) return false;
  const size_t line = text.find("\", line ", file);
  return line != std::string_view::npos && text.find(", in ", line) != std::string_view::npos;
}

struct PhaseHit {
  std::string phase;
  size_t rule = 0;
  events::LineInfo where;
  events::ProcessId process;
  parse::Timestamp time;
  bool completes = false;
  // From a completion rule that says only that the process ended (exit: true, the shell's `time`
  // report, W&B's sync footer): kept apart from the other completion marks of its process, so that a
  // job's own completion after it (LSF's "Successfully completed.") still counts as one.
  bool exit_only = false;
  bool generic = false;      // from a generic progress rule (progress: true)
  bool interrupted = false;  // from a rule that reads a stop's traceback frames (interrupted: true)
  // From a rule that only words a phase (fallback: true): the job's phase when nothing else marked one,
  // and nothing more (no progress, recovery or restart reads it).
  bool fallback = false;
  // Marks of one (process, phase) are kept apart by the kind of mark they are: this hit holds the
  // marks of that kind (a new flag that keeps marks apart is compared here and nowhere else).
  bool SameSlot(std::string_view phase_name, std::string_view process_key, bool completes_mark, bool exit_only_mark,
                bool generic_mark, bool interrupted_mark, bool fallback_mark) const {
    return phase == phase_name && process.key == process_key && completes == completes_mark &&
           exit_only == exit_only_mark && generic == generic_mark && interrupted == interrupted_mark &&
           fallback == fallback_mark;
  }
  bool SameSlot(const PhaseHit& o) const {
    return SameSlot(o.phase, o.process.key, o.completes, o.exit_only, o.generic, o.interrupted, o.fallback);
  }
  // The latest mark of the same (process, phase): a server that answered a
  // request after an error was still serving.
  events::LineInfo last;
  parse::Timestamp last_time;
};

// A stop rule's line: the job was stopped from outside (Ctrl-C, SIGTERM, a
// scheduler's time limit).
struct StopHit {
  size_t rule = 0;
  events::LineInfo where;
  events::ProcessId process;
  parse::Timestamp time;
};

// The latest training progress line of a process (a step counter, a
// progress bar): where a stalled training log stopped.
struct ProgressMark {
  events::LineInfo where;
  parse::Timestamp time;
  std::string step;            // the counter's value, when the rule captured one
  std::string total;           // its end (N/M), when given
  bool final_only = false;     // a completion mark of a `final` rule (rules::Rule::final_only)
  bool ends_at_total = false;  // a counter of an ends_at_total rule: step == total is the run's end
  bool lone = false;           // such a counter seen once, at its total (no rise: no phase of its own)
};

struct ProcessStats {
  events::ProcessId process;
  int64_t lines = 0;
  int64_t errors = 0;
  events::LineInfo first_line;
  events::LineInfo last_line;
};

struct Findings {
  static constexpr size_t kMaxEvents = 20000;
  std::vector<events::Event> events;
  int64_t events_dropped = 0;
  std::vector<PhaseHit> phases;
  static constexpr size_t kMaxStops = 64;
  std::vector<StopHit> stops;  // the earliest kept
  // Latest training progress and latest completion marker, per process key:
  // a completion counts only when no progress of its process follows it.
  std::map<std::string, ProgressMark, std::less<>> last_progress;
  std::map<std::string, ProgressMark, std::less<>> last_generic_progress;  // progress: true rules
  std::map<std::string, ProgressMark, std::less<>> last_completion;
  // Generic progress rules: the counter's last value per (rule, process).
  std::map<std::pair<size_t, std::string>, int64_t> progress_counters;
  // The totals a generic counter reached (step == total), per process: what an at_total marker ends.
  std::map<std::string, std::set<std::string>, std::less<>> totals_reached;
  rules::Captures facts;                                       // latest value per name
  std::map<std::string, ProcessStats, std::less<>> processes;  // lookup by string_view
  std::vector<report::InputSummary> inputs;
  std::vector<std::string> warnings;
  std::optional<events::LineInfo> last_line;
  int64_t total_lines = 0;
  // Files read last line first (input/newest_first.h): file index -> its
  // line count, so the report gives the file's own line numbers.
  std::map<int, int64_t> reversed_files;
  // Files whose hard-wrapped rows were joined (input/unfold.h): file index ->
  // which lines took several rows, so the report gives the file's rows.
  std::map<int, input::Unfolding> unfolded_files;
  std::unique_ptr<mining::TemplateMiner> miner;  // set when templates are mined
};

// `l`'s line number in its file as the user has it: also for a file read
// last line first, or one whose hard-wrapped rows were joined.
inline int64_t FileLine(const Findings& f, const events::LineInfo& l) {
  int64_t line = l.line;
  auto reversed = f.reversed_files.find(l.file);
  if (reversed != f.reversed_files.end() && line >= 1 && line <= reversed->second) line = reversed->second + 1 - line;
  auto unfolded = f.unfolded_files.find(l.file);
  if (unfolded != f.unfolded_files.end() && line >= 1) line = unfolded->second.FileLine(line);
  return line;
}

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_FINDINGS_H_
