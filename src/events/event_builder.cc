#include "events/event_builder.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>

#include "events/structure.h"
#include "parse/line_parser.h"

namespace faultline::events {

const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kPythonTraceback:
      return "python-traceback";
    case EventKind::kExceptionLine:
      return "exception";
    case EventKind::kCxxTerminate:
      return "cxx-terminate";
    case EventKind::kSignal:
      return "signal";
    case EventKind::kExitStatus:
      return "exit-status";
    case EventKind::kCudaKernelAssert:
      return "cuda-kernel-assert";
    case EventKind::kNcclWarn:
      return "nccl-warn";
    case EventKind::kCompilerError:
      return "compiler-error";
    case EventKind::kErrorLog:
      return "error-log";
  }
  return "?";
}

namespace {

// A message whose last character (before trailing blanks) is ':' announces more on the next line.
bool AnnouncesMore(std::string_view m) {
  while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.remove_suffix(1);
  return !m.empty() && m.back() == ':';
}

}  // namespace

bool IsStrong(EventKind kind) {
  return kind != EventKind::kErrorLog && kind != EventKind::kNcclWarn && kind != EventKind::kCompilerError;
}

namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// asyncio's default exception handler's header for a callback that raised: "Exception in callback
// <Handle ...>", as the record's message or after the logger's own "LEVEL:asyncio:" / "file.py:N: " prefix.
bool AsyncioCallbackReport(std::string_view lead) {
  constexpr std::string_view kHeader = "Exception in callback ";
  const size_t at = lead.find(kHeader);
  if (at == std::string_view::npos) return false;
  if (at == 0) return true;
  const char before = lead[at - 1];
  return before == ':' || (before == ' ' && at >= 2 && lead[at - 2] == ':');
}

// Traceback body lines: indented frames, and the box lines of `rich`'s
// tracebacks ("│ /path/file.py:12 in f │", "╰───╯").
size_t LeadingBlanks(std::string_view msg) {
  size_t i = 0;
  while (i < msg.size() && (msg[i] == ' ' || msg[i] == '\t')) ++i;
  return i;
}

// A line that starts with an exception's type and its repr or message: "FileNotFoundError(2, 'No such
// file')", "ImportError: cannot import name 'X'".
bool NamesAnException(std::string_view m) {
  m.remove_prefix(LeadingBlanks(m));
  size_t i = 0;
  while (i < m.size() && (std::isalnum(static_cast<unsigned char>(m[i])) || m[i] == '_' || m[i] == '.')) ++i;
  if (i == 0 || i == m.size() || (m[i] != '(' && m[i] != ':')) return false;
  std::string_view name = m.substr(0, i);
  for (std::string_view suffix : {"Error", "Exception", "Interrupt", "Exit"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return true;
  }
  return false;
}

// The line carries a logger's header at WARNING level or below: what it reports was handled.
bool LoggedBelowError(const parse::ParsedLine& p) {
  return !p.format.empty() && p.level != parse::Level::kUnknown && p.level <= parse::Level::kWarning;
}

// A line of only a structured logger's fields, " rank=0" or " rank=0 shard=1": Rust tracing's text
// formatter prints an event's fields after its message, on a line of their own when the message ran over
// several lines (TGI's launcher relaying a shard's record, a traceback in it).
bool IsTracingFieldsLine(std::string_view msg) {
  size_t i = 0;
  if (msg.empty() || (msg[0] != ' ' && msg[0] != '\t')) return false;
  bool any = false;
  while (true) {
    while (i < msg.size() && (msg[i] == ' ' || msg[i] == '\t')) ++i;
    if (i == msg.size()) return any;
    const size_t key = i;
    while (i < msg.size() && (std::isalnum(static_cast<unsigned char>(msg[i])) || msg[i] == '_' || msg[i] == '.')) ++i;
    if (i == key || i == msg.size() || msg[i] != '=') return false;
    ++i;
    const size_t value = i;
    while (i < msg.size() && msg[i] != ' ' && msg[i] != '\t') ++i;
    if (i == value) return false;
    any = true;
  }
}

bool Indented(std::string_view msg) {
  if (msg.empty()) return false;
  if (msg[0] == ' ' || msg[0] == '\t') return true;
  if (msg.substr(0, 7) == "> File ") return true;  // loguru / better_exceptions mark the raising frame
  static constexpr std::string_view kBox[] = {"\u2502", "\u2570", "\u256d", "\u2503"};
  for (auto b : kBox) {
    if (msg.substr(0, b.size()) == b) return true;
  }
  return false;
}

// A Python traceback frame, '  File "x.py", line 3, in f' (faulthandler's
// dumps, '  File "x.py", line 3 in f', are no traceback).
// A traceback frame line: 'File "x.py", line 5, in f'. A traceback typed
// or OCR'd from a screenshot may capitalise "Line" and curl the quotes.
bool IsFrameLine(std::string_view msg) {
  size_t i = msg.find_first_not_of(" \t");
  if (i == std::string_view::npos || msg.substr(i, 5) != "File " || !Contains(msg, ", in ")) return false;
  std::string_view rest = msg.substr(i + 5);
  const bool quoted = rest.substr(0, 1) == "\"" || rest.substr(0, 3) == "\u201c";
  return quoted && (Contains(rest, "\", line ") || Contains(rest, "\", Line ") || Contains(rest, "\u201d, line ") ||
                    Contains(rest, "\u201d, Line "));
}

// A line of an IPython (Jupyter, Colab, Kaggle) traceback, which IPython's ultratb prints in its own layout
// under "NAME<blanks>Traceback (most recent call last)": frames unquoted and unindented ("Cell In[67], line 263,
// in f(x)", "File /opt/conda/lib/python3.10/concurrent/futures/_base.py:451, in Future.result(self)" since
// IPython 8.5; "Input In [27], in <module>" in 8.0-8.4; "/tmp/ipykernel_55/3693596461.py in <cell line: 0>()",
// "<ipython-input-3-5f2e> in <module>", a Cython "masseval.pyx in m.f()" before), and the raising source line
// marked by an arrow before its number ("----> 3 x = f()", "--> 263 f.result()", "-> 1776 return ...").
// Colab's web view, copied, makes each frame a link ("[/usr/local/lib/python3.10/dist-packages/x.py](https://
// localhost:8080/#) in f(a)", "[](https://localhost:8080/#) in ()"), folds library frames into "5 frames", and a
// copy may lose the blanks before the numbered source lines ("462     property_rcbs = ..."): under IPython's
// header, a line that starts with a number is one of those. None of them ends the traceback: the exception does.
bool IsIPythonTracebackLine(std::string_view msg, bool ipython_header) {
  static const RE2 kIPython(
      R"(^(?:Cell In\[\d+\], line \d+|Input In \[\d+\], in |File [^"\s\x{201c}][^"]*:\d+, in \S|-*> ?\d+(?:\s|$)|(?:<ipython-input-[\w-]+>|\S+\.pyx?) in [\w<(]|\[[^\]]*\]\(https?://localhost(?::\d+)?/#\) in ))");
  static const RE2 kUnindentedSource(R"(^\d+(?:\s|$))");
  return RE2::PartialMatch(msg, kIPython) || (ipython_header && RE2::PartialMatch(msg, kUnindentedSource));
}

// IPython's traceback header: the exception's type, blanks, "Traceback (most recent call last)" and no colon.
bool IsIPythonTracebackHeader(std::string_view msg) {
  static const RE2 kHeader(R"(^\s*[A-Za-z_][\w.()]* +Traceback \(most recent call last\)\s*$)");
  return RE2::PartialMatch(msg, kHeader);
}

// Windows PowerShell (5.1) turns the first line a native command writes to a redirected stderr into an
// error record, printed as "NAME : LINE" (the command's name as invoked: "python", "python.exe") followed by
// the record's position block (PowerShell's FormatEnumerationLimit-free default view, e.g.
//   python : Traceback (most recent call last):
//   At line:1 char:1            (localized: "所在位置 行:1 字符: 1", "위치 ...:97 문자:9")
//   + python train.py 2>&1 ...
//   + ~~~~~~~~~~~~~~~~~~~~~
//       + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException
//       + FullyQualifiedErrorId : NativeCommandError
// then the rest of stderr as it was. True for such a traceback header.
bool IsPowerShellRecordHeader(std::string_view msg) {
  static constexpr std::string_view kHeader = " : Traceback (most recent call last):";
  const size_t at = msg.find(kHeader);
  if (at == std::string_view::npos || at == 0) return false;
  return msg.substr(0, at).find_first_of(" \t") == std::string_view::npos;
}

std::string_view TrimLeft(std::string_view s) { return s.substr(LeadingBlanks(s)); }

// pytest's report of a failed test prints the exception under the failing source line with an "E" column before
// it ("E       RuntimeError: value cannot be converted to type at::Half without overflow", the blanks keep the
// source's indent), then "path.py:61: RuntimeError". True for such a line; *msg becomes the exception text.
bool PytestExceptionLine(std::string_view* msg, std::string_view* type, std::string_view* text) {
  // (pytest's column is "E" and at least three blanks: "E   assert x == 1" for an unindented source line.)
  if (msg->size() < 5 || msg->substr(0, 4) != "E   ") return false;
  std::string_view rest = TrimLeft(msg->substr(1));
  if (!ParseExceptionLine(rest, type, text)) return false;
  *msg = rest;
  return true;
}

// pytest's short test summary names each failed test and its exception on one line: "FAILED tests/x.py::test_y[p]
// - RuntimeError: Server exited unexpectedly." ("ERROR" for a test whose setup failed; the text may be cut to the
// terminal's width with "..."). True for such a line; *msg becomes the exception text.
bool PytestSummaryLine(std::string_view* msg, std::string_view* type, std::string_view* text) {
  if (!msg->starts_with("FAILED ") && !msg->starts_with("ERROR ")) return false;
  const size_t node = msg->find("::");
  if (node == std::string_view::npos || msg->substr(0, node).find(' ') == std::string_view::npos) return false;
  const size_t dash = msg->find(" - ", node);
  if (dash == std::string_view::npos) return false;
  std::string_view rest = msg->substr(dash + 3);
  if (!ParseExceptionLine(rest, type, text)) return false;
  *msg = rest;
  return true;
}

// Python 3.11's caret run ("^^^^~~~") at the start of a line: when ranks write one stream at once, one
// rank's caret line runs on into another's next line ("^^^^^  File ...", "^^^IsADirectoryError^: ...").
size_t LeadingCaretRun(std::string_view msg) {
  const size_t n = msg.find_first_not_of("^~");
  return n == std::string_view::npos ? msg.size() : n;
}

// An exception line with blanks before its colon ("FileNotFoundError :  [Errno 2] ..."): Python never prints
// one; it is two ranks' copies of the same line run together, debris inside the traceback they interleave.
bool IsSpacedOutExceptionLine(std::string_view msg) {
  const size_t name_end = msg.find(' ');
  if (name_end == std::string_view::npos || name_end == 0) return false;
  const size_t colon = msg.find_first_not_of(' ', name_end);
  if (colon == std::string_view::npos || msg[colon] != ':') return false;
  const std::string joined = std::string(msg.substr(0, name_end)) + std::string(msg.substr(colon));
  std::string_view type, text;
  return ParseExceptionLine(joined, &type, &text);
}

// Another rank's traceback frame glued after this line's own text ("main()      File \"x.py\", line 71, in
// main", "    main()  File ..."): ranks writing one stream at once ran two lines together. Python prints a
// frame line only at a line's start; with no exception shape before it, the line is debris inside the
// traceback the ranks interleave, never its exception line.
bool HasGluedFrameLine(std::string_view msg) {
  for (size_t at = msg.find("File \""); at != std::string_view::npos; at = msg.find("File \"", at + 1)) {
    if (at == 0 || msg[at - 1] != ' ' || msg.find_first_not_of(" \t") >= at) continue;
    if (!IsFrameLine(msg.substr(at))) continue;
    std::string_view type, text;
    return !ParseExceptionLine(msg, &type, &text);
  }
  return false;
}

// Another rank's copy (or copies) of the source line this traceback just printed, its indent lost because
// the ranks wrote one stream at once ("return func(*args, **kwargs)return func(*args, **kwargs)"): debris
// inside the traceback, not its exception line. Caret marks between the copies belong to them.
bool IsCopyOfSourceLine(std::string_view msg, std::string_view source) {
  if (source.size() < 4) return false;
  size_t copies = 0;
  for (;;) {
    const size_t i = msg.find_first_not_of(" \t^~");
    if (i == std::string_view::npos) break;
    msg.remove_prefix(i);
    if (msg.substr(0, source.size()) != source) return false;
    msg.remove_prefix(source.size());
    ++copies;
  }
  return copies > 0;
}

// A bare exception line with no message ("TimeoutError",
// "torch.cuda.OutOfMemoryError"): a class name, whose last dotted part
// starts with a capital. A lower-case word alone is the tail of a frame line
// that a paste wrapped ("... in start_worker_exe" / "cution_loop").
bool IsBareExceptionName(std::string_view msg) {
  if (msg.empty() || Contains(msg, " ")) return false;
  const size_t dot = msg.rfind('.');
  const char first = msg[dot == std::string_view::npos ? 0 : dot + 1];
  return first >= 'A' && first <= 'Z';
}

// A line of Python's `warnings` module: "{file}:{lineno}: {Category}Warning: {message}". Its
// message may go on over indented lines (autograd anomaly mode's "Traceback of forward call that
// caused the error:" lists frames), then the warned line's source, indented: none of it is a
// traceback.
bool IsWarningHeader(std::string_view msg) {
  static const RE2 kWarning(R"(^(?:[A-Za-z]:)?[^\s:]+:\d+: [A-Z]\w*Warning: )");
  return RE2::PartialMatch(msg, kWarning);
}

// An elision mark a paste puts where it left lines out: "...", "......",
// "…", CJK full stops ("。。。"), a vertical ellipsis. Inside a traceback
// it stands for frames (or other ranks' lines) that were cut, never for the
// exception line.
bool IsElisionMark(std::string_view msg) {
  static constexpr std::string_view kMarks[] = {".", "…", "。", "⋮", "·"};
  size_t dots = 0;
  size_t i = 0;
  while (i < msg.size()) {
    if (msg[i] == ' ' || msg[i] == '\t' || msg[i] == '\r') {
      ++i;
      continue;
    }
    bool hit = false;
    for (auto m : kMarks) {
      if (msg.substr(i, m.size()) == m) {
        i += m.size();
        ++dots;
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return dots >= 2 || (dots == 1 && msg.find("…") != std::string_view::npos) ||
         (dots == 1 && msg.find("⋮") != std::string_view::npos);
}

LineInfo Info(const LineView& line) {
  return LineInfo{line.file, line.line, std::string(line.parsed->text), line.template_id};
}

void AddContext(Event& e, const LineView& line) {
  if (e.context.size() >= EventBuilder::kMaxContextLines) {
    // Keep the head (what started it) and the newest frames.
    e.context.erase(e.context.begin() + 2);
  }
  e.context.push_back(Info(line));
}

void AddMatches(Event& e, const LineView& line) {
  if (line.matches) e.matches.insert(e.matches.end(), line.matches->begin(), line.matches->end());
}

// Digits masked: identical events from many threads/ranks fold into one.
std::string TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// NCCL's "Last error:" continuation line with the line under it filled in: of several copies of
// one DistBackendError, often only one names the failed call.
bool HasLastErrorDetail(const Event& e) {
  auto trimmed = [](std::string_view t) {
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
    return t;
  };
  for (size_t i = 0; i + 1 < e.continuation.size(); ++i) {
    std::string_view t = trimmed(e.continuation[i].text);
    if (t.size() >= 11 && t.substr(t.size() - 11) == "Last error:" && !trimmed(e.continuation[i + 1].text).empty())
      return true;
  }
  return false;
}

std::string FoldKey(const Event& e) {
  std::string key = std::string(EventKindName(e.kind)) + "|" + e.process.key + "|";
  for (char c : e.message) key += (c >= '0' && c <= '9') ? '#' : c;
  return key;
}

}  // namespace

EventBuilder::ProcessState& EventBuilder::StateFor(const parse::ParsedLine& p) {
  // vLLM's logger repeats its header on every line of a record, while the
  // same process writes raw tracebacks to stderr too: the two interleave
  // line by line, so they are assembled as two streams.
  if (p.format == "vllm") {
    std::string key(p.process);
    key += "\x1flogger";
    return processes_[key];
  }
  return processes_[std::string(p.process)];
}

EventBuilder::ProcessState& EventBuilder::RouteUnprefixed(const LineView& line, ProcessState& own) {
  const parse::ParsedLine& p = *line.parsed;
  if (!p.process.empty() || !p.format.empty() || own.state != State::kIdle || own.has_pending ||
      last_traceback_key_.empty()) {
    return own;
  }
  auto it = processes_.find(last_traceback_key_);
  if (it == processes_.end() || !it->second.has_pending || it->second.pending.kind != EventKind::kPythonTraceback) {
    return own;
  }
  ProcessState& open = it->second;
  // Only lines right below the open traceback's last line continue it.
  const LineInfo& last = open.pending.context.empty() ? open.pending.where : open.pending.context.back();
  if (last.file != line.file || line.line - last.line > 2) return own;
  std::string_view msg = p.message;
  if (open.state == State::kInTraceback) return open;  // frames, then the exception line
  if (open.state == State::kAfterException && (msg.empty() || Indented(msg) || (line.structure & kChainMarker))) {
    return open;
  }
  // The exception's message goes on, unprefixed like the frames were (NCCL's
  // "ncclSystemError: ..." and "Last error:" lines under a DistBackendError).
  // Under an exception line that carried its process's prefix, a plain
  // unprefixed line is another process's output ("Loading extension module
  // ..." under "[rank1]: RuntimeError: Error building extension").
  if (open.state == State::kAfterException && open.last_routed && open.lines_since_key < 4 &&
      (line.structure & ~kExceptionShape) == 0) {
    return open;
  }
  return own;
}

void EventBuilder::UpdateOpen(ProcessState& ps) {
  bool open = ps.state != State::kIdle || ps.has_pending;
  if (open != ps.open) {
    open_count_ += open ? 1 : -1;
    ps.open = open;
  }
}

namespace {

// asyncio's "Task exception was never retrieved", then "future: <Task finished name=... coro=...
// exception=...>" (a line or a few, when a terminal wrapped it), then the traceback.
constexpr int64_t kLateReportWindow = 6;
// A RayTaskError's remote traceback re-printed under the local one: its frames, then its exception.
constexpr int64_t kLateReportTail = 30;

}  // namespace

bool EventBuilder::ContinuesLateReport(const ProcessState& ps, int64_t line) {
  return ps.late_report_until >= 0 && line > ps.late_report_until && line - ps.late_report_until <= kLateReportTail;
}

void EventBuilder::MarkListing(ProcessState& ps) {
  ps.pending.message = "Stack listing (frames with no traceback header and no exception line)";
  ps.pending.listing = true;
  ps.pending.cut_off = true;
  ps.headerless = false;
}

void EventBuilder::Emit(ProcessState& ps) {
  if (!ps.has_pending) {
    ps.state = State::kIdle;
    return;
  }
  Event e = std::move(ps.pending);
  ps.pending = Event();
  ps.has_pending = false;
  ps.known_header = false;
  ps.state = State::kIdle;
  ps.after_flat_source = false;
  ps.message_is_control_flow = false;
  ps.headerless = false;
  ps.under_warning_record = false;
  // A traceback a logger printed at WARNING level or below did not end the process: an error line, not a fatal one.
  // So is an exception line alone under such a header (a paste that starts inside that traceback).
  if (e.logged && (e.kind == EventKind::kPythonTraceback || e.kind == EventKind::kExceptionLine))
    e.kind = EventKind::kErrorLog;
  ps.late_report_until = e.reported_late && !e.context.empty() ? e.context.back().line : -1;
  std::string key = FoldKey(e);
  if (has_held_ && key == last_key_) {
    // The same error printed twice by one process (vLLM logs a traceback and
    // stderr gets it raw): the first printed copy is the one to point at,
    // unless only a later copy says what failed (its "Last error:" detail).
    const bool more_detail = HasLastErrorDetail(e) && !HasLastErrorDetail(held_);
    if (more_detail || (e.where.file == held_.where.file && e.where.line < held_.where.line &&
                        HasLastErrorDetail(e) == HasLastErrorDetail(held_))) {
      e.repeats = held_.repeats;
      held_ = std::move(e);
    }
    ++held_.repeats;
    return;
  }
  if (has_held_) sink_(std::move(held_));
  held_ = std::move(e);
  last_key_ = std::move(key);
  has_held_ = true;
}

void EventBuilder::StartTraceback(ProcessState& ps, const LineView& line) {
  ps.last_source.clear();
  ps.flat = ps.after_flat_frame = ps.after_flat_source = false;
  ps.interleaved_records = 0;
  Event e;
  e.kind = EventKind::kPythonTraceback;
  const parse::ParsedLine& p = *line.parsed;
  e.process = ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
  e.time = p.time;
  if (ps.has_pending && ps.pending.kind == EventKind::kErrorLog && ps.lines_since_key <= 2) {
    // logger.exception("msg"): the ERROR line introduces this traceback.
    e.context = std::move(ps.pending.context);
    e.matches = std::move(ps.pending.matches);
    if (!ps.pending.time.valid)
      e.time = p.time;
    else
      e.time = ps.pending.time;
  } else if (ps.has_pending) {
    Emit(ps);
  }
  e.where = Info(line);  // until the exception line is seen
  e.logged = LoggedBelowError(p);
  ps.under_warning_record = traceback_under_warning_record_;
  ps.traceback_indent = LeadingBlanks(p.message);
  ps.powershell_record_lines = IsPowerShellRecordHeader(p.message) ? kMaxPowerShellRecordLines : 0;
  ps.ipython_traceback = IsIPythonTracebackHeader(p.message);
  e.chained = ps.chain_marker_line >= 0 && e.where.line - ps.chain_marker_line <= 3;
  ps.chain_marker_line = -1;
  e.ignored = ps.ignored_line >= 0 && e.where.line - ps.ignored_line <= 2;
  ps.ignored_line = -1;
  // asyncio's "Task exception was never retrieved", then "future: <Task finished name=... coro=...
  // exception=...>" (a line or a few, when a terminal wrapped it), then the traceback.
  // (A frame with no header continues the report; a new "Traceback (most recent call last):" is a new one.)
  e.reported_late = (ps.late_report_line >= 0 && e.where.line - ps.late_report_line <= kLateReportWindow) ||
                    (IsFrameLine(p.message) && ContinuesLateReport(ps, e.where.line));
  ps.late_report_line = -1;
  AddContext(e, line);
  ps.pending = std::move(e);
  ps.has_pending = true;
  ps.state = State::kInTraceback;
  ps.lines_since_key = 0;
}

namespace {
// A line of a multi-line what() text that says what failed, not where: neither a source location
// ("(core/Action.cpp:240) void PLMD::Action::error(...) const", "+++ at PlumedMain.cpp:706, function ...") nor a
// banner or bare label of the thrower's framing ("+++ PLUMED error", "+++ message follows +++", "ERROR").
bool WhatTextLine(std::string_view text) {
  text = TrimLeft(text);
  if (text.empty()) return false;
  if (text.starts_with("+++") || text.starts_with("***") || text.starts_with("---") || text.starts_with("===")) {
    return false;
  }
  if (text.front() == '(') {  // "(file.cpp:240) function": a location
    const size_t close = text.find(')');
    if (close != std::string_view::npos) {
      const std::string_view inside = text.substr(1, close - 1);
      const size_t colon = inside.rfind(':');
      if (colon != std::string_view::npos && colon + 1 < inside.size() &&
          inside.find_first_not_of("0123456789", colon + 1) == std::string_view::npos) {
        return false;
      }
    }
  }
  // A bare label: one word of capitals ("ERROR", "FATAL").
  if (text.find(' ') == std::string_view::npos && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_:") == std::string_view::npos) {
    return false;
  }
  return true;
}

// "  what():  MESSAGE": the second line of a C++ terminate report (std::terminate's handler prints it
// indented under "terminate called after throwing an instance of 'T'").
bool StartsWithWhat(std::string_view msg) {
  const size_t start = msg.find_first_not_of(" \t");
  return start != std::string_view::npos && msg.substr(start, 7) == "what():";
}
}  // namespace

// The first line of Tcl's error trace under an uncaught error's message (Tcl_LogCommandInfo: "\n    while
// executing\n\"cmd\"", "while compiling" for a compile error).
static bool IsTclTraceStart(std::string_view msg) {
  return msg == "    while executing" || msg == "    while compiling";
}

void EventBuilder::SingleLine(ProcessState& ps, const LineView& line) {
  const parse::ParsedLine& p = *line.parsed;
  std::string_view msg = p.message;
  if (line.benign) return;
  Event e;
  e.process = ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
  e.time = p.time;
  e.where = Info(line);
  e.message = TrimRight(msg);
  // A line of only carets under a source line (Python 3.11's position marks, each carrying the logger's
  // header in a paste that starts inside a traceback) says nothing.
  if (!e.message.empty() && e.message.find_first_not_of("^~ \t") == std::string::npos) return;
  AddMatches(e, line);
  bool wait_for_more = false;
  std::string_view type, text;
  bool is_exit = false;
  std::string signal;
  static const RE2 kTerminateType(R"(terminate called after throwing an instance of '([^']+)')");
  static const RE2 kKernelAssertRe(R"(Assertion .* failed|Assertion failed: [\w./-]+:\d+)");
  std::string type_name;
  if ((line.structure & kTerminate) && RE2::PartialMatch(msg, kTerminateType, &type_name)) {
    e.kind = EventKind::kCxxTerminate;
    e.exception = type_name;
    wait_for_more = true;  // what(): comes on the next line
  } else if ((line.structure & kTerminate) && Contains(msg, "terminate called")) {
    e.kind = EventKind::kCxxTerminate;
  } else if ((line.structure & kTerminate) && StartsWithWhat(msg)) {
    // A terminate's "  what():  MESSAGE" with no "terminate called after throwing ..." before it in this
    // process: a paste (or a stream interleaved with another's) that starts at the what() line. It is the
    // same uncaught C++ exception, only its type is lost: a fatal terminate whose message is the what() text
    // (and goes on below: a CUDA error's hints, c10's "Exception raised from ...").
    std::string_view what = msg.substr(msg.find("what():") + 7);
    while (!what.empty() && (what.front() == ' ' || what.front() == '\t')) what.remove_prefix(1);
    if (what.empty()) return;
    e.kind = EventKind::kCxxTerminate;
    e.message = TrimRight(what);
    wait_for_more = true;
  } else if ((line.structure & kTerminate) && msg.substr(0, 8) == "thread '" && Contains(msg, "' panicked at ")) {
    // A Rust panic, the runtime's report of an uncaught one (std's default hook): "thread 'main' panicked at
    // 'MESSAGE', src/main.rs:4:5" before Rust 1.73, "thread 'main' panicked at src/main.rs:4:5:" and the
    // message on the lines under it since. Rust's uncaught exception: the message (or the header ending in
    // ':' and its continuation) says what failed.
    e.kind = EventKind::kExceptionLine;
    e.chain.push_back(std::string(msg));
    wait_for_more = true;  // the message continues below
  } else if ((line.structure & kKernelAssert) && RE2::PartialMatch(msg, kKernelAssertRe)) {
    e.kind = EventKind::kCudaKernelAssert;
  } else if ((line.structure & (kSignalShape | kExitShape)) && !(signal = SignalOrExit(msg, &is_exit)).empty()) {
    e.kind = is_exit ? EventKind::kExitStatus : EventKind::kSignal;
  } else if ((line.structure & kExceptionShape) &&
             (ParseExceptionLine(msg, &type, &text) || PytestExceptionLine(&msg, &type, &text) ||
              PytestSummaryLine(&msg, &type, &text))) {
    // (msg is now the exception without pytest's "E   " column or summary's test id, when it had one.)
    e.message = TrimRight(msg);
    e.kind = EventKind::kExceptionLine;
    e.exception = std::string(type);
    e.logged = LoggedBelowError(p);
    // "Exception ignored in: ..." then only the exception (one without a traceback): swallowed too.
    e.ignored = ps.ignored_line >= 0 && e.where.line - ps.ignored_line == 1;
    if (e.ignored) ps.ignored_line = -1;
    e.reported_late = ContinuesLateReport(ps, e.where.line);
    e.chain.push_back(std::string(msg));
    wait_for_more = true;  // multi-line messages (CUDA errors) continue below
  } else if (p.format == "nccl" && p.level == parse::Level::kWarning) {
    e.kind = EventKind::kNcclWarn;
  } else if ((line.structure & kCompilerError) && !LoggedBelowError(p)) {
    // (A compiler's diagnostic quoted in a record its logger wrote at WARNING level or below was handled by
    // the program that logged it: vLLM's "Failed to initialize FlashInfer All Reduce workspace: Ninja build
    // failed." puts nvcc's "x.cuh(446): error: ..." output on WARNING lines and falls back. No event, unless
    // a rule knows the line: the branch below.)
    e.kind = EventKind::kCompilerError;  // the detail under a build or launch failure
    wait_for_more = true;                // "CMake Error at X (message):" goes on below
  } else if ((p.level == parse::Level::kError || p.level == parse::Level::kCritical) && !e.message.empty()) {
    // (An error header with no text is no event: a paste wrapped its text onto the next line.)
    e.kind = EventKind::kErrorLog;
    // The ERROR record of a handler that caught the exception it reports (asyncio's "Exception in callback
    // ..."): swallowed, like the traceback under it.
    e.ignored = ps.ignored_line == e.where.line && AsyncioCallbackReport(msg.substr(std::min(msg.size(), LeadingBlanks(msg))));
    wait_for_more = true;  // may introduce a traceback
  } else if (line.cascade_rule || (line.matches && !line.matches->empty())) {
    e.kind = (line.structure & kSignalShape) ? EventKind::kSignal : EventKind::kErrorLog;
    // A line only a signature knows whose message ends in ':' goes on below, as an ERROR record's does
    // (hydra's compact report "Error in call to target 'X':" with the caught exception's repr on the next line).
    wait_for_more = !line.cascade_rule && AnnouncesMore(e.message);
  } else {
    return;
  }
  e.context.push_back(e.where);
  if (ps.has_pending) Emit(ps);
  const bool known_header = wait_for_more && e.kind != EventKind::kPythonTraceback && !line.cascade_rule &&
                            (line.matches && !line.matches->empty()) && p.level != parse::Level::kError &&
                            p.level != parse::Level::kCritical && !(line.structure & kCompilerError);
  ps.pending = std::move(e);
  ps.has_pending = true;
  ps.known_header = known_header;
  ps.lines_since_key = 0;
  ps.state = wait_for_more ? State::kAfterException : State::kIdle;
  if (!wait_for_more) Emit(ps);
}

// A traceback's source line (indented, no frame line, no carets, no elision) is kept: when the
// traceback is cut off before its exception line, the last one is where it stopped.
void EventBuilder::RememberSourceLine(ProcessState& ps, std::string_view msg) {
  if (!Indented(msg) || IsFrameLine(msg)) return;
  while (!msg.empty() && (msg.front() == ' ' || msg.front() == '\t')) msg.remove_prefix(1);
  while (!msg.empty() && (msg.back() == ' ' || msg.back() == '\t')) msg.remove_suffix(1);
  if (msg.empty() || msg == "..." || msg.find_first_not_of("^~ ") == std::string_view::npos) return;
  ps.last_source.assign(msg.substr(0, 300));
}

bool EventBuilder::ContinuesTraceback(ProcessState& ps, std::string_view msg, bool starts_segment) {
  // A flattened traceback: an unindented frame line, the source line
  // right after it (unless that is already the exception: a frame with no
  // source, '<frozen runpy>'), and caret lines are frames, not its end.
  // A frame line the paste wrapped puts its tail ("l grads", "pipelining
  // without interleaving") before the source line: after such a tail the
  // next plain line is still the frame's source.
  std::string_view ex_type, ex_text;
  const bool flat_frame = !Indented(msg) && IsFrameLine(msg);
  const bool plain = !flat_frame && !msg.empty() && !ParseExceptionLine(msg, &ex_type, &ex_text) && !starts_segment;
  const bool flat_source = plain && (ps.after_flat_frame || (ps.flat && ps.after_flat_source));
  const bool flat_carets = ps.flat && !msg.empty() && msg.find_first_not_of("^~ ") == std::string_view::npos;
  // A blank line between a flat frame and its source line (a paste with a blank line after every line)
  // keeps the frame pending: an empty line changes neither state.
  if (!msg.empty()) {
    // (Only a tail of plain lower-case words can be the wrapped frame's: a real source line has code in it.)
    ps.after_flat_source = ps.after_flat_frame && flat_source && msg[0] >= 'a' && msg[0] <= 'z' &&
                           msg.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_ ") == std::string_view::npos;
    ps.after_flat_frame = flat_frame;
  }
  if (flat_frame) ps.flat = true;
  return msg.empty() || Indented(msg) || starts_segment || IsElisionMark(msg) || flat_frame || flat_source ||
         flat_carets || IsIPythonTracebackLine(msg, ps.ipython_traceback);
}

void EventBuilder::Add(const LineView& line) {
  const parse::ParsedLine& p = *line.parsed;
  ProcessState& own = StateFor(p);
  ProcessState& ps = RouteUnprefixed(line, own);
  ps.last_routed = &ps != &own;
  std::string_view msg = p.message;
  // Tcl's report of an uncaught error (errorInfo, printed by tclsh and every Tcl-embedding tool: Swift/T's
  // turbine, EDA tools, expect): the message line, then "    while executing" (or "    while compiling") and the
  // command, "    invoked from within" for each outer level, "    (file \"x.tcl\" line 70)". The interpreter
  // exits on it: the message line right above, of the same process, is an exception line whatever its words
  // ("can't find package turbine 1.2.3", "invalid command name \"foo\"").
  if ((line.structure & kTclTrace) && IsTclTraceStart(msg) && ps.state == State::kIdle && !line.above.empty() &&
      !(ps.has_pending && ps.pending.where.file == line.file && ps.pending.where.line == line.line - 1)) {
    const parse::ParsedLine above = parse::ParseLine(line.above);
    const std::string above_msg = TrimRight(above.message);
    if (above.process == p.process && !above_msg.empty() && !Indented(above_msg)) {
      Event e;
      e.kind = EventKind::kExceptionLine;
      e.process = ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
      e.time = p.time;
      e.where = LineInfo{line.file, line.line - 1, std::string(TrimRight(line.above)), -1};
      e.message = above_msg;
      e.context.push_back(e.where);
      e.context.push_back(Info(line));
      if (ps.has_pending) Emit(ps);
      ps.pending = std::move(e);
      ps.has_pending = true;
      ps.lines_since_key = 0;
      Emit(ps);
      return;
    }
  }
  const bool traceback_start = (line.structure & kTracebackStart) && Contains(msg, "Traceback (most recent call last)");
  const bool chain_marker = (line.structure & kChainMarker) != 0;
  // A bare traceback header right under a WARNING record is that record's exception info.
  traceback_under_warning_record_ = traceback_start && p.format.empty() && line.after_warning_record;
  // The indented lines under a warning belong to it (frames it lists, the warned source line).
  const bool warning_header = (line.structure & kWarningHeader) && IsWarningHeader(msg);
  if (ps.in_warning && !warning_header && !msg.empty() && !Indented(msg)) ps.in_warning = false;
  // A log (or a paste) that starts inside a traceback: its first frame
  // opens the traceback that its exception line will close.
  // (An ERROR-logged source line just before that frame is the same traceback's debris, when every line of
  // the record carries the logger's header: it joins the traceback instead of standing as an error.)
  const bool debris_pending = ps.state == State::kAfterException && ps.has_pending &&
                              ps.pending.kind == EventKind::kErrorLog && ps.lines_since_key == 0 &&
                              ps.pending.chain.empty() && Indented(ps.pending.message);
  const bool orphan_frame = (ps.state == State::kIdle || debris_pending) && (!ps.has_pending || debris_pending) &&
                            !ps.in_warning && (line.structure & kFrameLine) && IsFrameLine(msg);

  if (ps.state == State::kInTraceback && ps.powershell_record_lines > 0) {
    // PowerShell's error record between the header and the first frame: its lines are no exception line
    // (the localized position line "At line:1 char:1", "所在位置 行:1 字符: 72", ...), up to its
    // FullyQualifiedErrorId line. A frame line ends it early: the record was not printed.
    if (IsFrameLine(TrimLeft(msg))) {
      ps.powershell_record_lines = 0;
    } else {
      --ps.powershell_record_lines;
      if (TrimLeft(msg).starts_with("+ FullyQualifiedErrorId")) ps.powershell_record_lines = 0;
      AddContext(ps.pending, line);
      UpdateOpen(ps);
      return;
    }
  }
  if (ps.state == State::kInTraceback) {
    if (ps.traceback_indent > 0 && !msg.empty() && LeadingBlanks(msg) >= ps.traceback_indent) {
      // An indented traceback: its own column 0 is the indent of its start line.
      msg = msg.substr(ps.traceback_indent);
    }
    // A line that starts with another rank's caret run is this traceback's frame, source or debris; only a
    // clean exception line after the run ends it. A spaced-out exception line, and a line with another rank's
    // frame glued after its own text, are such debris too.
    if (IsSpacedOutExceptionLine(msg) || HasGluedFrameLine(msg)) {
      AddContext(ps.pending, line);
      UpdateOpen(ps);
      return;
    }
    if (const size_t carets = LeadingCaretRun(msg); carets > 0) {
      std::string_view rest = msg.substr(carets), rest_type, rest_text;
      if (!ParseExceptionLine(rest, &rest_type, &rest_text)) {
        AddContext(ps.pending, line);
        UpdateOpen(ps);
        return;
      }
      msg = rest;
    }
    if (!msg.empty() && !Indented(msg) && IsCopyOfSourceLine(msg, ps.last_source)) {
      AddContext(ps.pending, line);
      UpdateOpen(ps);
      return;
    }
    if (ContinuesTraceback(ps, msg, traceback_start || chain_marker)) {
      if (traceback_start) ps.last_source.clear();
      RememberSourceLine(ps, msg);
      // A benign rule on a frame: the traceback went through code that catches and prints (multiprocessing's
      // _run_finalizers): it was handled, like one under "Exception ignored in".
      if (line.benign) ps.pending.ignored = true;
      AddContext(ps.pending, line);
      AddMatches(ps.pending, line);  // frame lines name the code that raised (launcher frames)
      UpdateOpen(ps);
      return;
    }
    // The first unindented line ends a traceback segment: the exception.
    std::string_view type, text;
    const bool exception_shape = ParseExceptionLine(msg, &type, &text) || IsBareExceptionName(TrimRight(msg));
    // A record with a logger header at INFO level or below ("INFO:torch.distributed.elastic...:log directory
    // set to: ..." of another node's agent) is no exception line, whatever its words: another process
    // wrote it between this traceback's lines. The traceback stays open for its own exception line (a
    // few such records at most: a traceback that really ended without one is not held open for long).
    if (!exception_shape && !p.format.empty() && p.level != parse::Level::kUnknown &&
        p.level <= parse::Level::kInfo && ps.interleaved_records < kMaxInterleavedRecords) {
      ++ps.interleaved_records;
      UpdateOpen(ps);
      return;
    }
    // A traceback that began at a frame with no header, closed by a line with no exception shape and no error
    // words (a stack printer's "Printing stack" above its per-thread dump, the next thread's header): no
    // exception was raised - the frames were a stack listing (Event::listing), and the line is read afresh.
    if (ps.headerless && !exception_shape && ps.pending.chain.empty() && !msg.empty() && !Contains(msg, "Error") &&
        !Contains(msg, "Exception") && !Contains(msg, "error") && !Contains(msg, ": ") && !LoggedBelowError(p)) {
      MarkListing(ps);
      Emit(ps);
      SingleLine(ps, line);
      UpdateOpen(ps);
      return;
    }
    if (exception_shape) {
      if (ps.pending.exception.empty() && ps.pending.chain.empty()) {
        ps.pending.exception = std::string(type.empty() ? msg : type);
      }
    }
    // No exception shape and no error words: a status line of another
    // process ("Loading extension module utils..."), not a raised error
    // whose type the parser does not know (RayTaskError(RuntimeError): ...).
    // Nor is a record with its own logger header at WARNING level or below, whatever its words (another
    // rank's "[TensorRT-LLM][WARNING] prompt_embedding_table: expected dim[1] = 4096, ..." between this
    // traceback's "File" line and its source line): if the traceback goes on right under it, it was another
    // writer's record.
    ps.tentative_exception = !exception_shape &&
                             ((!Contains(msg, "Error") && !Contains(msg, "Exception") && !Contains(msg, "error") &&
                               !Contains(msg, ": ")) ||
                              LoggedBelowError(p));
    if (ps.tentative_exception) {
      ps.before_exception = ps.pending.message;
      ps.before_where = ps.pending.where;
      ps.foreign_after_tentative = 0;
    }
    if (ps.pending.chain.empty() || (ps.message_is_control_flow && exception_shape && !line.control_flow)) {
      // The first exception of the chain; or the one raised while handling a control-flow
      // exception (importlib's bare StopIteration, then PackageNotFoundError: ...), which says what failed.
      if (!ps.pending.chain.empty()) {
        // The control-flow exception's own signature no longer explains the event.
        const int64_t old_line = ps.pending.where.line;
        std::erase_if(ps.pending.matches, [&](const RuleMatch& m) { return m.line == old_line; });
        if (!type.empty()) ps.pending.exception = std::string(type);
        ps.pending.chain_message = ps.pending.chain.size();
      }
      ps.pending.message = TrimRight(msg);
      ps.pending.where = Info(line);
      ps.message_is_control_flow = line.control_flow;
    }
    ps.pending.chain.push_back(std::string(msg));
    AddMatches(ps.pending, line);
    AddContext(ps.pending, line);
    ps.state = State::kAfterException;
    ps.lines_since_key = 0;
    UpdateOpen(ps);
    return;
  }

  if (ps.state == State::kAfterException) {
    // The traceback under a WARNING record ends in that record's own fields (TGI's " rank=0"): it was the
    // record's message, the exception that record reports as handled; the fields line ends the record.
    if (ps.under_warning_record && ps.lines_since_key <= 1 && IsTracingFieldsLine(msg)) {
      ps.pending.logged = true;
      AddContext(ps.pending, line);
      Emit(ps);
      UpdateOpen(ps);
      return;
    }
    // (A blank line between them is the paste's wrap, as in "... in " / "forward" / "".)
    if (ps.tentative_exception && ps.lines_since_key <= 1 && Indented(msg) &&
        ps.pending.kind == EventKind::kPythonTraceback) {
      // The traceback goes on under a line with no exception shape: that line
      // was another process's output interleaved (unprefixed ranks).
      ps.tentative_exception = false;
      ps.pending.chain.pop_back();
      ps.pending.message = ps.before_exception;
      ps.pending.where = ps.before_where;
      AddContext(ps.pending, line);
      AddMatches(ps.pending, line);
      ps.state = State::kInTraceback;
      UpdateOpen(ps);
      return;
    }
    // More lines like the tentative one (unindented, no exception shape, no error words): another writer's
    // output goes on between the traceback's lines; they stay out of the traceback and it may still reopen.
    if (ps.tentative_exception && ps.lines_since_key == 0 && ps.pending.kind == EventKind::kPythonTraceback &&
        ps.foreign_after_tentative < kMaxForeignAfterTentative && !msg.empty() && !Indented(msg) &&
        !(line.structure & (kFrameLine | kTracebackStart | kChainMarker))) {
      std::string_view type, text;
      if (!ParseExceptionLine(msg, &type, &text) && !IsBareExceptionName(TrimRight(msg)) && !Contains(msg, "Error") &&
          !Contains(msg, "Exception") && !Contains(msg, "error") && !Contains(msg, ": ") && !LoggedBelowError(p)) {
        ++ps.foreign_after_tentative;
        UpdateOpen(ps);
        return;
      }
    }
    if (!msg.empty()) ps.tentative_exception = false;
    if (chain_marker && ps.pending.kind == EventKind::kPythonTraceback) {
      AddContext(ps.pending, line);
      ps.state = State::kInTraceback;
      return;
    }
    if (ps.pending.kind == EventKind::kCxxTerminate && Contains(msg, "terminate called") && !Contains(msg, "what():")) {
      AddContext(ps.pending, line);  // another thread dying the same way; its what() follows
      UpdateOpen(ps);
      return;
    }
    if (ps.pending.kind == EventKind::kCxxTerminate && ps.what_follows) {
      // The lines of a what() text that started with a newline (ProcessState::what_follows).
      constexpr int kMaxWhatLines = 12;
      const std::string text(TrimRight(msg));
      // Its lines are the exception's text: an "ERROR ..." word or an exception-shaped phrase in them is
      // part of it; any other shape (the signal report, a frame, a new terminate) ends it.
      const bool text_shape = (line.structure & ~(kLevelError | kExceptionShape)) == 0;
      if (!text.empty() && text_shape && ps.what_lines < kMaxWhatLines) {
        ++ps.what_lines;
        AddContext(ps.pending, line);
        AddMatches(ps.pending, line);
        ps.pending.continuation.push_back(Info(line));
        if (!ps.what_found && WhatTextLine(text)) {
          ps.what_found = true;
          ps.pending.message = ps.pending.exception + ": " + std::string(TrimLeft(text));
          ps.pending.where = Info(line);
        }
        UpdateOpen(ps);
        return;
      }
      ps.what_follows = false;  // this line ends the what() text: read as after any exception, below
    } else if (ps.pending.kind == EventKind::kCxxTerminate && Contains(msg, "what():")) {
      std::string_view what = msg.substr(msg.find("what():") + 7);
      while (!what.empty() && what.front() == ' ') what.remove_prefix(1);
      ps.pending.message = ps.pending.exception + ": " + TrimRight(what);
      ps.pending.where = Info(line);
      AddMatches(ps.pending, line);
      AddContext(ps.pending, line);
      if (TrimRight(what).empty()) {
        // what() printed nothing on its own line: its text is on the lines below (what_follows).
        ps.what_follows = true;
        ps.what_lines = 0;
        ps.what_found = false;
        UpdateOpen(ps);
        return;
      }
      Emit(ps);
      UpdateOpen(ps);
      return;
    }
    if (!traceback_start && !orphan_frame) {
      // Python 3.11's position marks under the source line a logger record printed first (a paste that starts
      // inside a traceback at a source line) belong to that line: the frame below absorbs both (debris_pending).
      if (ps.pending.kind == EventKind::kErrorLog && ps.lines_since_key == 0 && Indented(ps.pending.message) &&
          msg.find('^') != std::string_view::npos && msg.find_first_not_of("^~ \t") == std::string_view::npos) {
        UpdateOpen(ps);
        return;
      }
      ++ps.lines_since_key;
      // vLLM repeats the logger header on every line of a record, so a header
      // alone does not start a new record; an INFO/WARNING line does.
      // (A traceback logged at WARNING level repeats that header on its exception's next lines too.)
      const bool other_record = !p.format.empty() && p.level != parse::Level::kError &&
                                p.level != parse::Level::kCritical && p.level != parse::Level::kUnknown &&
                                !ps.pending.logged;
      if (msg.empty() && ps.lines_since_key <= 2) {
        UpdateOpen(ps);
        return;
      }
      // Continuation of a multi-line message: plain text, no new event shape
      // (an ERROR header repeated on every line of the record is no shape).
      uint32_t shape = line.structure;
      if (p.level == parse::Level::kError && !p.format.empty()) shape &= ~kLevelError;
      const bool near = ps.lines_since_key <= 4;
      // NCCL's own error name right under DistBackendError ("ncclUnhandledCudaError: ...") is
      // part of the message, not a new exception.
      if (near && ps.pending.kind != EventKind::kCxxTerminate) shape &= ~kExceptionShape;
      const bool has_rule = line.matches && !line.matches->empty();
      // An ERROR line is a record of its own (vLLM repeats the header on every line), unless plain lines
      // without a log header (a wrapper's or process prefix is fine: it is the same process) follow that
      // continue it: its message ends in ':' ("[TRT-LLM] [E] Failed to
      // initialize executor on rank 0:" / "The checkpoint you are trying ..."), or they are indented under
      // it (pydantic's "  Value error, ..." under "1 validation error for TrtLlmArgs").
      // A header only a signature knows goes on only with the exception it names (hydra's "Error in call to
      // target 'X':" over the caught exception's repr "FileNotFoundError(2, '...')"): other text under such a
      // line is no part of it.
      const bool error_log_goes_on = ps.pending.kind == EventKind::kErrorLog && p.format.empty() &&
                                     (ps.known_header ? NamesAnException(msg)
                                                      : (AnnouncesMore(ps.pending.message) || Indented(msg)));
      if (ps.lines_since_key <= kMaxContinuationLines && (near || !has_rule) && !other_record && shape == 0 &&
          !msg.empty() && (ps.pending.kind != EventKind::kErrorLog || error_log_goes_on)) {
        AddContext(ps.pending, line);
        if (near) AddMatches(ps.pending, line);
        ps.pending.continuation.push_back(Info(line));
        UpdateOpen(ps);
        return;
      }
    }
    // Anything else closes the pending event (an ERROR line followed by a
    // traceback start is absorbed by StartTraceback).
    if (!((traceback_start || orphan_frame) && ps.pending.kind == EventKind::kErrorLog)) Emit(ps);
  }

  if (chain_marker) ps.chain_marker_line = Info(line).line;
  if (line.structure & kIgnoredMarker) {
    const std::string_view lead = msg.substr(std::min(msg.size(), LeadingBlanks(msg)));
    const int64_t at = Info(line).line;
    if (lead.starts_with("Exception ignored in")) ps.ignored_line = at;
    // CPython Lib/site.py execsitecustomize() / execusercustomize(): a sitecustomize (or usercustomize) module
    // that raised on import is reported as "Error in sitecustomize; set PYTHONVERBOSE for traceback:" and the
    // exception's "TYPE: message" on the next line, and Python starts anyway: that exception ended nothing.
    if (lead.starts_with("Error in sitecustomize; set PYTHONVERBOSE") ||
        lead.starts_with("Error in usercustomize; set PYTHONVERBOSE"))
      ps.ignored_line = at;
    if (lead.starts_with("Task exception was never retrieved")) ps.late_report_line = at;
    // asyncio's event loop runs a callback (Handle._run) and, when it raises, hands the exception to its
    // exception handler and goes on (Lib/asyncio/events.py Handle._run -> loop.call_exception_handler; the
    // default handler, base_events.py default_exception_handler, logs "Exception in callback <Handle ...>"
    // at ERROR, then "handle: <Handle ...>" and the traceback): the exception went no further. (Not a task:
    // a task's exception is its awaiter's, "Task exception was never retrieved" when nobody awaited it.)
    if (AsyncioCallbackReport(lead)) ps.ignored_line = at;
    // CPython logging's Handler.handleError (a record that could not be written: a console that
    // cannot encode it, a closed stream): "--- Logging error ---", the traceback, then "Call stack:"
    // and the frames of the logging call (traceback.print_stack), "Message: ..." and "Arguments: ...".
    // The logging module swallowed the error: none of it ends the process.
    if (TrimRight(lead) == "--- Logging error ---") ps.ignored_line = ps.logging_error_line = at;
    constexpr int64_t kCallStackWindow = 200;  // lines from the marker to its "Call stack:"
    if (TrimRight(lead) == "Call stack:" && ps.logging_error_line >= 0 &&
        at - ps.logging_error_line <= kCallStackWindow) {
      ps.ignored_line = at;
      ps.logging_error_line = -1;
    }
  }
  if (warning_header && ps.state == State::kIdle) ps.in_warning = true;
  if (traceback_start || orphan_frame) {
    StartTraceback(ps, line);
    // (Frames a logger wrote at ERROR level are an error's traceback, whatever was cut: no listing.)
    ps.headerless = !traceback_start && p.level < parse::Level::kError;
    if (orphan_frame && !Indented(msg)) ps.flat = ps.after_flat_frame = true;
    if (!p.process.empty())
      last_traceback_key_ = p.format == "vllm" ? std::string(p.process) + "\x1flogger" : std::string(p.process);
    UpdateOpen(ps);
    return;
  }
  SingleLine(ps, line);
  UpdateOpen(ps);
}

void EventBuilder::Finish() {
  // Flush in the order the open events began, not the map's order.
  std::vector<ProcessState*> open;
  for (auto& [key, ps] : processes_) open.push_back(&ps);
  std::stable_sort(open.begin(), open.end(), [](const ProcessState* a, const ProcessState* b) {
    return a->has_pending && (!b->has_pending || a->pending.where.line < b->pending.where.line);
  });
  for (ProcessState* state : open) {
    ProcessState& ps = *state;
    if (ps.has_pending && ps.state == State::kInTraceback && ps.pending.message.empty() && ps.headerless &&
        ps.pending.chain.empty()) {
      MarkListing(ps);  // frames only, from the first line to the end: a stack listing (Event::listing)
    } else if (ps.has_pending && ps.state == State::kInTraceback && ps.pending.message.empty()) {
      // A traceback cut off before its exception line: keep what we have,
      // as evidence that ranks below any concrete error (ranker.h).
      ps.pending.message = "Traceback (cut off before its exception line)";
      // The last source line it printed is where it stopped (a check's message, the call that failed):
      // the only clue to what the missing exception line would have said.
      if (!ps.last_source.empty()) ps.pending.message += " \u2014 last source line: " + ps.last_source;
      ps.pending.cut_off = true;
    }
    Emit(ps);
  }
  if (has_held_) sink_(std::move(held_));
  has_held_ = false;
  processes_.clear();
  open_count_ = 0;
  last_traceback_key_.clear();
}

}  // namespace faultline::events
