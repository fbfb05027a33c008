// EventBuilder: turns classified lines into Events, one process at a time.
//
// Lines of many processes interleave; the builder keeps per-process state so
// that a traceback whose every line carries "(Worker_TP1 pid=7506) ERROR ..."
// is assembled even when other processes print in between. It handles
// chained tracebacks ("The above exception was the direct cause ...",
// "During handling ..."), an ERROR line that introduces the traceback that
// follows it (logger.exception), C++ terminate + what(), and folds repeated
// identical events (a kernel assertion printed by every thread).
//
// Memory: per process one open traceback, capped at kMaxContextLines.
#ifndef FAULTLINE_EVENTS_EVENT_BUILDER_H_
#define FAULTLINE_EVENTS_EVENT_BUILDER_H_

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "events/event.h"
#include "parse/parsed_line.h"

namespace faultline::events {

// One line as the scanner hands it over.
struct LineView {
  const parse::ParsedLine* parsed = nullptr;
  int file = 0;
  int64_t line = 0;
  uint32_t structure = 0;                           // StructureBit hints from the scan
  const std::vector<RuleMatch>* matches = nullptr;  // confirmed signature/cascade rules
  bool benign = false;                              // a benign rule matched
  bool cascade_rule = false;                        // a cascade rule matched
  bool control_flow = false;                        // a control_flow signature matched (a bare StopIteration)
  int64_t template_id = -1;                         // the line's template, when mining
  // A traceback header whose line right above is a record with a logger header at exactly WARNING level.
  // It may be that record's exception info (loguru's logger.opt(exception=True).warning(...) relayed by
  // TGI's launcher) - or a crash printed right under an unrelated warning: only the record's own fields
  // after the exception line (EventBuilder: IsTracingFieldsLine) tell that the traceback was its message.
  bool after_warning_record = false;
  // The raw line right above, for a line of Tcl's error trace (kTclTrace): the error's message is there.
  std::string_view above;
};

class EventBuilder {
 public:
  static constexpr size_t kMaxContextLines = 80;
  static constexpr int kMaxContinuationLines = 12;
  static constexpr int kMaxInterleavedRecords = 20;  // INFO records held inside one open traceback
  static constexpr int kMaxPowerShellRecordLines = 10;
  static constexpr int kMaxForeignAfterTentative = 6;  // such plain lines held under a tentative exception line  // lines of PowerShell's error record under a header
  using Sink = std::function<void(Event&&)>;
  explicit EventBuilder(Sink sink) : sink_(std::move(sink)) {}

  // Feeds one line. Lines of processes with open state must all be fed;
  // other lines only when they carry a structural hint or a rule match.
  void Add(const LineView& line);

  // True while some process has an open traceback or pending event, i.e.
  // while every line must be fed.
  bool NeedsEveryLine() const { return open_count_ > 0; }

  // Flushes everything still open (end of one input file).
  void Finish();

 private:
  enum class State { kIdle, kInTraceback, kAfterException };
  struct ProcessState {
    State state = State::kIdle;
    Event pending;  // the traceback or event being assembled
    bool has_pending = false;
    int lines_since_key = 0;  // lines of this process since the key line
    bool open = false;        // counted in open_count_
    // The line of the latest chain marker ("During handling of the above
    // exception") seen while no traceback was open: the next traceback
    // continues the chain of the one before it.
    int64_t chain_marker_line = -1;
    // The line that closed the traceback has no exception shape ("Loading
    // extension module utils..." from another rank, unprefixed): when the
    // traceback's frames go on right under it, it was interleaved output and
    // the traceback is reopened (what it replaced is kept here).
    bool tentative_exception = false;
    // Plain lines right under that tentative line, of the same kind (a `pip list` pasted into the middle
    // of the traceback: "python-json-logger   4.0.0", "python-multipart   0.0.22"): held with it, so
    // that the traceback still reopens when its frames go on under the last of them.
    int foreign_after_tentative = 0;
    // A terminate's "what():" line came with no text: the exception's what() string starts with a newline
    // (PLUMED's ExceptionError: "(core/Action.cpp:240) void PLMD::Action::error(...)" / "ERROR in input to
    // action ..."), so its message is on the plain lines under it, up to the next line with a shape (the
    // signal report), a blank line or kMaxWhatLines lines. `what_lines` counts those taken.
    bool what_follows = false;
    // The pending event is a line only a signature knows whose message ends in ':' (EventBuilder::Add).
    bool known_header = false;
    int what_lines = 0;
    bool what_found = false;  // a message line was chosen among them (WhatTextLine)
    // Records of a logger at INFO level or below seen inside the open traceback: another process's
    // output interleaved with it (two agents or unprefixed ranks writing one file), not its end.
    int interleaved_records = 0;
    std::string before_exception;
    LineInfo before_where;
    // The indent of the open traceback's "Traceback (most recent call last):"
    // line: a traceback another tool re-prints indented (pip's subprocess
    // output, a nested log) has its frames deeper and its exception line at
    // that indent, not at column 0.
    size_t traceback_indent = 0;
    // A Python `warnings` line was printed and only indented lines followed: its frames are no
    // traceback (event_builder.cc IsWarningHeader).
    bool in_warning = false;
    // A traceback whose indentation was stripped (copied from a log console
    // that trims each message): its frame lines start at column 0, each
    // followed by its source line and carets, all unindented. `flat` once
    // such a frame was seen; `after_flat_frame` on the line right after one.
    bool flat = false;
    bool after_flat_frame = false;
    // The open traceback's latest source line (RememberSourceLine).
    std::string last_source;

    // The line of the latest "Exception ignored in: ..." of this process (Python's unraisable hook):
    // the traceback right under it was swallowed (Event::ignored).
    int64_t ignored_line = -1;
    // The line of the latest "--- Logging error ---" of this process (CPython logging's
    // Handler.handleError): the traceback under it and the "Call stack:" printed after it were
    // swallowed too; the record was dropped and the process went on.
    int64_t logging_error_line = -1;
    // The line of the latest "Task exception was never retrieved" of this process (asyncio's report of
    // a task that died unobserved): the traceback under it was raised earlier (Event::reported_late).
    int64_t late_report_line = -1;
    // The last line of the latest reported-late event's context: an event starting right under it (the
    // remote traceback of a RayTaskError, re-printed under its local one) belongs to the same report.
    int64_t late_report_until = -1;
    bool after_flat_source = false;  // on the second line after a flat frame, the first being its source
    // The last line this state took came unprefixed (routed here by RouteUnprefixed).
    bool last_routed = false;
    // The open chain's message so far is a control-flow exception (LineView::control_flow): the next
    // exception of the chain, raised while handling it, takes the message.
    bool message_is_control_flow = false;
    // The open traceback began at a frame line, with no "Traceback (most recent call last):" header (a paste
    // that starts inside it, or a stack listing): Event::listing when no exception line closes it.
    bool headerless = false;
    // The open traceback's header came as Windows PowerShell renders a native command's first stderr line
    // ("python : Traceback (most recent call last):"): the lines of PowerShell's error record under it (its
    // position line, "+ " command excerpt and underline, "+ CategoryInfo ...", "+ FullyQualifiedErrorId :
    // NativeCommandError") come before the first frame; this many may still be skipped.
    int powershell_record_lines = 0;
    // The open traceback's header is IPython's ("NAME<blanks>Traceback (most recent call last)", no colon): its
    // numbered source lines may have lost their indent in a copy, and Colab's "N frames" line stands for hidden ones.
    bool ipython_traceback = false;
    // The open traceback's header came right under a WARNING record (LineView::after_warning_record): when
    // that record's fields line closes it, it was the record's exception info (Event::logged).
    bool under_warning_record = false;
  };

  void Emit(ProcessState& ps);
  // The open headerless traceback is a stack listing (Event::listing).
  void MarkListing(ProcessState& ps);
  // An event at `line` follows a reported-late event of this process closely enough to be the rest of
  // its report (ProcessState::late_report_until).
  static bool ContinuesLateReport(const ProcessState& ps, int64_t line);
  void StartTraceback(ProcessState& ps, const LineView& line);
  void SingleLine(ProcessState& ps, const LineView& line);
  // Whether `msg` (already shifted to the traceback's own column 0) goes on the traceback being read
  // rather than ending it: frames, source and caret lines (indented or flattened), elisions, a new segment.
  void RememberSourceLine(ProcessState& ps, std::string_view msg);
  bool ContinuesTraceback(ProcessState& ps, std::string_view msg, bool starts_segment);
  void UpdateOpen(ProcessState& ps);  // recounts open_count_ after a state change
  ProcessState& StateFor(const parse::ParsedLine& p);
  // Where an unprefixed line goes: a logger record's continuation lines
  // (SGLang's "Scheduler hit an exception: Traceback ..." then bare frames)
  // carry no prefix, so they join the prefixed process whose traceback is open.
  ProcessState& RouteUnprefixed(const LineView& line, ProcessState& own);

  Sink sink_;
  std::unordered_map<std::string, ProcessState> processes_;
  int open_count_ = 0;
  std::string last_key_;            // for folding repeats
  std::string last_traceback_key_;  // the prefixed process that opened the latest traceback
  // The traceback being started has a WARNING record right above it (LineView::after_warning_record).
  bool traceback_under_warning_record_ = false;
  Event held_;                      // last event, held back to fold repeats into
  bool has_held_ = false;
};

}  // namespace faultline::events

#endif  // FAULTLINE_EVENTS_EVENT_BUILDER_H_
