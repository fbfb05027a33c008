#include "diagnosis/triage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "diagnosis/cross_node.h"
#include "diagnosis/log_scanner.h"
#include "diagnosis/ranker.h"
#include "diagnosis/runs.h"
#include "diagnosis/scan_inputs.h"
#include "input/input_files.h"
#include "mining/miner_profile.h"
#include "parse/line_parser.h"
#include "rules/rule_loader.h"
#include "rules/wrapper_loader.h"

namespace faultline::diagnosis {

using report::LineRef;
using report::ProcessRef;

namespace {

class ReportBuilder {
 public:
  ReportBuilder(const rules::RuleSet& rules, const std::vector<std::string>& names, const Findings& findings)
      : rules_(rules), names_(names), findings_(findings) {}

  int64_t FileLine(const events::LineInfo& l) const { return diagnosis::FileLine(findings_, l); }

  LineRef Ref(const events::LineInfo& l) const {
    return LineRef{names_[static_cast<size_t>(l.file)], FileLine(l), rules_.Redact(l.text)};
  }

  ProcessRef Proc(const events::ProcessId& p) const {
    ProcessRef r;
    r.tag = p.key;
    r.role = p.role;
    r.parent = p.parent;
    if (p.pid >= 0) r.pid = p.pid;
    if (p.rank >= 0) r.rank = p.rank;
    return r;
  }

  std::string Redact(const std::string& s) const { return rules_.Redact(s); }

 private:
  const rules::RuleSet& rules_;
  const std::vector<std::string>& names_;
  const Findings& findings_;
};

// Where the job's own progress ends for the verdict: the root cause, or the
// stop from outside (Ctrl-C, SIGTERM, a time limit) when there is none.
struct Cutoff {
  const events::LineInfo* where = nullptr;
  const parse::Timestamp* time = nullptr;
  bool Before(const events::LineInfo& w, const parse::Timestamp& t, bool multi_file) const {
    return !where || CausallyBefore(w, t, *where, *time, multi_file);
  }
};

// The job finished: a completion marker before the cutoff that no later
// progress of its own process contradicts (a final summary, not one of many);
// a `final` marker (a test report) is contradicted by a generic counter's rise too, by the
// job's batch work beginning again in its process (sglang.bench_one_batch reports its warm-up run with
// the line that reports its measured run, then prints "Benchmark ..."), and by a later stop that says the
// job hung.
bool Completed(const Findings& f, const rules::RuleSet& rules, const Cutoff& cut, bool multi_file) {
  // Progress after a mark says the run went on, unless it is a counter at its declared total: a bar's
  // last redraw when it is closed (verl closes its `Training Progress` bar after `Final validation
  // metrics`) counts no further work.
  auto progress_after = [&](const auto& marks, const std::string& process, const ProgressMark& done) {
    auto it = marks.find(process);
    if (it == marks.end() || !CausallyBefore(done.where, done.time, it->second.where, it->second.time, multi_file)) {
      return false;
    }
    const ProgressMark& later = it->second;
    return later.step.empty() || later.step != later.total;
  };
  // Anything the job did after a counter's last mark: a phase mark or a stop of any process.
  auto anything_after = [&](const ProgressMark& m) {
    for (const auto& ph : f.phases) {
      if (ph.fallback) continue;  // words, no framework's mark: not the job going on
      const bool has_last = ph.last.line > 0;
      const auto& w = has_last ? ph.last : ph.where;
      const auto& t = has_last ? ph.last_time : ph.time;
      if (w.file == m.where.file && w.line == m.where.line) continue;
      if (CausallyBefore(m.where, m.time, w, t, multi_file)) return true;
    }
    for (const auto& st : f.stops) {
      if (CausallyBefore(m.where, m.time, st.where, st.time, multi_file)) return true;
    }
    return false;
  };
  // A batch phase mark (rules' batch: true) of the process after a mark: the job's own work went on.
  auto batch_after = [&](const std::string& process, const ProgressMark& done) {
    for (const auto& ph : f.phases) {
      if (ph.process.key != process || !rules.rules()[ph.rule].batch) continue;
      const bool has_last = ph.last.line > 0;
      if (CausallyBefore(done.where, done.time, has_last ? ph.last : ph.where, has_last ? ph.last_time : ph.time,
                         multi_file)) {
        return true;
      }
    }
    return false;
  };
  // A stop that says the job hung (a harness's start-up timeout, a watchdog's) after a mark: part of the job
  // never finished, whatever the report said (an SGLang CI node's unittest "OK" from a driver that only
  // waited, then "Server failed to start within the timeout period").
  auto hang_stop_after = [&](const ProgressMark& done) {
    for (const auto& st : f.stops) {
      if (rules.rules()[st.rule].hang && CausallyBefore(done.where, done.time, st.where, st.time, multi_file)) {
        return true;
      }
    }
    return false;
  };
  for (const auto& [process, done] : f.last_completion) {
    if (!cut.Before(done.where, done.time, multi_file)) continue;
    if (progress_after(f.last_progress, process, done)) continue;
    if (done.final_only && progress_after(f.last_generic_progress, process, done)) continue;
    if (done.final_only && batch_after(process, done)) continue;
    if (done.final_only && hang_stop_after(done)) continue;
    return true;
  }
  // A run-long counter that reached its total (the last "step 40/40" of its process) ended the run,
  // unless a framework's own progress line of that process came after it.
  // A counter seen only once, at its total (a bar's final redraw), ended the run when the job did
  // nothing after it: no phase mark and no stop of any process (a loader's bar before a hang is not).
  for (const auto& [process, last] : f.last_generic_progress) {
    if (!last.ends_at_total || last.step.empty() || last.step != last.total || last.total == "1") continue;
    if (!cut.Before(last.where, last.time, multi_file)) continue;
    if (progress_after(f.last_progress, process, last)) continue;
    if (last.lone && anything_after(last)) continue;
    return true;
  }
  return false;
}

// The latest training progress line before the cutoff, over all processes.
const ProgressMark* LastProgress(const Findings& f, const Cutoff& cut, bool multi_file) {
  const ProgressMark* last = nullptr;
  for (const auto* marks : {&f.last_progress, &f.last_generic_progress}) {
    for (const auto& [process, mark] : *marks) {
      if (!cut.Before(mark.where, mark.time, multi_file)) continue;
      if (!last || CausallyBefore(last->where, last->time, mark.where, mark.time, multi_file)) last = &mark;
    }
  }
  return last;
}

// Verdict without a root cause (docs/triage-json.md): healthy when the job
// completed or a server reached ready (and was serving when the log ends);
// stalled when it ends before ready, or while training ran without a
// completion marker (a training log that stops at step N is stalled), or
// after a batch job's own work began (a `batch` phase: an offline generation)
// without its completion marker.
void FillPhases(const Findings& f, const Ranking& ranking, const rules::RuleSet& rules, bool multi_file,
                const ReportBuilder& rb, report::TriageReport* out) {
  Cutoff cut;
  if (ranking.root) {
    cut.where = &f.events[*ranking.root].where;
    cut.time = &f.events[*ranking.root].time;
  } else if (ranking.stop) {
    cut.where = &f.stops[*ranking.stop].where;
    cut.time = &f.stops[*ranking.stop].time;
  }
  const int ready = rules::PhaseIndex("ready");
  int best = f.total_lines > 0 ? rules::PhaseIndex("process-start") : -1;
  bool trained = false, generic_training = false, batch = false;
  const PhaseHit* worded = nullptr;  // the furthest fallback mark before the cut
  std::vector<const PhaseHit*> hits;
  for (const auto& ph : f.phases) hits.push_back(&ph);
  std::stable_sort(hits.begin(), hits.end(), [&](const PhaseHit* a, const PhaseHit* b) {
    return CausallyBefore(a->where, a->time, b->where, b->time, multi_file);
  });
  // After a stop, the stacks it interrupted (the KeyboardInterrupt traceback's
  // frames) still say where the job was: phase marks on those lines count.
  std::set<std::pair<int, int64_t>> interrupted;
  if (!ranking.root && ranking.stop) {
    // The stop's own line may say where the job was (a watchdog's collective).
    interrupted.emplace(f.stops[*ranking.stop].where.file, f.stops[*ranking.stop].where.line);
    for (const auto& d : ranking.cascade) {
      for (const auto& c : f.events[d.event].context) interrupted.emplace(c.file, c.line);
    }
    // So do the frames of a traceback the stop set off, whatever it became (a
    // watchdog's abort ends the process before the main thread's traceback is
    // whole: a cut-off traceback, or lines the stop's own event took in).
    for (const auto& e : f.events) {
      for (const auto& c : e.context) interrupted.emplace(c.file, c.line);
    }
  }
  // The span of each traceback the stop set off: a long one keeps only some of its frames as context, and a
  // frame between them is as much where the stopped process was.
  std::vector<std::pair<events::LineInfo, events::LineInfo>> spans;
  if (!ranking.root && ranking.stop) {
    for (const auto& e : f.events) {
      if (e.context.empty()) continue;
      events::LineInfo lo = e.context.front(), hi = e.context.front();
      for (const auto& c : e.context) {
        if (c.file != lo.file) continue;
        if (c.line < lo.line) lo = c;
        if (c.line > hi.line) hi = c;
      }
      if (e.where.file == lo.file && e.where.line > hi.line) hi = e.where;
      spans.emplace_back(lo, hi);
    }
  }
  // The frames of a stack listing (Event::listing: no traceback header, no exception line - pystack, a stack
  // printer's per-thread dump) are where a live process was, stop or no stop: their traceback-format frame
  // marks count as a dump's do.
  std::set<std::pair<int, int64_t>> listed;
  for (const auto& e : f.events) {
    if (!e.listing) continue;
    for (const auto& c : e.context) listed.emplace(c.file, c.line);
  }
  auto in_span = [&](const events::LineInfo& w) {
    return std::any_of(spans.begin(), spans.end(), [&](const auto& sp) {
      return w.file == sp.first.file && w.line >= sp.first.line && w.line <= sp.second.line;
    });
  };
  auto list = [&](const PhaseHit& ph) {  // into the report's phases
    report::PhaseMark mark;
    mark.phase = ph.phase;
    mark.where = rb.Ref(ph.where);
    mark.process = rb.Proc(ph.process);
    mark.rule = rules.rules()[ph.rule].id;
    out->phases.push_back(std::move(mark));
  };
  for (const PhaseHit* ph : hits) {
    // A stack dump's frame counts after a stop too: the dump (a watchdog's, a signal's) says where the
    // stopped process was parked.
    const bool dumped = !ranking.root && ranking.stop && rules.rules()[ph->rule].stack;
    const bool in_interrupted = interrupted.count({ph->where.file, ph->where.line}) > 0 ||
                                listed.count({ph->where.file, ph->where.line}) > 0;
    // A traceback frame says where the process was only when a stop raised that traceback; under a crash
    // it is no phase mark at all (nor listed as one).
    if (ph->interrupted && !in_interrupted && !in_span(ph->where)) continue;
    if (ph->fallback) {  // listed and counted only when no framework's mark says more (below)
      if (!cut.Before(ph->where, ph->time, multi_file) && !in_interrupted) continue;
      if (!worded || rules::PhaseIndex(ph->phase) > rules::PhaseIndex(worded->phase)) worded = ph;
      continue;
    }
    list(*ph);
    if (ph->interrupted) {
      best = std::max(best, rules::PhaseIndex(ph->phase));
      trained = trained || ph->phase == "training";
      continue;
    }
    if (!cut.Before(ph->where, ph->time, multi_file) && !in_interrupted && !dumped) continue;
    // A final report that a later hang stop contradicts (Completed()) says nothing of where the job was.
    if (ph->completes && rules.rules()[ph->rule].final_only && ranking.stop &&
        rules.rules()[f.stops[*ranking.stop].rule].hang &&
        CausallyBefore(ph->where, ph->time, f.stops[*ranking.stop].where, f.stops[*ranking.stop].time, multi_file)) {
      continue;
    }
    if (ph->generic || rules.rules()[ph->rule].traffic) {
      generic_training = true;  // counted below, unless a server was serving
      continue;
    }
    best = std::max(best, rules::PhaseIndex(ph->phase));
    trained = trained || ph->phase == "training";
    batch = batch || rules.rules()[ph->rule].batch;
  }
  // A generic counter rising (step N, N/M) is training for an unknown
  // framework; on a server that reached ready it is request traffic (so is
  // a `traffic` mark: a collective timed out at a high sequence number).
  if (generic_training && best < ready) {
    best = std::max(best, rules::PhaseIndex("training"));
    trained = true;
  }
  // No framework's phase mark and no counter: the words of the log's lines say where an unknown
  // framework's job was ("Loading checkpoint shards", "epoch 3 ... loss="), the furthest of them.
  std::optional<std::string> worded_hint;
  // A known framework's own mark, even its start, means its marks say where it was.
  const bool framework_known = std::any_of(f.phases.begin(), f.phases.end(), [&](const PhaseHit& ph) {
    return !ph.fallback && !ph.generic && !rules.rules()[ph.rule].launcher;
  });
  if (worded && !framework_known && !generic_training && best <= rules::PhaseIndex("process-start") &&
      rules::PhaseIndex(worded->phase) > best) {
    best = rules::PhaseIndex(worded->phase);
    trained = worded->phase == "training";
    list(*worded);
    worded_hint = fmt::format(
        "no framework's phase marker was seen; the wording of line {} (`{}`) is read as {}", rb.FileLine(worded->where),
        rb.Redact(worded->where.text.substr(0, 200)), worded->phase);
  }
  const bool completed = Completed(f, rules, cut, multi_file);
  // A stop that says the job hung (a watchdog's timeout: NCCL's `Watchdog caught collective operation
  // timeout: WorkNCCL(..., Timeout(ms)=600000)`) reports a collective that had been pending for its whole
  // timeout when the line is printed: the job hung before the shutdown marks of that window (a harness
  // stopping a server whose requests timed out: uvicorn's `Application shutdown complete.`). A shutdown
  // follows the job's own work - a server shuts down what started and served (ready), a trainer after
  // training - so the stall is in that phase, not in the shutdown.
  if (!ranking.root && ranking.stop && rules.rules()[f.stops[*ranking.stop].rule].hang &&
      best == rules::PhaseIndex("shutdown") && !trained) {
    best = ready;
  }
  if (best >= 0) out->last_phase = rules::PhaseOrder()[static_cast<size_t>(best)];
  for (int i = best + 1; i <= ready && best < ready; ++i) {
    out->phases_never_reached.push_back(rules::PhaseOrder()[static_cast<size_t>(i)]);
  }
  if (ranking.root) return;
  // A stop that says the job hung (a watchdog's timeout) stalls a server that was ready too.
  const bool hung = ranking.stop && rules.rules()[f.stops[*ranking.stop].rule].hang;
  if (completed || (!trained && !batch && best >= ready && !hung)) {
    out->verdict = report::Verdict::kHealthy;
    return;
  }
  out->verdict = report::Verdict::kStalled;
  if (ranking.stop) {
    const StopHit& stop = f.stops[*ranking.stop];
    out->stall_hints.push_back(fmt::format("the job was stopped from outside at line {} (`{}`): {}", rb.FileLine(stop.where),
                                           rb.Redact(stop.where.text.substr(0, 200)), rules.rules()[stop.rule].reason));
  }
  if (trained) {
    out->last_phase = "training";
    const ProgressMark* last = LastProgress(f, cut, multi_file);
    std::string step;
    if (last && !last->step.empty()) {
      step = last->total.empty() ? fmt::format(" at step {}", last->step)
                                 : fmt::format(" at step {}/{}", last->step, last->total);
    }
    out->stall_hints.push_back(fmt::format(
        "training ran{} and the log ends without a completion marker (a final summary, \"training finished\", "
        "a clean exit of every rank){}",
        step,
        last ? fmt::format("; last progress at line {}: {}", rb.FileLine(last->where),
                           rb.Redact(last->where.text.substr(0, 200)))
             : ""));
  } else if (batch && best >= ready) {
    out->stall_hints.push_back(
        fmt::format("the job's own work began (a batch generation, not a server) and the log ends without its "
                    "completion marker; last phase reached: {}",
                    out->last_phase.value_or("unknown")));
  } else if (best >= ready) {
    // Only a hang stop (a watchdog's timeout) stalls a server that was ready.
    out->stall_hints.push_back("the server was ready and then hung while serving: the stop above says where");
  } else {
    out->stall_hints.push_back(
        fmt::format("the log ends without an error before the job was ready; last phase reached: {}",
                    out->last_phase.value_or("unknown")));
  }
  if (worded_hint) out->stall_hints.push_back(*worded_hint);
}

std::optional<report::TemplateRef> TemplateOf(const Findings& f, const events::LineInfo& where) {
  if (!f.miner || where.template_id < 0) return std::nullopt;
  const mining::Template* t = f.miner->Find(static_cast<mining::TemplateId>(where.template_id));
  if (!t) return std::nullopt;  // evicted
  return report::TemplateRef{static_cast<int64_t>(t->id()), static_cast<int64_t>(t->count())};
}

void SummarizeTemplates(const mining::TemplateMiner& miner, size_t n, const rules::RuleSet& rules,
                        report::TriageReport* out) {
  std::vector<const mining::Template*> all = miner.Templates();
  out->template_total = static_cast<int64_t>(all.size());
  auto summary = [&](const mining::Template* t) {
    return report::TemplateSummary{static_cast<int64_t>(t->id()), rules.Redact(t->text()),
                                   static_cast<int64_t>(t->count())};
  };
  std::stable_sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->count() > b->count(); });
  for (size_t i = 0; i < all.size() && i < n; ++i) out->common_templates.push_back(summary(all[i]));
  // The rarest: where a one-off error hides among millions of INFO lines.
  for (size_t i = 0; i < all.size() && i < n / 2; ++i) {
    const mining::Template* t = all[all.size() - 1 - i];
    if (all.size() - 1 - i < n) break;  // already listed as common
    out->rare_templates.push_back(summary(t));
  }
}

std::string_view TrimmedMessage(std::string_view text, std::string* storage) {
  *storage = std::string(parse::ParseLine(text).message);
  std::string_view m = *storage;
  while (!m.empty() && (m.front() == ' ' || m.front() == '\t')) m.remove_prefix(1);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.remove_suffix(1);
  return m;
}

// A message whose last word cannot end a sentence ("CUDA runtime error in", "... cuda:0 and") was cut
// where a paste or a terminal wrapped it: the sentence goes on on the next line.
bool EndsMidPhrase(std::string_view m) {
  while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.remove_suffix(1);
  const size_t space = m.find_last_of(" \t");
  if (space == std::string_view::npos) return false;  // one word: no sentence to go on
  std::string word(m.substr(space + 1));
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kDangling[] = {"in", "at", "of", "for", "to", "with", "from", "on", "by",
                                                    "into", "the", "a", "an", "and", "or", "than", "via"};
  for (auto d : kDangling) {
    if (word == d) return true;
  }
  return false;
}

// Lines of a message continuation that only give advice, not the failure.
bool IsAdvice(std::string_view m) {
  static constexpr std::string_view kAdvice[] = {
      "For further information", "See ", "Please ", "http://", "https://", "(run with", "This usually",
      "Set the environment"};
  for (auto a : kAdvice) {
    if (m.substr(0, a.size()) == a) return true;
  }
  return false;
}

// The specific line of a multi-line message: the line after NCCL's
// "Last error:", else (for a generic error, whose own first line says
// little) the first continuation line that is not advice.
std::optional<events::LineInfo> SpecificContinuation(const events::Event& e, bool generic) {
  std::string storage;
  for (size_t i = 0; i + 1 < e.continuation.size(); ++i) {
    if (TrimmedMessage(e.continuation[i].text, &storage) == "Last error:") return e.continuation[i + 1];
  }
  if (!generic) return std::nullopt;
  for (const auto& c : e.continuation) {
    std::string_view m = TrimmedMessage(c.text, &storage);
    if (!m.empty() && !IsAdvice(m)) return c;
  }
  return std::nullopt;
}

void FillRootCause(const Findings& f, const Ranking& ranking, const rules::RuleSet& rules, const ReportBuilder& rb,
                   report::TriageReport* out) {
  if (!ranking.root) return;
  const events::Event& e = f.events[*ranking.root];
  report::RootCause rc;
  rc.message = rb.Redact(e.message);
  rc.exception = e.exception;
  rc.kind = events::EventKindName(e.kind);
  rc.where = rb.Ref(e.where);
  {
    auto sig = FirstRuleOfKind(e, rules, rules::RuleKind::kSignature);
    std::string_view head = e.message;
    while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
    // A message that ends in ':' ("Reasons:", "DistributedOperationException:") goes on below.
    const bool announces_more = !head.empty() && head.back() == ':';
    if (auto detail = SpecificContinuation(e, announces_more || (sig && rules.rules()[*sig].generic))) {
      std::string storage;
      std::string message = e.message + " \u2014 " + std::string(TrimmedMessage(detail->text, &storage));
      // A header that announces a list ("Error(s) in loading state_dict for Net:") goes on for every
      // item: the second ("Unexpected key(s) ... \"module.encoder.weight\"") can be the one that says why.
      if (announces_more) {
        constexpr size_t kMaxItems = 4;
        size_t items = 1;
        bool after = false;
        for (const auto& c : e.continuation) {
          if (c.file == detail->file && c.line == detail->line) {
            after = true;
            continue;
          }
          if (!after || items >= kMaxItems) continue;
          std::string_view m = TrimmedMessage(c.text, &storage);
          if (m.empty() || IsAdvice(m)) break;
          message += " \u2014 " + std::string(m);
          ++items;
        }
      }
      rc.message = rb.Redact(message);
      rc.message_start = rc.where;
      rc.where = rb.Ref(*detail);
    }
  }
  // A sentence cut mid-phrase goes on on the lines below it: the message is the whole sentence, and it
  // still starts at the exception's own line.
  if (!rc.message_start && EndsMidPhrase(e.message)) {
    std::string message = e.message;
    std::string storage;
    constexpr size_t kMaxLines = 3;
    size_t joined = 0;
    for (const auto& c : e.continuation) {
      if (joined >= kMaxLines || !EndsMidPhrase(message)) break;
      std::string_view m = TrimmedMessage(c.text, &storage);
      if (m.empty() || IsAdvice(m)) break;
      while (!message.empty() && message.back() == ' ') message.pop_back();
      message += " " + std::string(m);
      ++joined;
    }
    if (joined > 0) rc.message = rb.Redact(message);
  }
  rc.process = rb.Proc(e.process);
  auto rule_index = FirstRuleOfKind(e, rules, rules::RuleKind::kSignature);
  if (!rule_index) rule_index = FirstRuleOfKind(e, rules, rules::RuleKind::kCascade);  // a summary root
  if (rule_index) {
    const rules::Rule& rule = rules.rules()[*rule_index];
    rules::Captures caps;
    for (const auto& m : e.matches) {
      if (m.rule == *rule_index) caps = m.captures;
    }
    rc.rule = rule.id;
    rc.category = rule.category;
    rc.explanation =
        rb.Redact(rules::RenderTemplateWith(rule.explanation.empty() ? rule.reason : rule.explanation, caps, f.facts));
    rc.fix = rb.Redact(rules::RenderTemplateWith(rule.fix, caps, f.facts));
  }
  for (const auto& c : e.context) rc.context.push_back(rb.Ref(c));
  rc.templ = TemplateOf(f, e.where);
  rc.why = ranking.why;
  if (e.repeats > 0) rc.why.push_back(fmt::format("printed {} more time(s) in a row", e.repeats));
  for (size_t i : ranking.same_error) {
    const auto& key = f.events[i].process.key;
    // The unprefixed output repeating it is a launcher's summary (torchelastic's error-file traceback),
    // not another process that failed the same way.
    if (key.empty()) continue;
    if (std::find(rc.same_error_in.begin(), rc.same_error_in.end(), key) == rc.same_error_in.end()) {
      rc.same_error_in.push_back(key);
    }
  }
  out->root_cause = std::move(rc);
  out->verdict = report::Verdict::kFailure;
}

}  // namespace

Result<report::TriageReport> Triage(const TriageOptions& options) {
  auto expanded = input::ExpandInputs(options.inputs);
  if (!expanded.ok()) return expanded.status();

  std::vector<rules::Rule> rule_list;
  if (!options.no_builtin_rules) {
    auto builtin = rules::LoadBuiltinRules();
    if (!builtin.ok()) return Status::Internal("built-in rules: " + builtin.status().message());
    rule_list = std::move(*builtin);
  }
  for (const auto& path : options.rule_files) {
    auto extra = rules::LoadRuleFile(path);
    if (!extra.ok()) return extra.status();
    for (auto& r : *extra) rule_list.push_back(std::move(r));
  }
  auto wrappers = rules::LoadWrappers(options.rule_files);
  if (!wrappers.ok()) return wrappers.status();
  auto rule_set = BuildScanRuleSet(std::move(rule_list));
  if (!rule_set.ok()) return rule_set.status();
  const rules::RuleSet& rules = **rule_set;

  Findings findings;
  findings.warnings = expanded->warnings;
  if (options.templates) {
    auto miner = mining::MakeMiner("default");
    if (!miner.ok()) return Status::Internal("template miner: " + miner.status().message());
    findings.miner = std::move(*miner);
  }
  std::vector<std::string> names;
  for (const auto& file : expanded->files) names.push_back(file.display);
  Status scanned = ScanInputs(expanded->files, rules, wrappers->get(), &findings);
  if (!scanned.ok()) return scanned;
  if (findings.total_lines == 0) {
    return Status::InvalidArgument(
        fmt::format("{}: empty input, no log lines to read", names.size() == 1 ? names[0] : "inputs"));
  }
  const bool multi_file = expanded->files.size() > 1;
  AlignAcrossNodes(expanded->files, &findings);  // ranks from paths; clock skew between nodes
  if (!multi_file) KeepLastRun(rules, &findings);  // a relaunched job: its last run decides
  Ranking ranking = Rank(findings, rules, multi_file);
  ReportBuilder rb(rules, names, findings);

  report::TriageReport out;
  out.total_lines = findings.total_lines;
  out.inputs = findings.inputs;
  out.warnings = findings.warnings;
  if (findings.events_dropped > 0) {
    out.warnings.push_back(
        fmt::format("{} further error events not kept (cap {})", findings.events_dropped, Findings::kMaxEvents));
  }
  FillRootCause(findings, ranking, rules, rb, &out);
  FillPhases(findings, ranking, rules, multi_file, rb, &out);
  out.cascade_total = static_cast<int64_t>(ranking.cascade.size());
  if (ranking.root) {
    const events::LineInfo& root = findings.events[*ranking.root].where;
    for (const auto& d : ranking.cascade) {
      const events::LineInfo& w = findings.events[d.event].where;
      if (w.file == root.file && w.line < root.line) ++out.cascade_before_root;
    }
  }
  for (const auto& d : ranking.cascade) {
    if (out.cascade.size() >= options.max_cascade) break;
    const events::Event& e = findings.events[d.event];
    report::CascadeItem item;
    item.message = rb.Redact(e.message);
    item.where = rb.Ref(e.where);
    item.process = rb.Proc(e.process);
    item.reason = d.reason;
    if (d.rule) item.rule = rules.rules()[*d.rule].id;
    item.templ = TemplateOf(findings, e.where);
    out.cascade.push_back(std::move(item));
  }
  for (const auto& [key, st] : findings.processes) {
    report::ProcessSummary ps;
    ps.process = rb.Proc(st.process);
    ps.lines = st.lines;
    ps.errors = st.errors;
    out.processes.push_back(std::move(ps));
  }
  if (findings.last_line) out.last_line = rb.Ref(*findings.last_line);
  if (findings.miner) SummarizeTemplates(*findings.miner, options.max_templates_listed, rules, &out);
  if (out.verdict == report::Verdict::kStalled) {
    out.stall_hints.push_back(
        "if the process is still running, `faultline watch --pid PID` "
        "classifies the stall from live signals");
  }
  return out;
}

}  // namespace faultline::diagnosis
