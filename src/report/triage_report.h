// The report model: what a triage run concludes, independent of how it is
// printed. The text printer, the JSON writer (schema faultline.triage/1, see
// docs/triage.schema.json) and the live/dashboard feeds are all sinks of this
// one model, so they cannot drift apart.
#ifndef FAULTLINE_REPORT_TRIAGE_REPORT_H_
#define FAULTLINE_REPORT_TRIAGE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faultline::report {

enum class Verdict { kFailure, kStalled, kHealthy };
const char* VerdictName(Verdict v);  // "failure" / "stalled" / "healthy"

// The process that wrote a line, as the log names it.
struct ProcessRef {
  std::string tag;   // "Worker pid=7506", "rank3", "EngineCore_DP1 pid=6688", "" when unknown
  std::string role;  // "Worker", "EngineCore_DP1", "rank", "TP1", ...
  std::optional<int64_t> pid;
  std::optional<int> rank;
  std::string parent;  // tag of the parent process when the log shows it
};

// One line of a log as evidence: where it is and what it says.
struct LineRef {
  std::string file;  // as given on the command line (or "-" for stdin)
  int64_t line = 0;  // 1-based line number in that file
  std::string text;  // the line as cleaned (ANSI codes, CR rewrites removed)
};

struct TemplateRef {
  int64_t id = 0;
  int64_t count = 0;  // lines of the log with this template
};

struct RootCause {
  std::string message;    // the error line's message, e.g. "AssertionError: DP adjusted ..."
  std::string exception;  // Python exception type / C++ type / "" when none
  std::string kind;       // event kind: python-traceback, cxx-terminate, cuda-error, ...
  LineRef where;          // the message line itself (the specific line of a multi-line message)
  // A message that continues over several lines (NCCL's "Last error:" and
  // its detail, pydantic's reason): where it starts, when that is not `where`.
  std::optional<LineRef> message_start;
  ProcessRef process;
  std::optional<std::string> rule;  // matched signature id, or none for an unknown error
  std::string category;             // from the rule ("gpu-visibility", "oom", ...) or ""
  std::string explanation;          // from the rule, captures filled in; "" when none
  std::string fix;
  std::vector<LineRef> context;            // traceback / related lines, in order
  std::vector<std::string> why;            // the ranker's reasons for choosing this line
  std::optional<TemplateRef> templ;        // from the template miner, when enabled
  std::vector<std::string> same_error_in;  // other processes that raised the same error
};

struct CascadeItem {
  std::string message;
  LineRef where;
  ProcessRef process;
  std::string reason;  // why this is judged a consequence
  std::optional<std::string> rule;
  std::optional<TemplateRef> templ;
};

// One line template of the log ("Loading weights took <*> seconds").
struct TemplateSummary {
  int64_t id = 0;
  std::string text;
  int64_t count = 0;
};

struct PhaseMark {
  std::string phase;  // vocabulary in design.md
  LineRef where;
  ProcessRef process;
  std::optional<std::string> rule;
};

struct ProcessSummary {
  ProcessRef process;
  int64_t lines = 0;
  int64_t errors = 0;
  std::optional<std::string> last_phase;
  std::optional<LineRef> first_line;
  std::optional<LineRef> last_line;
};

struct InputSummary {
  std::string file;
  int64_t lines = 0;
  int64_t bytes = 0;
  std::string format;    // "plain", "gzip", "zstd"
  std::string wrappers;  // outer wrappers peeled, outermost first ("docker-compose"), "" when none
};

struct TriageReport {
  Verdict verdict = Verdict::kHealthy;
  std::optional<RootCause> root_cause;
  std::vector<CascadeItem> cascade;
  int64_t cascade_total = 0;  // cascade may be capped; this is the full count
  // Of cascade_total, those logged before the root cause in its own file (a
  // consequence can print first: a peer's watchdog, a launcher's summary).
  // Read by the text printers; not part of the JSON contract.
  int64_t cascade_before_root = 0;
  std::optional<std::string> last_phase;
  std::vector<std::string> phases_never_reached;  // standard phases after last_phase
  std::vector<PhaseMark> phases;
  std::vector<ProcessSummary> processes;
  std::vector<InputSummary> inputs;
  std::vector<std::string> warnings;     // damaged input, truncated lines, ...
  std::vector<std::string> stall_hints;  // suggestions when verdict is stalled
  std::optional<LineRef> last_line;      // where the log ends (for stalls)
  int64_t total_lines = 0;
  // With --templates: the most frequent templates, then the rarest.
  std::vector<TemplateSummary> common_templates;
  std::vector<TemplateSummary> rare_templates;
  int64_t template_total = 0;
};

}  // namespace faultline::report

#endif  // FAULTLINE_REPORT_TRIAGE_REPORT_H_
