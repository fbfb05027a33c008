#include "diagnosis/ranker.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "rules/rule_loader.h"

namespace faultline::diagnosis {

using events::Event;
using events::EventKind;
using rules::RuleKind;

bool CausallyBefore(const events::LineInfo& a, const parse::Timestamp& ta, const events::LineInfo& b,
                    const parse::Timestamp& tb, bool multi_file) {
  if (multi_file && a.file != b.file && ta.valid && tb.valid) {
    if (ta.year != 0 && tb.year != 0 && ta.year != tb.year) return ta.year < tb.year;
    int64_t ka = ta.OrderKey(), kb = tb.OrderKey();
    if (ka != kb) return ka < kb;
  }
  if (a.file != b.file) return a.file < b.file;
  return a.line < b.line;
}

// A rule on the event's key line (the innermost exception) speaks for the
// event; a signature elsewhere in it (a continuation line) is the fallback.
// Cascade rules count only on the key line: a chained traceback whose outer
// exception is a consequence still has a real cause inside.
std::optional<size_t> FirstRuleOfKind(const Event& e, const rules::RuleSet& rules, RuleKind kind) {
  for (const auto& m : e.matches) {
    if (rules.rules()[m.rule].kind == kind && m.line == e.where.line) return m.rule;
  }
  if (kind == RuleKind::kCascade) {
    // A launcher's own frames make its traceback a consequence.
    for (const auto& m : e.matches) {
      if (rules.rules()[m.rule].kind == kind && rules.rules()[m.rule].frames) return m.rule;
    }
    return std::nullopt;
  }
  for (const auto& m : e.matches) {
    if (rules.rules()[m.rule].kind == kind) return m.rule;
  }
  return std::nullopt;
}

namespace {

std::string Masked(const std::string& s) {
  std::string out;
  for (char c : s) out += (c >= '0' && c <= '9') ? '#' : c;
  return out;
}

// A Python traceback the interpreter printed on its way out: its outermost frame is the script's
// top level (`in <module>`, or runpy's `_run_module_as_main` for `python -m`). That process ended.
bool DiedUncaught(const Event& e) {
  if (e.kind != EventKind::kPythonTraceback || e.cut_off) return false;
  for (const auto& c : e.context) {
    std::string_view t = c.text;
    if (t.find("File \"") == std::string_view::npos || t.find("\", line ") == std::string_view::npos) continue;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.remove_suffix(1);
    auto ends = [&](std::string_view s) { return t.size() >= s.size() && t.substr(t.size() - s.size()) == s; };
    return ends("in <module>") || ends("in _run_module_as_main");
  }
  return false;
}

bool Unrecoverable(const Event& e, const rules::RuleSet& rules) {
  auto sig = FirstRuleOfKind(e, rules, RuleKind::kSignature);
  return sig && rules.rules()[*sig].unrecoverable;
}

std::string Where(const Findings& f, const Event& e) {
  return fmt::format("line {}{}", FileLine(f, e.where), e.process.key.empty() ? "" : fmt::format(" ({})", e.process.key));
}

// Generic: its signature is a generic wrapper error, or its own line also
// carries one (torch's "InductorError: CalledProcessError: Command ...
// returned non-zero exit status 1" wraps a failed subprocess: the
// compiler's own diagnostic above says why, whatever the outer type).
std::optional<size_t> GenericRuleOf(const Event& e, const rules::RuleSet& rules) {
  auto sig = FirstRuleOfKind(e, rules, RuleKind::kSignature);
  if (!sig) return std::nullopt;
  if (rules.rules()[*sig].generic) return sig;
  for (const auto& m : e.matches) {
    const auto& r = rules.rules()[m.rule];
    if (r.kind == RuleKind::kSignature && r.generic && m.line == e.where.line) return m.rule;
  }
  return std::nullopt;
}

bool IsGeneric(const Event& e, const rules::RuleSet& rules) { return GenericRuleOf(e, rules).has_value(); }

// A line with no process identity of its own (a compiler, NCCL or a C++
// runtime writing to the raw stderr): unprefixed, or carrying only the
// identity an outer wrapper gave every line (docker compose's service, a
// journald unit, a Slurm task and the rank srun --label gives it) that the process it sits beside shares.
bool UnprefixedBeside(const Event& e, const Event& g) {
  if (e.where.file != g.where.file) return false;
  if (e.process.key.empty()) return true;
  if (!e.process.role.empty() || e.process.pid >= 0) return false;
  if (e.process.rank >= 0 && e.process.rank != g.process.rank) return false;
  return e.process.key == g.process.parent || g.process.key.starts_with(e.process.key + "/");
}

// The same process: the same file, and the same demultiplexing key or a known pid.
bool SameProcessAt(const events::LineInfo& a, const events::ProcessId& pa, const events::LineInfo& b,
                   const events::ProcessId& pb) {
  if (a.file != b.file) return false;
  return pa.key == pb.key || (pa.pid >= 0 && pa.pid == pb.pid);
}

bool SameProcess(const Event& a, const Event& b) { return SameProcessAt(a.where, a.process, b.where, b.process); }

// The error a generic wrapper stands for: the first non-generic fatal or
// known error after it in the same process (the wrapped exception Ray,
// TorchScript or dynamo print below their own), else the last weak error
// before it there (the NCCL WARN or compiler diagnostic that an "unhandled
// system error" or "PassManager::run failed" summarises).
std::optional<size_t> SpecificFor(size_t root, const std::vector<size_t>& order, const std::vector<bool>& recovered,
                                  const Findings& f, const rules::RuleSet& rules) {
  constexpr int64_t kWindow = 400;  // lines
  const auto& ev = f.events;
  const Event& g = ev[root];
  // A later exception whose own line carries the generic error again (torch's
  // "InductorError: RuntimeError: PassManager::run failed") re-raises it: it
  // is no more specific than the wrapper.
  const auto generic_rule = FirstRuleOfKind(g, rules, RuleKind::kSignature);
  auto rewraps = [&](const Event& e) {
    for (const auto& m : e.matches) {
      if (generic_rule && m.rule == *generic_rule && m.line == e.where.line) return true;
    }
    return false;
  };
  auto usable = [&](size_t j) {
    const Event& e = ev[j];
    return j != root && !recovered[j] && SameProcess(e, g) && !e.cut_off &&
           !FirstRuleOfKind(e, rules, RuleKind::kCascade) && !IsGeneric(e, rules) && !rewraps(e);
  };
  // The tracebacks chained onto the wrapper ("During handling of the above
  // exception" after the build output that closed it) re-raise it: the
  // output between them (ninja's log in "Ninja build failed. Ninja output:")
  // belongs to the wrapper, and they are no more specific than it.
  int64_t chain_end = g.where.line;
  std::vector<size_t> rewrapping;
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || !SameProcess(e, g) || e.where.line <= chain_end) continue;
    if (!events::IsStrong(e.kind)) continue;
    if (!e.chained || e.where.line > chain_end + kWindow) break;
    chain_end = e.where.line;
    rewrapping.push_back(j);
  }
  std::optional<size_t> chained_after;
  for (size_t j : order) {
    const Event& e = ev[j];
    if (!usable(j) || e.where.line <= g.where.line || e.where.line > g.where.line + kWindow) continue;
    if (!events::IsStrong(e.kind) && !FirstRuleOfKind(e, rules, RuleKind::kSignature)) continue;
    // A death after it (the shell's "Killed", a signal report, an exit status) is how the failed
    // process ended, not what failed in it: the wrapped exception is not printed after the wrapper.
    if (e.kind == EventKind::kSignal || e.kind == EventKind::kExitStatus) continue;
    if (std::find(rewrapping.begin(), rewrapping.end(), j) == rewrapping.end()) return j;
    if (!chained_after) chained_after = j;
  }
  // Before it: a known error beats a compiler's diagnostic beats an NCCL
  // WARN beats an ERROR line; the latest of the best kind wins, except for
  // compiler diagnostics: a compiler's first error is the cause and what
  // follows it (more errors, "compilation terminated", ninja's "build
  // stopped") is its consequence. Compilers and NCCL write to the raw
  // stderr, so unprefixed output counts too.
  auto score = [&](const Event& e) {
    if (FirstRuleOfKind(e, rules, RuleKind::kSignature)) return 4;
    if (e.kind == EventKind::kCompilerError) return 3;
    if (e.kind == EventKind::kNcclWarn) return 2;
    return 1;
  };
  auto candidate = [&](size_t j) {
    const Event& e = ev[j];
    if (e.where.line >= chain_end || events::IsStrong(e.kind)) return false;
    const bool stderr_of_it = UnprefixedBeside(e, g);
    return !(j == root || recovered[j] || e.cut_off || FirstRuleOfKind(e, rules, RuleKind::kCascade) ||
             IsGeneric(e, rules) || !(SameProcess(e, g) || stderr_of_it));
  };
  std::optional<size_t> best;
  int best_score = 0;
  for (size_t j : order) {
    if (ev[j].where.line < g.where.line - kWindow || !candidate(j)) continue;
    const int sc = score(ev[j]);
    if (sc > best_score || (sc == best_score && sc != 3)) best = j, best_score = sc;
  }
  // A compiler's output is a run of diagnostics (with the IR or source it
  // quotes between them): the run's first error is the cause, however far
  // the run reaches back, as long as no gap in it is wider than the window.
  if (best && best_score == 3) {
    for (auto it = std::find(order.rbegin(), order.rend(), *best); it != order.rend(); ++it) {
      const Event& e = ev[*it];
      if (e.where.file != ev[*best].where.file || e.where.line < ev[*best].where.line - kWindow) continue;
      if (candidate(*it) && e.kind == EventKind::kCompilerError && !FirstRuleOfKind(e, rules, RuleKind::kSignature))
        best = *it;
    }
  }
  if (best) return best;
  if (chained_after) return chained_after;
  // Nothing of its own process explains it: a collective's generic error
  // (NCCL's "unhandled cuda error" in one worker) is often the echo of a
  // peer's failure printed with it (that worker's CUDA illegal memory
  // access). The first known, non-generic error of another process of the
  // same file (a worker with a pid or rank) shortly after it says what failed.
  constexpr int64_t kPeerWindow = 100;  // lines
  std::optional<size_t> peer;
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || recovered[j] || e.cut_off || e.where.file != g.where.file || SameProcess(e, g)) continue;
    // A peer is a worker of its own (a pid or rank), not the launcher's or the shell's unprefixed output.
    if (e.process.pid < 0 && e.process.rank < 0) continue;
    if (e.where.line <= g.where.line || e.where.line > g.where.line + kPeerWindow) continue;
    if (!FirstRuleOfKind(e, rules, RuleKind::kSignature) || FirstRuleOfKind(e, rules, RuleKind::kCascade) ||
        IsGeneric(e, rules))
      continue;
    if (!peer || e.where.line < ev[*peer].where.line) peer = j;
  }
  return peer;
}

// A generic wrapper whose wrapped exception is itself a generic error of another kind: Ray's bare
// "RayTaskError: ray::TaskRunner.run()" (a cause Ray could not subclass into RayTaskError(T)) over the
// remote traceback's pydantic "ValidationError: 1 validation error for Settings". The first such inner
// wrapper printed after it in its process (its traceback's own exception, not a re-raise of the same
// wrapper) is nearer the cause; what it stands for, or its own message, says what failed.
std::optional<size_t> InnerWrapperFor(size_t root, const std::vector<size_t>& order, const std::vector<bool>& recovered,
                                      const Findings& f, const rules::RuleSet& rules) {
  constexpr int64_t kWindow = 400;  // lines, as SpecificFor's
  const auto& ev = f.events;
  const Event& g = ev[root];
  // Only an exception wraps an exception: a raylet's "A worker died" report or an ERROR line is no wrapper
  // whose traceback prints the error it stands for.
  auto raised = [](const Event& e) {
    return e.kind == EventKind::kPythonTraceback || e.kind == EventKind::kExceptionLine;
  };
  if (!raised(g)) return std::nullopt;
  const auto outer = GenericRuleOf(g, rules);
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || recovered[j] || !SameProcess(e, g) || e.cut_off) continue;
    if (e.where.line <= g.where.line || e.where.line > g.where.line + kWindow) continue;
    if (!raised(e) || FirstRuleOfKind(e, rules, RuleKind::kCascade)) continue;
    const auto inner = GenericRuleOf(e, rules);
    if (!inner || inner == outer) continue;
    bool rewraps = false;
    for (const auto& m : e.matches) rewraps = rewraps || (outer && m.rule == *outer && m.line == e.where.line);
    if (rewraps) continue;
    return j;
  }
  return std::nullopt;
}

// An error only logged before the fatal one (a WARNING that a native
// extension failed to import) whose signature says it explains it: the
// fatal "'_C' object has no attribute 'rms_norm'" is what that failed
// import leaves behind. The latest such error of its process wins. A
// notice printed just after the fatal line that names who caused it (the
// scheduler's "Detected 1 oom_kill event" under the shell's "Killed") also
// explains it, when nothing before does.
std::optional<size_t> ExplainedBy(size_t root, const std::vector<size_t>& order, const std::vector<bool>& recovered,
                                  const Findings& f, const rules::RuleSet& rules) {
  constexpr int64_t kWindow = 2000;     // lines
  constexpr int64_t kAfterWindow = 20;  // lines
  const auto& ev = f.events;
  const Event& g = ev[root];
  std::optional<size_t> best, after;
  std::optional<size_t> best_sig;  // the signature of best, while the run of its reports is unbroken
  bool run_open = false;
  const auto root_sig = FirstRuleOfKind(g, rules, RuleKind::kSignature);
  std::map<size_t, std::unique_ptr<RE2>> compiled;  // per rule: many events may carry the same one
  // The first line after the root that holds another event of its file (0: none), found once rather than
  // once per later event.
  int64_t first_after = 0;
  for (size_t k = 0; k < ev.size(); ++k) {
    const Event& b = ev[k];
    if (k != root && b.where.file == g.where.file && b.where.line > g.where.line &&
        (first_after == 0 || b.where.line < first_after)) {
      first_after = b.where.line;
    }
  }
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || e.where.file != g.where.file || recovered[j] || e.cut_off) continue;
    const bool later = e.where.line > g.where.line;
    // Later: within a few lines, or further on with no other error of the file between them (a
    // scheduler's report, appended after the job's output, names the reason the job was killed).
    // No other error of the file lies between them when nothing of the file comes after the root before it.
    auto nothing_between = [&] { return first_after <= 0 || e.where.line <= first_after; };
    if (later ? after || (e.where.line > g.where.line + kAfterWindow && !nothing_between())
              : e.where.line == g.where.line || e.where.line < g.where.line - kWindow || events::IsStrong(e.kind)) {
      continue;
    }
    if (!(SameProcess(e, g) || UnprefixedBeside(e, g) || UnprefixedBeside(g, e))) continue;
    auto sig = FirstRuleOfKind(e, rules, RuleKind::kSignature);
    // A run of reports of one signature with nothing else of the process between them (the ROCm
    // runtime's "HW Exception by GPU node-9 ..." once per agent) is one error: its first line is where it
    // was reported, so the run keeps its first report.
    const bool continues_run = run_open && sig && best_sig && *sig == *best_sig && !later;
    if (!continues_run) run_open = false;
    if (!sig || rules.rules()[*sig].explains.empty() || sig == root_sig) continue;  // not a copy of itself
    auto& re = compiled[*sig];
    if (!re) re = std::make_unique<RE2>(rules.rules()[*sig].explains, RE2::Quiet);
    const RE2& explains = *re;
    bool hit = RE2::PartialMatch(g.message, explains);
    for (const auto& c : g.chain) hit = hit || RE2::PartialMatch(c, explains);
    if (!hit || continues_run) continue;
    (later ? after : best) = j;
    if (!later) best_sig = sig, run_open = true;
  }
  return best ? best : after;
}

// A shell's job-control report of a child that died of a signal ("run.sh: line 197: 2985003 Aborted
// (core dumped) cmd ...", bash's report for every script) names the child's pid. When that pid's own output
// (NCCL's "host:pid:tid" lines) holds only consequences of a failure elsewhere (its NCCL socket "Connection
// closed by remote peer", the watchdog taking the process down) and no error of its own, the death the shell
// reports is that consequence too: how the process ended, not what failed. Like a launcher's summary, it is
// the root only when nothing else reports the failure.
bool ShellReportOfAConsequence(size_t i, const Findings& f, const rules::RuleSet& rules,
                               const std::vector<bool>& recovered) {
  static const RE2 kJobReport(
      R"((?:^|: )line \d+: +(\d+) +(?:Aborted|Killed|Segmentation fault|Bus error|Illegal instruction|Floating point exception)\b)");
  const auto& ev = f.events;
  int64_t pid = 0;
  if (!RE2::PartialMatch(ev[i].message, kJobReport, &pid) || pid <= 0) return false;
  bool echo = false;
  for (size_t j = 0; j < ev.size(); ++j) {
    if (j == i || ev[j].process.pid != pid || recovered[j]) continue;
    if (FirstRuleOfKind(ev[j], rules, RuleKind::kCascade)) {
      echo = true;
    } else if (events::IsStrong(ev[j].kind) || FirstRuleOfKind(ev[j], rules, RuleKind::kSignature)) {
      return false;  // an error of its own: that one is the cause, the shell's report its end
    }
  }
  return echo;
}

bool IsTermination(const Event& e) {
  const std::string& m = e.message;
  return m.find("SIGTERM") != std::string::npos || m.find("exitcode: -15") != std::string::npos ||
         m.find("exit code -15") != std::string::npos || m.find("Terminated") != std::string::npos;
}

// The earliest stop in causal order (sets r->stop) and, per event, whether it
// comes at or after it: a KeyboardInterrupt traceback, torchrun's
// SignalException, a peer's broken pipe are what stopping a job looks like.
// A tentative stop (a client retrying its connection: the process is still
// waiting) stands only when the wait is where its process ended: a later
// phase mark (the retry connected and the job went on) or a later fatal
// error of the same process (the wait gave up: that error is the answer)
// overtakes it. Later retries of the same wait do not.
bool Overtaken(const StopHit& s, const Findings& f, const rules::RuleSet& rules, bool multi_file) {
  auto is_tentative_stop_line = [&](const events::LineInfo& w) {
    return std::any_of(f.stops.begin(), f.stops.end(), [&](const StopHit& t) {
      return rules.rules()[t.rule].tentative && t.where.file == w.file && t.where.line == w.line;
    });
  };
  for (const auto& ph : f.phases) {
    if (ph.fallback) continue;  // words, no framework's mark: no recovery
    const bool has_last = ph.last.line > 0;
    const auto& w = has_last ? ph.last : ph.where;
    const auto& t = has_last ? ph.last_time : ph.time;
    if (SameProcessAt(w, ph.process, s.where, s.process) && CausallyBefore(s.where, s.time, w, t, multi_file) &&
        !is_tentative_stop_line(w)) {
      return true;
    }
  }
  return std::any_of(f.events.begin(), f.events.end(), [&](const Event& e) {
    return events::IsStrong(e.kind) && !e.cut_off && SameProcessAt(e.where, e.process, s.where, s.process) &&
           CausallyBefore(s.where, s.time, e.where, e.time, multi_file);
  });
}

// A launcher's summary that a task exited with an error code just before the stop, in the same file (srun's
// "task 1: Exited with exit code 1", "Terminating StepId=...", then slurmstepd's "*** STEP ... CANCELLED AT
// ... ***"): the launcher cancelled the step because that task failed. The cancel is its cleanup, not a
// stop from outside; a task's end after the stop ("task 0: Terminated") is the stop's consequence instead.
// Likewise a memory kill the scheduler reports just before its cancel (slurmstepd's "Job N exceeded memory limit
// (X > Y), being killed" or "Detected 1 oom_kill event in StepId=...", then "*** JOB N ON node CANCELLED AT ...
// ***"): a signature of category oom says the job was killed for memory, and the cancel is how that kill ends
// the job, not a stop from outside.
bool CancelledByTheLauncher(const StopHit& s, const Findings& f, const rules::RuleSet& rules,
                            const std::vector<bool>& recovered) {
  constexpr int64_t kWindow = 10;  // lines
  if (rules.rules()[s.rule].fatal) return false;
  for (size_t i = 0; i < f.events.size(); ++i) {
    const Event& e = f.events[i];
    if (recovered[i] || e.cut_off || e.where.file != s.where.file || e.where.line >= s.where.line ||
        e.where.line < s.where.line - kWindow) {
      continue;
    }
    auto sig = FirstRuleOfKind(e, rules, RuleKind::kSignature);
    if (sig && rules.rules()[*sig].category == "oom") return true;
    if (e.kind != EventKind::kExitStatus || IsTermination(e)) continue;
    auto cascade = FirstRuleOfKind(e, rules, RuleKind::kCascade);
    if (cascade && rules.rules()[*cascade].summary) return true;
  }
  return false;
}

std::vector<bool> AfterStop(const Findings& f, const rules::RuleSet& rules, bool multi_file,
                            const std::vector<bool>& recovered, Ranking* r, bool* cancelled_by_launcher) {
  std::vector<bool> after(f.events.size(), false);
  for (size_t i = 0; i < f.stops.size(); ++i) {
    const StopHit& s = f.stops[i];
    if (rules.rules()[s.rule].tentative && Overtaken(s, f, rules, multi_file)) continue;
    if (CancelledByTheLauncher(s, f, rules, recovered)) {
      *cancelled_by_launcher = true;
      continue;
    }
    if (!r->stop || CausallyBefore(s.where, s.time, f.stops[*r->stop].where, f.stops[*r->stop].time, multi_file)) {
      r->stop = i;
    }
  }
  // A scheduler's limit that ended the job (a fatal stop) after that stop, in the same file, says why the
  // signal came: Slurm sends SIGTERM at --time and prints its "CANCELLED AT ... DUE TO TIME LIMIT" line while
  // the launchers it signalled log "received SIGTERM" (DeepSpeed's launcher, torchrun's agent) first.
  if (r->stop && !rules.rules()[f.stops[*r->stop].rule].fatal) {
    const StopHit& first = f.stops[*r->stop];
    for (size_t i = 0; i < f.stops.size(); ++i) {
      const StopHit& s = f.stops[i];
      if (rules.rules()[s.rule].fatal && s.where.file == first.where.file &&
          CausallyBefore(first.where, first.time, s.where, s.time, multi_file)) {
        r->stop = i;
        break;
      }
    }
  }
  if (!r->stop) return after;
  const StopHit& stop = f.stops[*r->stop];
  for (size_t i = 0; i < f.events.size(); ++i) {
    const Event& e = f.events[i];
    after[i] = !CausallyBefore(e.where, e.time, stop.where, stop.time, multi_file);
    // asyncio reports a task that died unobserved only when the task is collected (at exit, after the
    // Ctrl-C that ended a loop waiting on it): the task failed before the stop, and is why it waited.
    if (e.reported_late) {
      after[i] = false;
      continue;
    }
    // A C++ terminate whose report has no what() line ("terminate called after throwing an instance of
    // 'c10::DistBackendError'" alone), right above the stop's line in the same file, is the stop's own
    // exception printed out of order: ProcessGroupNCCL's watchdog logs "Process group watchdog thread
    // terminated with exception: ... Watchdog caught collective operation timeout ..." and rethrows it, and
    // std::terminate's header can reach a shared stream (torchrun's rank prefixes, a tee) before the
    // logged line, whose text is the missing what().
    if (e.kind == EventKind::kCxxTerminate && e.where.file == stop.where.file && e.where.line < stop.where.line &&
        stop.where.line - e.where.line <= 2 && e.message.rfind("terminate called after throwing an instance of", 0) == 0) {
      after[i] = true;
      continue;
    }
    // A chained traceback whose later exception is the stop (vLLM's "TimeoutError: RPC call to
    // execute_model timed out." raised from the queue's bare TimeoutError) is the stop itself: the
    // exceptions before it in the chain are how the timeout was raised.
    if (after[i] || e.chain.size() < 2) continue;
    for (const auto& c : e.context) {
      if (c.file == stop.where.file && c.line == stop.where.line) after[i] = true;
    }
  }
  return after;
}

// With no root cause, what the stop set off is still listed, with why.
void ListStopConsequences(const Findings& f, const rules::RuleSet& rules, const std::vector<bool>& after, Ranking* r) {
  const StopHit& stop = f.stops[*r->stop];
  r->why.push_back(fmt::format("the job was stopped from outside at line {} ({}); no fatal error came before it",
                               FileLine(f, stop.where), rules.rules()[stop.rule].id));
  for (size_t i : r->order) {
    if (std::find(r->recovered.begin(), r->recovered.end(), i) != r->recovered.end()) continue;
    CascadeDecision d;
    d.event = i;
    d.reason = after[i] ? fmt::format("after the stop at line {}: {}", FileLine(f, stop.where), rules.rules()[stop.rule].reason)
                        : fmt::format("logged before the stop at line {} and did not end the job",
                                      FileLine(f, stop.where));
    r->cascade.push_back(std::move(d));
  }
}

// An exception's line (no traceback: "ncclSystemError: System call ... failed") right under a weak error
// of its own process (ProcessGroupNCCL's watchdog logging "[E511 ...] ... found async exception when
// checking for NCCL errors: NCCL error: unhandled system error ...", then the c10::Error's what() text and
// its "Exception raised from ..." frames) is that logged record's text, not an exception of its own.
bool InWeakRecord(size_t i, const Findings& f) {
  constexpr int64_t kWindow = 3;  // lines from the logged record to its what() text
  const Event& e = f.events[i];
  if (e.kind != EventKind::kExceptionLine) return false;
  for (size_t j = 0; j < f.events.size(); ++j) {
    const Event& w = f.events[j];
    if (j == i || (w.kind != EventKind::kErrorLog && w.kind != EventKind::kNcclWarn) || !SameProcess(w, e)) continue;
    if (w.where.file == e.where.file && w.where.line < e.where.line && e.where.line - w.where.line <= kWindow)
      return true;
  }
  return false;
}

// A native death after the job said it completed (torchtitan's "Training
// completed", then "terminate called without an active exception" / "Fatal
// Python error: Aborted" while the process group is destroyed at exit; a
// watchdog's terminate at teardown): the work was done. When nothing but such
// deaths and their echoes (the launcher's summary and exit status, a peer's
// "connection closed": cascades) failed, they are noise of the teardown and
// set aside like a recovered error; so are weak errors after the marker (ERROR
// logs, NCCL WARN: the proxy's "Accept failed", the watchdog's async NCCL error
// of a peer already gone), and a command-line tool's own "error: ..." after it (a
// wrapper's clean-up command). So is an exit report naming SIGTERM (a worker
// the shutdown terminated). A Python exception after the marker (a final save
// that failed) is a failure as before.
void SetAsideTeardownAfterCompletion(const Findings& f, const rules::RuleSet& rules, bool multi_file,
                                     std::vector<bool>* recovered) {
  const auto& ev = f.events;
  const PhaseHit* done = nullptr;
  for (const auto& ph : f.phases) {
    if (!ph.completes || ph.interrupted || rules.rules()[ph.rule].exit_only) continue;
    if (!done || CausallyBefore(ph.where, ph.time, done->where, done->time, multi_file)) done = &ph;
  }
  if (!done) return;
  std::vector<size_t> teardown;
  for (size_t i = 0; i < ev.size(); ++i) {
    if ((*recovered)[i]) continue;
    const Event& e = ev[i];
    const bool after = CausallyBefore(done->where, done->time, e.where, e.time, multi_file);
    if (FirstRuleOfKind(e, rules, RuleKind::kCascade) || e.kind == EventKind::kExitStatus) {
      if (after) teardown.push_back(i);
      continue;
    }
    // A weak error after the marker (NCCL's proxy or watchdog warnings while the process group is torn
    // down, a logged NCCL error of a peer already gone) is teardown noise too; a Python exception is not.
    // So is a command-line tool's own diagnostic ("error: ...") after it: a wrapper's clean-up command
    // (kubectl's "error: resource(s) were provided, but no name was specified" in a CI monitor's wait loop
    // once the test job said OK), not the finished job.
    const bool weak = e.kind == EventKind::kErrorLog || e.kind == EventKind::kNcclWarn ||
                      e.kind == EventKind::kCompilerError || (after && InWeakRecord(i, f));
    if ((e.kind != EventKind::kCxxTerminate && e.kind != EventKind::kSignal && !weak) || !after) return;  // a real error
    // A phase first marked between the completion and the death is a new
    // stage (an evaluation, a server started by the same pipeline): the death
    // ended that stage, not the finished job's teardown.
    const bool new_stage = std::any_of(f.phases.begin(), f.phases.end(), [&](const PhaseHit& ph) {
      return !ph.completes && !ph.fallback && CausallyBefore(done->where, done->time, ph.where, ph.time, multi_file) &&
             CausallyBefore(ph.where, ph.time, e.where, e.time, multi_file);
    });
    if (new_stage) return;
    teardown.push_back(i);
  }
  // An exit report that names SIGTERM is a process the teardown itself terminated, not one that failed
  // without a word: Ray's raylet once the driver finished and shut the cluster down ("Worker exits unexpectedly
  // by a signal. SystemExit is raised (sys.exit is called). Exit code: 1. The process receives a SIGTERM.").
  static const RE2 kTerminated(R"(\bSIGTERM\b)");
  const bool died = std::any_of(teardown.begin(), teardown.end(), [&](size_t i) {
    const EventKind k = ev[i].kind;
    if (k == EventKind::kCxxTerminate || k == EventKind::kSignal) return true;
    if (k == EventKind::kExitStatus && RE2::PartialMatch(ev[i].message, kTerminated)) return true;
    // A weak error of its own (not a launcher's summary, itself logged at ERROR level) is teardown noise too.
    return (k == EventKind::kErrorLog || k == EventKind::kNcclWarn || k == EventKind::kCompilerError) &&
           !FirstRuleOfKind(ev[i], rules, RuleKind::kCascade);
  });
  if (!died) return;  // only a launcher's summary after the marker: a rank failed without a word
  for (size_t i : teardown) (*recovered)[i] = true;
}

// A traceback whose "exception line" is a frame or carets of another copy:
// several ranks printed one traceback at the same time, character by
// character, and the builder took a garbled line ("^^^^  File \"train.py\",
// line 3544, in <module>") for its end. The first whole exception line of
// the same process printed soon after it (the copy that came through
// intact) says what failed.
std::optional<size_t> WholeCopyOf(size_t root, const std::vector<size_t>& order, const std::vector<bool>& recovered,
                                  const std::vector<bool>& stopped, const Findings& f, const rules::RuleSet& rules) {
  constexpr int64_t kWindow = 100;  // lines
  const auto& ev = f.events;
  const Event& g = ev[root];
  if (g.kind != EventKind::kPythonTraceback || !g.exception.empty() || FirstRuleOfKind(g, rules, RuleKind::kSignature))
    return std::nullopt;
  std::string_view msg = g.message;
  const size_t text = msg.find_first_not_of("^~ \t");
  if (text == std::string_view::npos || text == 0) return std::nullopt;  // carets only, or a line of its own
  msg.remove_prefix(text);
  if (!(msg.starts_with("File \"") && msg.find("\", line ") != std::string_view::npos)) return std::nullopt;
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || recovered[j] || stopped[j] || !SameProcess(e, g) || e.where.line <= g.where.line) continue;
    if (e.where.file != g.where.file || e.where.line > g.where.line + kWindow) continue;
    if (!events::IsStrong(e.kind) || e.exception.empty() || e.cut_off) continue;
    if (FirstRuleOfKind(e, rules, RuleKind::kCascade) || IsGeneric(e, rules)) continue;
    if (e.message.find_first_of("^") != std::string::npos) continue;  // garbled too
    return j;
  }
  return std::nullopt;
}


// NCCL reports a failed CUDA (HIP) call twice: its call site's WARN names the
// call and the runtime's error string, then CUDACHECK's generic WARN repeats
// the error alone (src/include/checks.h: WARN("Cuda failure '%s'",
// cudaGetErrorString(err)); RCCL's transport/p2p.cc prints "hipIpcGetMemHandle
// failed : invalid argument", then "Cuda failure 'invalid argument'"). When the
// root is that repeat, the call site's WARN just above it in the same process,
// carrying the same error string, says which call failed.
std::optional<size_t> CallSiteOf(size_t root, const std::vector<size_t>& order, const std::vector<bool>& recovered,
                                 const Findings& f) {
  constexpr int64_t kWindow = 3;  // lines: the two WARNs are printed back to back, NCCL's blank line between
  static const RE2 kRepeat(R"((?:Cuda|HIP) failure:? (?:\d+ )?'([^']+)')");
  const auto& ev = f.events;
  const Event& g = ev[root];
  if (g.kind != EventKind::kNcclWarn) return std::nullopt;
  std::string error;
  if (!RE2::PartialMatch(g.message, kRepeat, &error) || error.empty()) return std::nullopt;
  std::optional<size_t> site;
  for (size_t j : order) {
    const Event& e = ev[j];
    if (j == root || recovered[j] || e.kind != EventKind::kNcclWarn || !SameProcess(e, g)) continue;
    if (e.where.line >= g.where.line || e.where.line < g.where.line - kWindow) continue;
    if (RE2::PartialMatch(e.message, kRepeat) || e.message.find(error) == std::string::npos) continue;
    if (!site || e.where.line > ev[*site].where.line) site = j;
  }
  return site;
}
}  // namespace

Ranking Rank(const Findings& f, const rules::RuleSet& rules, bool multi_file) {
  Ranking r;
  const auto& ev = f.events;
  r.order.resize(ev.size());
  for (size_t i = 0; i < ev.size(); ++i) r.order[i] = i;
  std::stable_sort(r.order.begin(), r.order.end(), [&](size_t a, size_t b) {
    return CausallyBefore(ev[a].where, ev[a].time, ev[b].where, ev[b].time, multi_file);
  });

  // Recovered: the same process reached ready/training after the error. A traceback Python's
  // unraisable hook printed ("Exception ignored in: ...") was swallowed: the process went on.
  // A mark on a stop's own line is no going on: NCCL's watchdog reporting the collective it gave up on
  // (WorkNCCL(SeqNum=500045, ...) ran for 600038 milliseconds) says where the process was stuck since the
  // error, not that it went on after it.
  std::set<std::pair<int, int64_t>> stop_lines;
  for (const auto& s : f.stops) stop_lines.emplace(s.where.file, s.where.line);
  std::vector<bool> recovered(ev.size(), false);
  for (size_t i = 0; i < ev.size(); ++i) {
    // So is a stack listing (Event::listing): frames of a live process, no exception raised.
    if (ev[i].ignored || ev[i].listing) recovered[i] = true;
    // A launcher's or scheduler's summary that one task or step ended badly (srun's `task 0: Exited with
    // exit code 1` of a setup step, in the batch script's stream) before the job's own completion marker,
    // of whatever process: the job went on past that step and finished.
    // So is an NCCL WARN: NCCL's lines carry their own host:pid:tid prefix, so the progress lines of the
    // same process (unprefixed) never match it; the job finished past it (a CollNet/SHARP init that
    // failed and fell back).
    auto summary_rule = FirstRuleOfKind(ev[i], rules, RuleKind::kCascade);
    const bool summary = (summary_rule && rules.rules()[*summary_rule].summary) || ev[i].kind == EventKind::kNcclWarn;
    for (const auto& ph : f.phases) {
      if (ph.fallback) continue;  // words, no framework's mark: no recovery
      if (summary && ph.completes && !ph.interrupted && !rules.rules()[ph.rule].exit_only &&
          CausallyBefore(ev[i].where, ev[i].time, ph.where, ph.time, multi_file)) {
        recovered[i] = true;
      }
      if (ph.interrupted) continue;  // a stop's traceback: where the process was, not progress after an error
      int idx = rules::PhaseIndex(ph.phase);
      // The latest mark counts: a server that answered requests after an
      // error (a request's 404 or 400, logged with a traceback) kept serving.
      const bool later_mark = ph.last.line > 0;
      if (!later_mark && IsTracebackFrame(ph.where.text)) continue;  // where an error was raised
      const events::LineInfo& mark = later_mark ? ph.last : ph.where;
      const parse::Timestamp& mark_time = later_mark ? ph.last_time : ph.time;
      if (stop_lines.count({mark.file, mark.line}) > 0) continue;
      // A line that says only that the process ended (exit_only) follows a crash too: no recovery.
      if (ph.completes && rules.rules()[ph.rule].exit_only) continue;
      // Training progress after a traceback that ended its process is not that process going on: in a
      // merged stream it is another rank's, or the dead rank's own stdout, flushed after its unbuffered
      // stderr (mpirun, a shell's `2>&1`). A completion or a ready server after it still counts.
      if (idx == rules::PhaseIndex("training") && !ph.completes && DiedUncaught(ev[i])) continue;
      // An error that left the process without its GPU is not undone by the process going on.
      if (!ph.completes && Unrecoverable(ev[i], rules)) continue;
      if (((idx >= rules::PhaseIndex("ready") && idx <= rules::PhaseIndex("training")) || ph.completes) &&
          ph.process.key == ev[i].process.key && CausallyBefore(ev[i].where, ev[i].time, mark, mark_time, multi_file)) {
        recovered[i] = true;
      }
    }
  }

  // A recovery that a dead engine rules out: an error followed closely in its own process by a line that
  // says the engine died (a cascade rule marked dead) was fatal, whatever the front end logged afterwards.
  constexpr int64_t kDeadWindow = 200;  // lines
  // Only recovered events can be ruled back in: walk those, not every event, for each dead line.
  std::vector<size_t> recovered_events;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (recovered[i]) recovered_events.push_back(i);
  }
  for (size_t j = 0; j < ev.size() && !recovered_events.empty(); ++j) {
    auto cascade = FirstRuleOfKind(ev[j], rules, RuleKind::kCascade);
    if (!cascade || !rules.rules()[*cascade].dead) continue;
    for (size_t i : recovered_events) {
      if (i == j || !recovered[i] || ev[i].process.key != ev[j].process.key) continue;
      if (ev[i].where.file != ev[j].where.file || ev[j].where.line < ev[i].where.line ||
          ev[j].where.line - ev[i].where.line > kDeadWindow) {
        continue;
      }
      if (FirstRuleOfKind(ev[i], rules, RuleKind::kCascade)) continue;
      recovered[i] = false;
    }
  }

  SetAsideTeardownAfterCompletion(f, rules, multi_file, &recovered);

  bool cancelled_by_launcher = false;
  const std::vector<bool> stopped = AfterStop(f, rules, multi_file, recovered, &r, &cancelled_by_launcher);
  std::optional<size_t> strong, weak, summary, summary_exit, summary_signal, cut_off;
  // A consequence that reports a known error it caught (the NCCL watchdog's "Process group watchdog thread
  // terminated with exception: CUDA error: an illegal memory access was encountered", a terminate's what()):
  // when nothing else failed (a paste that holds only that report) the error it names is the best evidence.
  std::optional<size_t> reported;
  std::optional<size_t> first_fatal;  // the earliest fatal one, when a known weak line came before it
  // A summary line that says a rank died of a signal ("exitcode  : -9", "exits with return code = -9",
  // "Signal 9 (SIGKILL) received by PID 7") names the rank that failed first; a peer's "connection
  // closed" is only its echo.
  static const RE2 kSignalDeath(R"((?:exitcode|return code)\s*[:=]?\s*-\d+|Signal \d+ \(SIG\w+\))");
  for (size_t i : r.order) {
    if (recovered[i] || stopped[i]) continue;
    auto cascade = FirstRuleOfKind(ev[i], rules, RuleKind::kCascade);
    if (!cascade && ShellReportOfAConsequence(i, f, rules, recovered)) {
      if (!summary) summary = i;
      if (!summary_exit && !ev[i].cut_off) summary_exit = i;
      continue;
    }
    if (cascade) {
      if (rules.rules()[*cascade].summary) {
        if (!summary) summary = i;
        // Of a launcher's summary, the line that says how a rank ended
        // ("exitcode  : -9 (pid: 79468)") over its title ("train.py FAILED").
        const bool says_how = events::IsStrong(ev[i].kind) && !ev[i].cut_off;
        if (says_how && !summary_exit) summary_exit = i;
        if (!summary_signal && RE2::PartialMatch(ev[i].message, kSignalDeath)) summary_signal = i;
      } else if (!reported && events::IsStrong(ev[i].kind) && !ev[i].cut_off) {
        const auto sig = FirstRuleOfKind(ev[i], rules, RuleKind::kSignature);
        if (sig && !rules.rules()[*sig].generic && rules.rules()[*sig].explains.empty() &&
            std::any_of(ev[i].matches.begin(), ev[i].matches.end(),
                        [&](const auto& m) { return m.rule == *sig && m.line == ev[i].where.line; }))
          reported = i;
      }
      continue;
    }
    // A weak line that a signature knows (an NCCL WARN "Duplicate GPU
    // detected") is the detail of the fatal error that follows it. A
    // traceback cut off before its exception line is only evidence.
    // A line only logged whose signature explains later errors (an optional
    // native import that failed) counts only through the error it explains.
    const auto sig = FirstRuleOfKind(ev[i], rules, RuleKind::kSignature);
    const bool known = sig && (events::IsStrong(ev[i].kind) || rules.rules()[*sig].explains.empty());
    if (ev[i].cut_off && !known) {
      if (!cut_off) cut_off = i;
    } else if (events::IsStrong(ev[i].kind) || known) {
      if (!strong) strong = i;
      if (!first_fatal && events::IsStrong(ev[i].kind)) first_fatal = i;
    } else if (!weak) {
      weak = i;
    }
  }
  if (summary_exit) summary = summary_exit;
  if (summary_signal) summary = summary_signal;
  // A launcher's summary that says how a rank ended beats a traceback cut
  // off before its exception line (a partial paste, a launcher's own
  // traceback); the cut traceback beats nothing else.
  if (!strong && !weak && !summary && cut_off) weak = cut_off;
  if (r.stop || cancelled_by_launcher) {
    // A hang's noise before the stop (warnings, timeouts it logged) is not a failure; when the launcher
    // cancelled the step after a task failed, the failure is in what came before the cancel.
    if (r.stop) weak = summary = std::nullopt;
    // A known warning before the fatal error that ended the process (c10d's W-level "failed to bind"
    // before torchrun's RuntimeError, then Slurm cancelling the step) leaves that fatal error the root. With
    // no fatal error, a known error line the launcher cancelled the step after (slurmstepd's memory kill) is it.
    if (strong && !events::IsStrong(ev[*strong].kind) && (r.stop || first_fatal)) strong = first_fatal;
  }
  const bool only_reported = !strong && !weak && !summary && reported && !r.stop;
  if (only_reported) strong = reported;
  if (strong) {
    r.root = strong;
    if (only_reported)
      r.why.push_back(fmt::format("no other error: the {} at {} is a consequence by its cascade rule, but it reports "
                                  "a known error, the best evidence left",
                                  events::EventKindName(ev[*strong].kind), Where(f, ev[*strong])));
    r.why.push_back(fmt::format("earliest {} in causal order ({} at {})",
                                events::IsStrong(ev[*strong].kind) ? "fatal error" : "known error signature",
                                events::EventKindName(ev[*strong].kind), Where(f, ev[*strong])));
    if (weak && CausallyBefore(ev[*weak].where, ev[*weak].time, ev[*strong].where, ev[*strong].time, multi_file)) {
      r.why.push_back(
          fmt::format("an earlier {} at {} did not end the process "
                      "and ranks below a fatal error",
                      events::EventKindName(ev[*weak].kind), Where(f, ev[*weak])));
    }
  } else if (weak) {
    r.root = weak;
    r.why.push_back(
        fmt::format("no fatal error (traceback, signal, exception) "
                    "found; earliest error line at {}",
                    Where(f, ev[*weak])));
  } else if (summary) {
    r.root = summary;
    r.why.push_back(
        fmt::format("only a launcher's summary reports the failure "
                    "({}); the failing process printed no error",
                    Where(f, ev[*summary])));
  }
  // A traceback cut off before its exception line, right under a report of an exception that its handler
  // caught (asyncio's "Exception in callback ..." for a future's done-callback that re-raised the future's
  // error, then the awaiter's traceback through "outputs = await future", the same exception): the reported
  // exception says what failed.
  if (r.root && ev[*r.root].cut_off && ev[*r.root].exception.empty()) {
    constexpr int64_t kReportWindow = 10;  // lines from the handled report to the cut-off traceback
    const Event& g = ev[*r.root];
    for (size_t j = 0; j < ev.size(); ++j) {
      const Event& e = ev[j];
      if (!e.ignored || e.exception.empty() || e.cut_off || !events::IsStrong(e.kind) || !SameProcess(e, g)) continue;
      if (e.where.file != g.where.file || e.where.line >= g.where.line || g.where.line - e.where.line > kReportWindow)
        continue;
      r.why.push_back(fmt::format("the traceback at {} is cut off before its exception line; the {} reported just "
                                  "above it (caught by its handler, the same exception the awaiter got) says what failed",
                                  Where(f, g), events::EventKindName(e.kind)));
      r.root = j;
    }
  }
  // A stop that ends the job itself (a scheduler's time limit) is the root cause of a job that never
  // reached ready: a training run cut off there failed; a server that served until then did not.
  // So is one that came after the job's own completion marker (MLPerf's run_stop with status success, then
  // Slurm's "CANCELLED AT ... DUE TO TIME LIMIT" for a process of the step that lingered at exit): the work
  // was done before the limit; what the limit ended was the teardown.
  if (!r.root && r.stop && rules.rules()[f.stops[*r.stop].rule].fatal) {
    const StopHit& stop = f.stops[*r.stop];
    const bool served = std::any_of(f.phases.begin(), f.phases.end(), [&](const PhaseHit& ph) {
      if (ph.fallback) return false;  // words, no framework's mark
      if (rules::PhaseIndex(ph.phase) == rules::PhaseIndex("ready")) return true;
      return ph.completes && !ph.interrupted && !rules.rules()[ph.rule].exit_only &&
             !rules.rules()[ph.rule].final_only &&
             CausallyBefore(ph.where, ph.time, stop.where, stop.time, multi_file);
    });
    for (size_t i = 0; i < ev.size() && !served; ++i) {
      if (ev[i].where.file == stop.where.file && ev[i].where.line == stop.where.line) {
        r.root = i;
        r.why.push_back(
            fmt::format("the job was ended at line {} ({}) before it was ready to serve; no fatal "
                        "error came before it",
                        FileLine(f, stop.where), rules.rules()[stop.rule].id));
        break;
      }
    }
  }
  if (!r.root) {
    for (size_t i = 0; i < ev.size(); ++i) {
      if (recovered[i]) r.recovered.push_back(i);
    }
    if (r.stop) ListStopConsequences(f, rules, stopped, &r);
    return r;
  }
  if (auto site = CallSiteOf(*r.root, r.order, recovered, f)) {
    r.why.push_back(fmt::format("the NCCL WARN at {} is CUDACHECK's repeat of the CUDA error; the WARN at {} just "
                                "before it names the call that failed",
                                Where(f, ev[*r.root]), Where(f, ev[*site])));
    r.root = site;
  }
  std::optional<size_t> wrapper;
  if (IsGeneric(ev[*r.root], rules)) {
    auto specific = SpecificFor(*r.root, r.order, recovered, f, rules);
    if (!specific) {
      if (auto inner = InnerWrapperFor(*r.root, r.order, recovered, f, rules)) {
        r.why.push_back(fmt::format("{} at {} wraps another generic error, the {} at {} ({})",
                                    events::EventKindName(ev[*r.root].kind), Where(f, ev[*r.root]),
                                    events::EventKindName(ev[*inner].kind), Where(f, ev[*inner]),
                                    rules.rules()[*GenericRuleOf(ev[*inner], rules)].id));
        specific = SpecificFor(*inner, r.order, recovered, f, rules);
        if (!specific) specific = inner;
      }
    }
    if (specific) {
      wrapper = r.root;
      auto sig = GenericRuleOf(ev[*r.root], rules);
      r.why.push_back(
          fmt::format("{} at {} is a generic wrapper error ({}); "
                      "the more specific {} at {} {} says what failed",
                      events::EventKindName(ev[*r.root].kind), Where(f, ev[*r.root]), rules.rules()[*sig].id,
                      events::EventKindName(ev[*specific].kind), Where(f, ev[*specific]),
                      SameProcess(ev[*specific], ev[*r.root]) ? "in the same process" : "of a peer printed with it"));
      r.root = specific;
    }
  }
  if (!wrapper) {
    if (auto whole = WholeCopyOf(*r.root, r.order, recovered, stopped, f, rules)) {
      r.why.push_back(fmt::format("the exception line of the traceback at {} is interleaved with other ranks' "
                                  "copies (`{}`); the whole copy at {} says what failed",
                                  Where(f, ev[*r.root]), ev[*r.root].message.substr(0, 60), Where(f, ev[*whole])));
      r.root = whole;
    }
  }
  std::optional<size_t> explained;
  // A weak root (an NCCL WARN, an ERROR record: no fatal error was found) is explained the same way: NCCL's
  // INFO "ncclMaxSharedMem N exceeds device/fn maxSharedMem M" says why its "Cuda failure 1 'invalid argument'"
  // WARN came (nccl-tests-2x-rtx-5090-...).
  if (!wrapper) {
    if (auto cause = ExplainedBy(*r.root, r.order, recovered, f, rules)) {
      explained = r.root;
      auto sig = FirstRuleOfKind(ev[*cause], rules, RuleKind::kSignature);
      const bool earlier = ev[*cause].where.line < ev[*r.root].where.line;
      r.why.push_back(fmt::format("{} at {} is explained by the {} {} at {} ({}): {}",
                                  events::EventKindName(ev[*r.root].kind), Where(f, ev[*r.root]),
                                  earlier ? "earlier" : "later", events::EventKindName(ev[*cause].kind),
                                  Where(f, ev[*cause]), rules.rules()[*sig].id,
                                  earlier ? "the process went on after it and failed for want of what it could not load"
                                          : "it names what ended the process"));
      r.root = cause;
    }
  }
  const Event& root = ev[*r.root];
  if (root.chain.size() > 1 && root.chain_message > 0 && root.chain_message < root.chain.size()) {
    r.why.push_back(fmt::format("exception {} of a chain of {}: the one before it (`{}`) is control flow that its "
                                "handler turned into this error",
                                root.chain_message + 1, root.chain.size(), root.chain[root.chain_message - 1]));
  } else if (root.chain.size() > 1) {
    r.why.push_back(fmt::format("first exception of a chain of {} (the innermost cause)", root.chain.size()));
  }
  if (auto sig = FirstRuleOfKind(root, rules, RuleKind::kSignature)) {
    r.why.push_back(fmt::format("matches known signature {}", rules.rules()[*sig].id));
  } else {
    r.why.push_back("no rule knows this error; it was found by structure alone");
  }
  size_t cascade_by_rule = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (FirstRuleOfKind(ev[i], rules, RuleKind::kCascade)) ++cascade_by_rule;
  }
  if (cascade_by_rule > 0) {
    r.why.push_back(fmt::format("{} error line(s) were set aside as consequences by cascade rules", cascade_by_rule));
  }

  const std::string root_masked = Masked(root.message);
  for (size_t i : r.order) {
    if (i == *r.root) continue;
    if (recovered[i]) {
      r.recovered.push_back(i);
      continue;
    }
    const Event& e = ev[i];
    CascadeDecision d;
    d.event = i;
    bool before_root = CausallyBefore(e.where, e.time, root.where, root.time, multi_file);
    if (wrapper && i == *wrapper) {
      d.reason = fmt::format("a generic wrapper of the root cause ({})", Where(f, root));
    } else if (explained && i == *explained) {
      d.reason = fmt::format("a consequence of the root cause ({}), which its signature says explains it", Where(f, root));
    } else if (auto cascade = FirstRuleOfKind(e, rules, RuleKind::kCascade)) {
      d.rule = cascade;
      const rules::Captures* caps = nullptr;
      for (const auto& m : e.matches) {
        if (m.rule == *cascade) caps = &m.captures;
      }
      d.reason = rules::RenderTemplateWith(rules.rules()[*cascade].reason, caps ? *caps : rules::Captures(), f.facts);
    } else if (Masked(e.message) == root_masked && e.process.key != root.process.key) {
      d.reason = fmt::format("the same error as the root cause, in another process ({})",
                             e.process.key.empty() ? "unprefixed output" : e.process.key);
      r.same_error.push_back(i);
    } else if (before_root) {
      d.reason =
          fmt::format("logged before the root cause but did not end the process ({})", events::EventKindName(e.kind));
    } else if (IsTermination(e)) {
      d.reason = fmt::format("a termination after {} failed", root.process.key.empty() ? "the job" : root.process.key);
    } else if (e.process.key == root.process.key) {
      d.reason = fmt::format("follows the root cause in the same process ({})", Where(f, root));
    } else {
      d.reason = fmt::format("raised in {} after {} failed at {}",
                             e.process.key.empty() ? "the unprefixed (parent) output" : e.process.key,
                             root.process.key.empty() ? "the job" : root.process.key, Where(f, root));
    }
    r.cascade.push_back(std::move(d));
  }
  return r;
}

}  // namespace faultline::diagnosis
