#include "diagnosis/log_scanner.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <span>
#include <thread>

#include "diagnosis/block_pipeline.h"
#include "diagnosis/scan_patterns.h"
#include "events/event_builder.h"
#include "events/structure.h"
#include "input/line_cleaner.h"
#include "input/line_reader.h"
#include "input/newest_first.h"
#include "parse/line_parser.h"
#include "rules/digit_shape.h"

namespace faultline::diagnosis {

using events::LineInfo;
using rules::RuleKind;

Result<std::unique_ptr<rules::RuleSet>> BuildScanRuleSet(std::vector<rules::Rule> rule_list, bool gate) {
  return rules::RuleSet::Build(std::move(rule_list), StructuralScanPatterns(), &PrecompiledBuiltinDatabase(), gate);
}

namespace {

class Scanner {
 public:
  Scanner(int file_index, bool need_times, const rules::RuleSet& rules, Findings* findings)
      : file_(file_index),
        need_times_(need_times),
        rules_(rules),
        findings_(findings),
        builder_([this](events::Event&& e) { OnEvent(std::move(e)); }) {}

  // Walks a scanned block's lines, as the scan thread prepared them
  // (PrepareOnScanThread). Lines are numbered here (the reader does not
  // count them).
  void Block(const ScannedBlock& block) {
    std::string_view data = block.data;
    int64_t line_no = next_line_;
    block_ = data;
    confirmed_ = &block.confirmed;
    next_confirmed_ = 0;
    timed_from_ = 0;
    time_before_block_ = last_time_;
    size_t next_run = 0;
    size_t next_redraw = 0;
    for (size_t index = 0; index < block.lines.size(); ++index) {
      while (next_redraw < block.redraws.size() && block.redraws[next_redraw].first < index) ++next_redraw;
      if (next_run < block.runs.size() && block.runs[next_run].first == index) {
        const ScannedBlock::Run& run = block.runs[next_run++];
        // A redrawn bar's earlier state is read by the walk of its line.
        const bool redrawn = next_redraw < block.redraws.size() && block.redraws[next_redraw].first < run.end;
        if (runs_enabled_ && !redrawn && ApplyRun(block, run, line_no)) {
          ++runs_applied_;
          if (run.last_full >= 0) ++step_runs_applied_;
          stack_block_ = {};  // the run's lines were not walked: a stack dump's thread is not followed across it
          line_no += run.end - run.first;
          index = run.end - 1;
          continue;
        }
      }
      const ScannedBlock::Line& prepared = block.lines[index];
      std::string_view line = data.substr(prepared.start, prepared.end - prepared.start);
      line_rules_ = std::span<const unsigned>(block.rule_ids.data() + prepared.rules_begin,
                                              prepared.rules_end - prepared.rules_begin);
      if (index < block.line_identity.size() && block.line_identity[index] != 0) {
        uint32_t id = block.line_identity[index];
        wrapper_identity_ = block.identities[id];
        wrapper_rank_ = block.identity_rank[id];
      } else {
        wrapper_identity_ = {};
        wrapper_rank_ = -1;
      }
      line_end_ = prepared.end;
      prefix_process_ = prepared.process;
      prepared_parse_ = prepared.parsed >= 0 ? &block.parsed[prepared.parsed] : nullptr;
      redraw_ = next_redraw < block.redraws.size() && block.redraws[next_redraw].first == index
                    ? std::string_view(block.redraws[next_redraw].second)
                    : std::string_view();
      prev_line_ = index > 0 ? data.substr(block.lines[index - 1].start,
                                           block.lines[index - 1].end - block.lines[index - 1].start)
                             : std::string_view();
      Line(line, line_no, prepared.structure, prepared.start);
      if (need_times_ && line_examined_) timed_from_ = prepared.end + 1;
      ++line_no;
    }
    ResolveDeferredTimes();
    if (need_times_) ResolveTime(data.size());  // the next block cannot look back here
    timed_from_ = 0;
    block_ = {};
    prev_line_ = {};
    confirmed_ = nullptr;
    line_rules_ = {};
    redraw_ = {};
    prepared_parse_ = nullptr;
    RememberLastLine(data, line_no - 1);
    next_line_ = line_no;
  }

  int64_t lines() const { return next_line_ - 1; }

  // Walk every line one by one (tests compare both walks).
  void set_runs_enabled(bool on) { runs_enabled_ = on; }
  int64_t runs_applied() const { return runs_applied_; }
  int64_t step_runs_applied() const { return step_runs_applied_; }

  void Finish() {
    builder_.Finish();
    if (last_line_no_ > 0) findings_->last_line = LineInfo{file_, last_line_no_, last_line_};
  }

 private:
  // The file's last non-empty line tells where a stalled log stopped; the
  // block's memory is reused, so it is copied (once per block).
  void RememberLastLine(std::string_view data, int64_t last_no) {
    while (!data.empty() && data.back() == '\n') {
      data.remove_suffix(1);
      size_t start = data.rfind('\n');
      std::string_view line = start == std::string_view::npos ? data : data.substr(start + 1);
      if (!line.empty()) {
        last_line_.assign(line.substr(0, 2000));
        last_line_no_ = last_no;
        return;
      }
      data = start == std::string_view::npos ? std::string_view() : data.substr(0, start + 1);
      --last_no;
    }
  }

  void Line(std::string_view text, int64_t line_no, uint32_t structure, size_t offset) {
    ++findings_->total_lines;
    line_examined_ = false;
    TrackStackThread(text);
    text_of_line_ = text;
    const bool interesting = !line_rules_.empty() || structure != 0 || builder_.NeedsEveryLine();
    if (!findings_->miner && (!interesting || (structure == 0 && !builder_.NeedsEveryLine()))) {
      // The common case (INFO noise, or a line that only repeats a phase
      // its process already reached: a step counter, a progress bar): only
      // attribute the line to its process. With several inputs its time is
      // read only if a later line needs it (ResolveTime).
      parse::ParsedLine p;  // what the cheap path uses of parse::ParseProcessPrefixes(text)
      p.text = text;
      p.process = prefix_process_;
      WithWrapperIdentity(&p);
      if (!interesting || OnlyReachedPhases(p.process)) {
        if (interesting) NoteStackFrame();  // a phase its process reached still is where this thread is
        NoteProcess(p, line_no);
        if (interesting && line_reached_hit_ != kNoHit && !IsTracebackFrame(text)) {
          PhaseHit& ph = findings_->phases[line_reached_hit_];  // its latest mark (ranker: recovered errors)
          ph.last = LineInfo{file_, line_no, {}};
          ph.last_time = last_time_;
          DeferTime(line_reached_hit_, line_no, offset + text.size());
        }
        return;
      }
    }
    parse::ParsedLine p = prepared_parse_ ? *prepared_parse_ : parse::ParseLine(text);
    WithWrapperIdentity(&p);
    if (need_times_) {
      if (!p.time.valid) ResolveTime(offset);
      line_examined_ = true;
    }
    if (p.time.valid)
      last_time_ = p.time;
    else if (last_time_.valid)
      p.time = last_time_;  // inherit for cross-file order
    NoteProcess(p, line_no);
    int64_t template_id = -1;
    if (findings_->miner) template_id = findings_->miner->Add(p.message);
    if (!interesting) return;

    matches_.clear();
    bool benign = false, cascade = false, control_flow = false, specific_phase = false;
    generic_rules_.clear();
    worded_rules_.clear();
    for (unsigned id : line_rules_) {
      const rules::Rule& rule = rules_.rules()[id];
      if (rule.fallback) {
        if (!framework_phase_seen_) worded_rules_.push_back(id);  // confirmed below, as the generic ones
        continue;
      }
      if (rule.kind == RuleKind::kPhase && rule.progress) {
        generic_rules_.push_back(id);  // confirmed below, only when no specific phase speaks for the line
        continue;
      }
      rules::Captures caps;
      if (!Confirm(id, text, &caps)) continue;  // a prefilter false positive
      switch (rule.kind) {
        case RuleKind::kPhase:
          specific_phase = true;
          if (rule.stack && !StackFrameCounts(rule)) break;  // an outer frame of a thread already placed
          AddPhase(rule, id, p, line_no, caps);
          break;
        case RuleKind::kStop:
          AddStop(id, p, line_no);
          break;
        case RuleKind::kFact:
          for (auto& [name, value] : caps) SetFact(name, value);
          break;
        case RuleKind::kBenign:
          benign = true;
          break;
        case RuleKind::kCascade:
          cascade = true;
          [[fallthrough]];
        case RuleKind::kSignature:
          control_flow |= rule.control_flow;
          matches_.push_back(events::RuleMatch{id, std::move(caps), line_no});
          break;
        case RuleKind::kRedact:
          break;
      }
    }
    // A generic progress shape (N/M, step N) counts only where no framework's
    // own marker spoke for the line (a weight-loading bar is not training),
    // confirmed only then (a step line of a known framework skips the capture
    // of its counter). The first shape in rule order counts: the rule files
    // put the shapes that rise within an epoch before the epoch counter.
    if (!specific_phase) {
      for (unsigned id : generic_rules_) {
        rules::Captures caps;
        if (!Confirm(id, text, &caps)) continue;
        // A bar redrawn on one line and left below its total (the run's bar
        // when the log stopped or moved on): its earlier state of the same
        // shape first, so that a counter that advanced between them rises.
        // A bar redrawn up to its total is a finished unit (a loader's, as
        // often as a run's): its line counts as before, once.
        if (rules::Captures before; !redraw_.empty() && BelowTotal(caps) && rules_.Confirm(id, redraw_, &before)) {
          GenericProgress(id, before, p, line_no);
        }
        GenericProgress(id, caps, p, line_no);
        break;
      }
      // A long line (a config dump, a warning's paragraph) names every phase's words and says nothing
      // of where the job was.
      if (text.size() > kMaxWordedLine) worded_rules_.clear();
      for (unsigned id : worded_rules_) {
        rules::Captures caps;
        if (Confirm(id, text, &caps)) AddPhase(rules_.rules()[id], id, p, line_no, caps);
      }
    }
    if (structure == 0 && matches_.empty() && !builder_.NeedsEveryLine()) return;
    events::LineView view;
    view.parsed = &p;
    view.file = file_;
    view.line = line_no;
    view.structure = structure;
    view.matches = &matches_;
    view.benign = benign;
    view.cascade_rule = cascade;
    view.control_flow = control_flow;
    view.template_id = template_id;
    if ((structure & events::kTracebackStart) && !prev_line_.empty()) {
      const parse::ParsedLine above = parse::ParseLine(prev_line_);
      view.after_warning_record = !above.format.empty() && above.level == parse::Level::kWarning;
    }
    if ((structure & events::kTclTrace) && line_no > 1) view.above = prev_line_;
    builder_.Add(view);
  }

  // A run of plain and step lines (ScannedBlock::Run) at once: what walking
  // its lines one by one would do, when that is only counting lines and
  // moving marks that exist. False (nothing done) when a line of the run
  // would do more: a traceback is open (every line joins it), a process or
  // its training phase is new (its first line is kept), templates are mined.
  bool ApplyRun(const ScannedBlock& block, const ScannedBlock::Run& run, int64_t first_no) {
    if (findings_->miner || builder_.NeedsEveryLine()) return false;
    run_stats_.clear();
    for (uint32_t i = run.processes_begin; i < run.processes_end; ++i) {
      auto it = findings_->processes.find(block.run_processes[i].process);
      if (it == findings_->processes.end()) return false;
      run_stats_.push_back(&it->second);
    }
    // A fallback word that could still decide the phase and is not yet kept: the run's lines are walked
    // (checked first: the marks below note a framework's phase for the lines after the run).
    for (uint32_t i = run.worded_begin; i < run.worded_end && !framework_phase_seen_; ++i) {
      const ScannedBlock::RunReached& w = block.run_worded[i];
      if (FindReached(rules_.rules()[w.rule], w.process) == kNoHit) return false;
    }
    run_targets_.clear();
    for (uint32_t i = run.marks_begin; i < run.marks_end; ++i) {
      const ScannedBlock::RunMark& m = block.run_marks[i];
      const rules::Rule& rule = rules_.rules()[m.rule];
      auto mark = findings_->last_progress.find(m.process);
      size_t phase = FindPhase(rule, m.process);
      if (mark == findings_->last_progress.end() || phase == kNoHit) return false;
      run_targets_.emplace_back(&mark->second, phase);
      NoteFrameworkPhase(rule);
    }
    run_reached_.clear();
    for (uint32_t i = run.reached_begin; i < run.reached_end; ++i) {
      const ScannedBlock::RunReached& r = block.run_reached[i];
      size_t phase = FindReached(rules_.rules()[r.rule], r.process);
      if (phase == kNoHit) return false;
      run_reached_.push_back(phase);
      NoteFrameworkPhase(rules_.rules()[r.rule]);
    }
    const int64_t run_lines = run.end - run.first;
    findings_->total_lines += run_lines;
    for (uint32_t i = run.processes_begin; i < run.processes_end; ++i) {
      const ScannedBlock::RunProcess& rp = block.run_processes[i];
      ProcessStats* st = run_stats_[i - run.processes_begin];
      st->lines += rp.lines;
      st->last_line.file = file_;
      st->last_line.line = first_no + rp.last;
    }
    // As the cheap path of Line() moves them (no time of their own read).
    for (uint32_t i = run.reached_begin; i < run.reached_end; ++i) {
      const ScannedBlock::RunReached& r = block.run_reached[i];
      if (r.line < 0) continue;
      PhaseHit& ph = findings_->phases[run_reached_[i - run.reached_begin]];
      ph.last = LineInfo{file_, first_no + (r.line - run.first), {}};
      ph.last_time = last_time_;
      DeferTime(run_reached_[i - run.reached_begin], ph.last.line, block.lines[r.line].end);
    }
    if (run.last_full < 0) return true;
    if (need_times_) ResolveTime(block.lines[run.first].start);
    const parse::Timestamp incoming = last_time_;
    for (uint32_t i = run.marks_begin; i < run.marks_end; ++i) {
      const ScannedBlock::RunMark& m = block.run_marks[i];
      const ScannedBlock::Line& l = block.lines[m.line];
      const parse::Timestamp& time = m.run_time.valid ? m.run_time : incoming.valid ? incoming : m.own_time;
      const int64_t line_no = first_no + (m.line - run.first);
      auto [mark, phase] = run_targets_[i - run.marks_begin];
      mark->where.file = file_;
      mark->where.line = line_no;
      const std::string_view text = std::string_view(block.data).substr(l.start, l.end - l.start);
      mark->where.text.assign(text.substr(0, 400));
      mark->where.template_id = -1;
      mark->time = time;
      const rules::Captures& caps = block.confirmed[m.confirmed].captures;
      AssignCapture(caps, "step", &mark->step);
      AssignCapture(caps, "total", &mark->total);
      if (IsTracebackFrame(text)) continue;  // as AddPhase: where an error was raised is no progress
      PhaseHit& ph = findings_->phases[phase];
      ph.last.file = file_;
      ph.last.line = line_no;
      ph.last.text.clear();
      ph.last.template_id = -1;
      ph.last_time = time;
    }
    if (run.latest_time.valid) last_time_ = run.latest_time;
    if (need_times_) timed_from_ = block.lines[run.last_full].end + 1;
    return true;
  }

  // This file's lines hold a framework's phase mark, new or one its process had: from then on a
  // fallback word can no longer decide the phase, so its rules are skipped (the same in every file
  // whatever the files before it marked: a parallel scan of the files sees no other file).
  void NoteFrameworkPhase(const rules::Rule& rule) {
    if (!rule.fallback && !rule.launcher) framework_phase_seen_ = true;
  }

  // ph holds the marks `rule` makes in `process`.
  static bool SlotOf(const PhaseHit& ph, const rules::Rule& rule, std::string_view process) {
    return ph.SameSlot(rule.phase, process, rule.completes, rule.exit_only, rule.progress, rule.interrupted,
                       rule.fallback);
  }

  // The PhaseHit AddPhase would move for `rule` in `process`, kNoHit when none.
  size_t FindPhase(const rules::Rule& rule, std::string_view process) const {
    for (size_t i = 0; i < findings_->phases.size(); ++i) {
      const PhaseHit& ph = findings_->phases[i];
      if (SlotOf(ph, rule, process)) return i;
    }
    return kNoHit;
  }

  // The PhaseHit OnlyReachedPhases finds for `rule` in `process`, kNoHit when none.
  size_t FindReached(const rules::Rule& rule, std::string_view process) const {
    for (size_t i = 0; i < findings_->phases.size(); ++i) {
      const PhaseHit& ph = findings_->phases[i];
      // A fallback word is reached by its own kind of mark only (in every file alike: a framework's mark
      // from another file must not hide it, as the parallel scan of the files cannot see that mark).
      if (ph.phase == rule.phase && ph.process.key == process && ph.completes == rule.completes &&
          ph.fallback == rule.fallback) {
        return i;
      }
    }
    return kNoHit;
  }

  // Rule `id` on the current line: the scan thread's answer when it gave
  // one (ConfirmOnScanThread), else confirmed here.
  bool Confirm(unsigned id, std::string_view text, rules::Captures* caps) {
    if (confirmed_) {
      const auto& all = *confirmed_;
      while (next_confirmed_ < all.size() && all[next_confirmed_].line_end < line_end_) ++next_confirmed_;
      for (size_t i = next_confirmed_; i < all.size() && all[i].line_end == line_end_; ++i) {
        if (all[i].id != id) continue;
        *caps = all[i].captures;
        return all[i].matched;
      }
    }
    return rules_.Confirm(id, text, caps);
  }

  // True when every rule hit on the line is a phase mark its process already
  // has (AddPhase would keep nothing) or a benign look-alike (which matters
  // only with an event): the line then needs no parse and no confirmation.
  bool OnlyReachedPhases(std::string_view process) {
    size_t hit = kNoHit;  // the phase this line marks again, if any
    for (unsigned id : line_rules_) {
      const rules::Rule& rule = rules_.rules()[id];
      if (rule.kind == RuleKind::kBenign || rule.kind == RuleKind::kRedact) continue;
      if (rule.kind != RuleKind::kPhase) return false;
      if (rule.fallback) {  // kept once, never the line's designated mark: nothing moves it
        if (!framework_phase_seen_ && FindReached(rule, process) == kNoHit) return false;
        continue;
      }
      // Progress and completion marks are kept per line (the last step, the
      // counter of a generic progress rule), not only the first.
      if (rule.progress || rule.completes || IsTrainingMark(rule)) return false;
      NoteFrameworkPhase(rule);
      if (id == reached_rule_ && process == reached_process_) {
        hit = reached_hit_;
        continue;
      }
      bool reached = false;
      for (size_t i = 0; i < findings_->phases.size(); ++i) {
        const auto& ph = findings_->phases[i];
        if (ph.phase == rule.phase && ph.process.key == process && ph.completes == rule.completes &&
            (!ph.fallback || rule.fallback)) {
          reached = true;
          hit = i;
          break;
        }
      }
      if (!reached) return false;
      reached_rule_ = id;
      reached_hit_ = hit;
      reached_process_.assign(process);
    }
    line_reached_hit_ = hit;
    return true;
  }

  // A line that only marks a phase again (a served request) is not parsed for its time as it passes, so
  // its phase's last_time is the latest time known then: how stale depended on where the blocks began.
  // With several inputs (times needed) the time is found when the block ends: the latest time a line of
  // the block up to that line gives, else the one before the block. One entry per phase; a phase whose
  // mark moved on by another path since has its time already.
  struct DeferredTime {
    size_t phase;
    int64_t line;
    size_t end;  // the offset of the line's '\n' in block_
  };
  void DeferTime(size_t phase, int64_t line, size_t end) {
    if (!need_times_) return;
    for (DeferredTime& d : deferred_times_) {
      if (d.phase != phase) continue;
      d.line = line;
      d.end = end;
      return;
    }
    deferred_times_.push_back({phase, line, end});
  }
  void ResolveDeferredTimes() {
    for (const DeferredTime& d : deferred_times_) {
      PhaseHit& ph = findings_->phases[d.phase];
      if (ph.last.file != file_ || ph.last.line != d.line) continue;
      ph.last_time = TimeUpTo(d.end);
    }
    deferred_times_.clear();
  }
  // The latest time a line of block_ that ends at or before `end` gives (the
  // lines examined backwards), else the latest before the block.
  parse::Timestamp TimeUpTo(size_t end) const {
    size_t e = end + 1;  // one past the line's '\n'
    while (e > 0) {
      const size_t nl = e - 1;
      const void* prev = nl > 0 ? memrchr(block_.data(), '\n', nl) : nullptr;
      const size_t start = prev ? static_cast<size_t>(static_cast<const char*>(prev) - block_.data()) + 1 : 0;
      std::string_view line = block_.substr(start, nl - start);
      if (MayCarryTime(line)) {
        parse::Timestamp t = parse::ParseLine(line).time;
        if (t.valid) return t;
      }
      e = start;
    }
    return time_before_block_;
  }

  // Several inputs are ordered by time, and a line without its own time
  // takes the latest one printed before it in its file. Lines are not parsed
  // for it as they pass: the lines of this block in [timed_from_, end) are
  // examined backwards, when a line needs the time or the block ends.
  void ResolveTime(size_t end) {
    size_t e = end;  // one past a line's '\n'
    while (e > timed_from_) {
      size_t nl = e - 1;
      const void* prev = nl > timed_from_ ? memrchr(block_.data() + timed_from_, '\n', nl - timed_from_) : nullptr;
      size_t start = prev ? static_cast<size_t>(static_cast<const char*>(prev) - block_.data()) + 1 : timed_from_;
      std::string_view line = block_.substr(start, nl - start);
      if (MayCarryTime(line)) {
        parse::Timestamp t = parse::ParseLine(line).time;
        if (t.valid) {
          last_time_ = t;
          break;
        }
      }
      e = start;
    }
    timed_from_ = end;
  }

  // A wrapper's identity (a compose service, a Slurm task) is the outer
  // name of the process: "task 3/rank3", or "task 3" for an unprefixed line.
  void WithWrapperIdentity(parse::ParsedLine* p, std::string* key_buffer = nullptr) {
    if (wrapper_identity_.empty()) return;
    if (p->process.empty()) {
      p->process = wrapper_identity_;
    } else {
      std::string& key = key_buffer ? *key_buffer : process_key_;
      key.assign(wrapper_identity_);
      key += '/';
      key.append(p->process);
      p->parent = wrapper_identity_;
      p->process = key;
    }
    if (p->rank < 0) p->rank = wrapper_rank_;
  }

  void NoteProcess(const parse::ParsedLine& p, int64_t line_no) {
    std::string_view key = p.process;
    if (!cached_stats_ || key != cached_key_) {
      auto it = findings_->processes.find(key);  // no allocation on the hot path
      if (it == findings_->processes.end()) {
        it = findings_->processes.emplace(std::string(key), ProcessStats()).first;
        parse::ParsedLine full = parse::ParseLine(p.text);  // role, pid, rank: once per process
        std::string full_key;
        WithWrapperIdentity(&full, &full_key);
        it->second.process =
            events::ProcessId{std::string(key), std::string(full.role), std::string(full.parent), full.pid, full.rank};
        it->second.first_line = LineInfo{file_, line_no, std::string(p.text.substr(0, 400))};
      }
      cached_stats_ = &it->second;
      cached_key_ = it->first;
    }
    ++cached_stats_->lines;
    cached_stats_->last_line.file = file_;
    cached_stats_->last_line.line = line_no;
  }

  static std::string CaptureOf(const rules::Captures& caps, std::string_view name) {
    for (const auto& [k, v] : caps) {
      if (k == name) return v;
    }
    return {};
  }

  static void AssignCapture(const rules::Captures& caps, std::string_view name, std::string* out) {
    for (const auto& [k, v] : caps) {
      if (k == name) {
        out->assign(v);
        return;
      }
    }
    out->clear();
  }

  // A generic progress rule reaches its phase only when its counter rises in
  // the same process: one "3/10" could be anything, 3/10 then 4/10 is work.
  void GenericProgress(unsigned id, const rules::Captures& caps, const parse::ParsedLine& p, int64_t line_no) {
    std::string step = CaptureOf(caps, "step");
    int64_t value = 0;
    auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), value);
    if (step.empty() || ec != std::errc() || end != step.data() + step.size()) return;
    if (const std::string total = CaptureOf(caps, "total"); !total.empty() && total == step) {
      auto reached = findings_->totals_reached.find(p.process);
      if (reached == findings_->totals_reached.end()) {
        reached = findings_->totals_reached.emplace(std::string(p.process), std::set<std::string>()).first;
      }
      reached->second.insert(total);
    }
    // Per file: several inputs are scanned apart and merged (scan_inputs.cc).
    // The counter of the previous line (map nodes stay put) is looked up
    // again only when the rule or the process changes.
    if (counter_ == findings_->progress_counters.end() || counter_rule_ != id || counter_process_ != p.process) {
      auto key = std::make_pair(static_cast<size_t>(id), fmt::format("{}\n{}", file_, p.process));
      auto it = findings_->progress_counters.find(key);
      if (it == findings_->progress_counters.end()) {
        findings_->progress_counters.emplace(std::move(key), value);
        counter_ = findings_->progress_counters.end();
        // A run-long counter first seen at its total (a bar's last redraw, "25880/25880") did its work:
        // no phase (one line could be anything), but a candidate end of the run (triage.cc Completed()).
        if (rules_.rules()[id].ends_at_total) LoneCounterAtTotal(caps, p, line_no, step);
        // A counts_once counter's first line below its declared total (N < M) is the run at step N; so is the
        // first line of one that declares no total (a step counter with the step's loss on the line:
        // "Epoch 0, Step 200, loss 0.5679", "[step 83999]  mlm_loss=1.40024").
        if (rules_.rules()[id].counts_once && (BelowTotal(caps) || CaptureOf(caps, "total").empty()))
          AddPhase(rules_.rules()[id], id, p, line_no, caps);
        return;
      }
      counter_ = it;
      counter_rule_ = id;
      counter_process_.assign(p.process);
    }
    auto it = counter_;
    const bool rose = value > it->second;
    it->second = value;
    if (rose) AddPhase(rules_.rules()[id], id, p, line_no, caps);
  }

  // Whether a counter's captures declare a total above their step (N < M).
  static bool BelowTotal(const rules::Captures& caps) {
    const std::string step = CaptureOf(caps, "step"), total = CaptureOf(caps, "total");
    int64_t n = 0, m = 0;
    auto [step_end, step_ec] = std::from_chars(step.data(), step.data() + step.size(), n);
    auto [total_end, total_ec] = std::from_chars(total.data(), total.data() + total.size(), m);
    return !step.empty() && !total.empty() && step_ec == std::errc() && total_ec == std::errc() &&
           step_end == step.data() + step.size() && total_end == total.data() + total.size() && n < m;
  }


  void LoneCounterAtTotal(const rules::Captures& caps, const parse::ParsedLine& p, int64_t line_no,
                          const std::string& step) {
    const std::string total = CaptureOf(caps, "total");
    if (total.empty() || total != step || total == "1") return;
    auto it = findings_->last_generic_progress.find(p.process);
    // A counter of its process already rose. Unless it stands at this very step without a total: then this
    // line (a script's per-step readouts "trail_delta step:2850 ..." before its final "step:2850/2850
    // val_loss:...") is that counter's run reaching its declared total, and becomes the process's last mark
    // (no lone first sight: the other counter's progress corroborates it).
    const bool same_step_untotalled =
        it != findings_->last_generic_progress.end() && it->second.step == step && it->second.total.empty();
    if (it != findings_->last_generic_progress.end() && !same_step_untotalled) return;
    ProgressMark& mark = same_step_untotalled
                             ? it->second
                             : findings_->last_generic_progress.emplace(std::string(p.process), ProgressMark()).first->second;
    mark.where = LineInfo{file_, line_no, std::string(p.text.substr(0, 400))};
    mark.time = p.time;
    mark.step = step;
    mark.total = total;
    mark.final_only = false;
    mark.ends_at_total = true;
    mark.lone = !same_step_untotalled;
  }

  // A stack dump lists each thread's frames innermost first (py-spy `Thread N (active): "MainThread"`,
  // faulthandler `Thread 0x... (most recent call first):` / `Current thread 0x...`, then one frame a line):
  // the first frame a stack rule marks is where that thread is. An outer frame's mark of another phase is
  // only where the inner call came from - HF Trainer's _inner_training_loop calls deepspeed.initialize and
  // loads its checkpoint before it loops, so a thread parked in that set-up is in set-up, not in training.
  // One exception: torch.compile compiles a model on its first call, inside the training step that made
  // it, and the job is training then (a compile frame under a training frame stays training).
  void TrackStackThread(std::string_view text) {
    std::string_view t = text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    if (t.starts_with("Thread ") || t.starts_with("Current thread ")) {
      stack_block_ = {true, nullptr};  // a thread's header: its frames follow
      return;
    }
    std::string_view r = text;
    while (!r.empty() && (r.back() == ' ' || r.back() == '\r')) r.remove_suffix(1);
    const bool frame = t.size() < text.size() && !r.empty() &&
                       (r.back() == ')' || r.find("\", line ") != std::string_view::npos);
    if (!frame) {
      stack_block_ = {};
      return;
    }
    if (!stack_block_.open) stack_block_ = {true, nullptr};  // frames without a header (a paste that cut it): one thread
    // A DataLoader's frames (torch/utils/data/: the fetch of a batch, a dataset's __getitem__) between an inner
    // mark and the loop: the inner call is the training loop's own work (a dataset that torch.load()s its
    // samples), so the outer frames count as they did before.
    if (r.find("torch/utils/data/") != std::string_view::npos) stack_block_.via_data = true;
  }
  // Whether a stack rule's mark on the current frame counts (the first marked frame of its thread does).
  bool StackFrameCounts(const rules::Rule& rule) {
    if (!stack_block_.open || stack_block_.via_data) return true;
    if (!stack_block_.phase) {
      stack_block_.phase = &rule.phase;
      return true;
    }
    const std::string& inner = *stack_block_.phase;
    return inner == rule.phase || (inner == "torch-compile" && rule.phase == "training");
  }
  // The cheap walk of a line whose phases its process already reached: a stack frame among them still
  // places its thread (StackFrameCounts).
  void NoteStackFrame() {
    if (!stack_block_.open || stack_block_.phase) return;
    for (unsigned id : line_rules_) {
      const rules::Rule& rule = rules_.rules()[id];
      if (rule.kind != RuleKind::kPhase || !rule.stack) continue;
      rules::Captures caps;
      if (!Confirm(id, text_of_line_, &caps)) continue;
      stack_block_.phase = &rule.phase;
      return;
    }
  }

  void AddStop(size_t id, const parse::ParsedLine& p, int64_t line_no) {
    if (findings_->stops.size() >= Findings::kMaxStops) return;
    StopHit hit;
    hit.rule = id;
    hit.where = LineInfo{file_, line_no, std::string(p.text)};
    hit.process = events::ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
    hit.time = p.time;
    findings_->stops.push_back(std::move(hit));
  }

  void AddPhase(const rules::Rule& rule, size_t id, const parse::ParsedLine& p, int64_t line_no,
                const rules::Captures& caps) {
    if (rule.at_total) {  // the end of a unit counts only for the unit its process's counter declared last
      auto reached = findings_->totals_reached.find(p.process);
      if (reached == findings_->totals_reached.end() || !reached->second.count(CaptureOf(caps, "step"))) return;
    }
    NoteFrameworkPhase(rule);
    // A step line marks again what the previous step line of its process
    // marked: the mark and the PhaseHit found then are remembered (map nodes
    // and vector indexes stay valid while this file is scanned).
    PhaseSlot* slot = nullptr;
    for (PhaseSlot& s : phase_slots_) {
      if (s.id == id && s.process == p.process) {
        slot = &s;
        break;
      }
    }
    if (rule.completes || IsTrainingMark(rule)) {
      ProgressMark* mark_ptr = slot ? slot->mark : nullptr;
      if (!mark_ptr) {
        auto& marks = rule.completes  ? findings_->last_completion
                      : rule.progress ? findings_->last_generic_progress
                                      : findings_->last_progress;
        auto it = marks.find(p.process);
        if (it == marks.end()) it = marks.emplace(std::string(p.process), ProgressMark()).first;
        mark_ptr = &it->second;
      }
      // Assigned in place: a step line's mark reuses the previous one's memory.
      ProgressMark& mark = *mark_ptr;
      mark.where.file = file_;
      mark.where.line = line_no;
      mark.where.text.assign(p.text.substr(0, 400));
      mark.where.template_id = -1;
      mark.time = p.time;
      AssignCapture(caps, "step", &mark.step);
      AssignCapture(caps, "total", &mark.total);
      mark.final_only = rule.final_only;
      mark.ends_at_total = rule.ends_at_total;
      mark.lone = false;
      if (!slot) slot = NewPhaseSlot(id, p.process);
      slot->mark = mark_ptr;
    }
    // Keep the first mark per (process, phase): enough to order phases.
    // Keep the latest one too: a server that answers requests after an error kept serving.
    size_t index = slot ? slot->phase : kNoHit;
    if (index == kNoHit) {
      for (size_t i = 0; i < findings_->phases.size(); ++i) {
        const PhaseHit& ph = findings_->phases[i];
        if (SlotOf(ph, rule, p.process)) {
          index = i;
          break;
        }
      }
    }
    if (index != kNoHit) {
      PhaseHit& ph = findings_->phases[index];
      if (!slot) slot = NewPhaseSlot(id, p.process);
      slot->phase = index;
      if (IsTracebackFrame(p.text)) return;  // where an error was raised: no progress after it
      ph.last.file = file_;
      ph.last.line = line_no;
      ph.last.text.clear();
      ph.last.template_id = -1;
      ph.last_time = p.time;
    } else {
      index = findings_->phases.size();
      PhaseHit hit;
      hit.phase = rule.phase;
      hit.rule = id;
      hit.where = LineInfo{file_, line_no, std::string(p.text)};
      hit.process =
          events::ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
      hit.time = p.time;
      hit.completes = rule.completes;
      hit.exit_only = rule.exit_only;
      hit.generic = rule.progress;
      hit.interrupted = rule.interrupted;
      hit.fallback = rule.fallback;
      findings_->phases.push_back(std::move(hit));
    }
    if (!slot) slot = NewPhaseSlot(id, p.process);
    slot->phase = index;
  }

  // (rule, process) -> where AddPhase put its marks; a few, the latest kept.
  struct PhaseSlot {
    size_t id = ~size_t{0};
    std::string process;
    ProgressMark* mark = nullptr;
    size_t phase = ~size_t{0};
  };
  static constexpr size_t kPhaseSlots = 16;
  PhaseSlot* NewPhaseSlot(size_t id, std::string_view process) {
    if (phase_slots_.size() < kPhaseSlots) {
      phase_slots_.emplace_back();
    } else {
      std::rotate(phase_slots_.begin(), phase_slots_.begin() + 1, phase_slots_.end());  // drop the oldest
    }
    PhaseSlot& s = phase_slots_.back();
    s.id = id;
    s.process.assign(process);
    s.mark = nullptr;
    s.phase = kNoHit;
    return &s;
  }

  void SetFact(const std::string& name, const std::string& value) {
    for (auto& [k, v] : findings_->facts) {
      if (k == name) {
        v = value;
        return;
      }
    }
    findings_->facts.emplace_back(name, value);
  }

  void OnEvent(events::Event&& e) {
    auto it = findings_->processes.find(e.process.key);
    if (it != findings_->processes.end()) ++it->second.errors;
    if (findings_->events.size() >= Findings::kMaxEvents) {
      ++findings_->events_dropped;
      return;
    }
    findings_->events.push_back(std::move(e));
  }

  int file_;
  bool need_times_;  // several inputs: every line's time orders them
  const rules::RuleSet& rules_;
  Findings* findings_;
  events::EventBuilder builder_;
  std::vector<PhaseSlot> phase_slots_;
  bool runs_enabled_ = true;
  int64_t runs_applied_ = 0;
  int64_t step_runs_applied_ = 0;
  std::string_view redraw_;  // the earlier state of the walked line's redrawn bar (ScannedBlock::redraws)
  std::string_view prev_line_;  // the line above the walked one in its block (empty for a block's first line)
  std::vector<ProcessStats*> run_stats_;                       // ApplyRun's processes
  std::vector<std::pair<ProgressMark*, size_t>> run_targets_;  // ApplyRun's marks and PhaseHits
  std::vector<size_t> run_reached_;                            // ApplyRun's reached PhaseHits
  std::span<const unsigned> line_rules_;                       // the current line's rule hits, into the block
  std::string_view prefix_process_;                            // the current line's process prefix
  const parse::ParsedLine* prepared_parse_ = nullptr;          // its full parse, when the scan thread made one
  std::map<std::pair<size_t, std::string>, int64_t>::iterator counter_ = findings_->progress_counters.end();
  unsigned counter_rule_ = 0;            // ... of counter_
  std::string counter_process_;          // ... of counter_
  std::vector<unsigned> generic_rules_;  // the line's generic progress rules, unconfirmed
  std::vector<unsigned> worded_rules_;   // the line's fallback phase rules, unconfirmed
  // Some framework's own phase mark (not process-start, not a fallback) is in this file's findings: a
  // fallback mark can no longer decide the phase (triage.cc FillPhases), so its rules are skipped.
  bool framework_phase_seen_ = false;
  std::vector<events::RuleMatch> matches_;
  parse::Timestamp last_time_;
  ProcessStats* cached_stats_ = nullptr;
  std::string_view cached_key_;
  std::string last_line_;
  int64_t last_line_no_ = 0;
  std::string_view wrapper_identity_;  // of the current line; into the current block
  int wrapper_rank_ = -1;
  std::string process_key_;  // identity + inner process key of the current line
  int64_t next_line_ = 1;
  unsigned reached_rule_ = ~0u;  // the last phase rule found already reached
  static constexpr size_t kNoHit = ~size_t{0};
  static constexpr size_t kMaxWordedLine = 400;  // longer lines mark no fallback phase
  size_t reached_hit_ = kNoHit;                                      // its PhaseHit in findings_->phases
  size_t line_reached_hit_ = kNoHit;                                 // the PhaseHit the current line marks again
  std::string reached_process_;                                      // ... by this process
  std::string_view block_;                                           // the block being walked
  const std::vector<ScannedBlock::Confirmed>* confirmed_ = nullptr;  // its hits confirmed on the scan thread
  size_t next_confirmed_ = 0;                                        // the first of them not before the current line
  size_t line_end_ = 0;                                              // the current line's end in block_
  size_t timed_from_ = 0;       // lines of block_ from here are not examined for time
  parse::Timestamp time_before_block_;           // last_time_ when block_ began
  std::vector<DeferredTime> deferred_times_;     // phases whose last_time waits for the block's end
  bool line_examined_ = false;  // the current line's time is in last_time_
  // The stack dump thread the walked lines are frames of (TrackStackThread): open while they are, with
  // the phase of its first marked frame.
  struct StackThread {
    bool open = false;
    const std::string* phase = nullptr;
    bool via_data = false;  // a DataLoader frame was seen: outer marks count (TrackStackThread)
  } stack_block_;
  std::string_view text_of_line_;  // the walked line's text (NoteStackFrame)
};

}  // namespace

namespace {

// The rules whose hits Scanner::Line confirms on every line they hit, whatever
// the scan has seen before: errors, stops, facts, and the phase marks kept
// per line (training, completion). The others are confirmed only when the
// line needs it (a phase already reached, a benign look-alike, a generic
// counter) and stay with the scanner.
std::vector<bool> AlwaysConfirmed(const rules::RuleSet& rules) {
  std::vector<bool> out(rules.rules().size(), false);
  for (size_t i = 0; i < out.size(); ++i) {
    const rules::Rule& r = rules.rules()[i];
    switch (r.kind) {
      case RuleKind::kSignature:
      case RuleKind::kCascade:
      case RuleKind::kStop:
      case RuleKind::kFact:
        out[i] = true;
        break;
      case RuleKind::kPhase:
        out[i] = !r.progress && (r.completes || IsTrainingMark(r));
        break;
      default:
        break;
    }
  }
  return out;
}

// Which rules make the scan thread parse the line they hit in full. A line
// whose hits are all phase marks that are kept only once per process (and
// benign or redact rules) usually takes Scanner::Line's cheap path (its
// process already reached the phase): the walk parses it itself when not.
std::vector<bool> ParsedOnScanThread(const rules::RuleSet& rules) {
  std::vector<bool> out(rules.rules().size(), true);
  for (size_t i = 0; i < out.size(); ++i) {
    const rules::Rule& r = rules.rules()[i];
    if (r.kind == RuleKind::kBenign || r.kind == RuleKind::kRedact) out[i] = false;
    if (r.kind == RuleKind::kPhase && !r.progress && !r.completes && !IsTrainingMark(r)) out[i] = false;
  }
  return out;
}

// What a rule's hit makes of a line, for the runs (ScannedBlock::Run).
enum class RunClass : uint8_t {
  kPlain,     // benign and redact rules: nothing without an event
  kStep,      // a training mark kept per line (Scanner::AddPhase on every line)
  kGeneric,   // a generic progress rule: nothing when a training mark confirmed
  kReached,   // a phase mark kept once per process: moves its PhaseHit's latest line when reached
  kWorded,    // a fallback phase word: fits any run; ApplyRun walks the run while one could still count
  kBreaking,  // anything else ends a run
};

std::vector<RunClass> RunClasses(const rules::RuleSet& rules) {
  std::vector<RunClass> out(rules.rules().size(), RunClass::kBreaking);
  for (size_t i = 0; i < out.size(); ++i) {
    const rules::Rule& r = rules.rules()[i];
    if (r.kind == RuleKind::kBenign || r.kind == RuleKind::kRedact) out[i] = RunClass::kPlain;
    if (r.kind == RuleKind::kPhase && r.progress) out[i] = RunClass::kGeneric;
    if (r.kind == RuleKind::kPhase && !r.progress && !r.completes && IsTrainingMark(r)) out[i] = RunClass::kStep;
    if (r.kind == RuleKind::kPhase && !r.progress && !r.completes && !IsTrainingMark(r)) out[i] = RunClass::kReached;
    if (r.fallback) out[i] = RunClass::kWorded;
  }
  return out;
}

// The rules that mark steps (RuleSet::MarksSteps): confirmed on the scan
// thread and ordered by rule (StepResolver).
std::vector<bool> StepRules(const rules::RuleSet& rules) {
  std::vector<bool> out(rules.rules().size(), false);
  for (size_t i = 0; i < out.size(); ++i) out[i] = rules::RuleSet::MarksSteps(rules.rules()[i]);
  return out;
}

struct ScanThreadRules {
  std::vector<bool> always;       // AlwaysConfirmed
  std::vector<bool> parsed;       // ParsedOnScanThread
  std::vector<RunClass> classes;  // RunClasses
  std::vector<bool> steps;        // StepRules
  std::vector<bool> reusable;     // ReusableRules
  bool need_times = false;        // the scanner's (several inputs: every line's time counts)
  bool reuse_shapes = true;       // ScanTuning::reuse_shapes
};

// The rules whose hit a line of the previous line's shape may take from it
// (PrepareOnScanThread): those the scan thread does not confirm, and the
// digit-blind ones it does (their answer and their groups' places are the
// same on both lines).
std::vector<bool> ReusableRules(const rules::RuleSet& rules, const std::vector<bool>& always,
                                const std::vector<bool>& steps) {
  std::vector<bool> out(rules.rules().size(), true);
  for (size_t i = 0; i < out.size(); ++i) {
    if (always[i] || steps[i]) out[i] = rules.DigitBlind(i);
  }
  return out;
}

// What ParseLine gives a line in which it recognises nothing.
parse::ParsedLine BlankParse(std::string_view line) {
  parse::ParsedLine p;
  p.text = line;
  p.message = line;
  return p;
}

// Same length, and the same bytes but where both hold a digit.
[[gnu::always_inline]] inline bool SameDigitShape(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    uint64_t wa, wb;
    std::memcpy(&wa, a.data() + i, 8);
    std::memcpy(&wb, b.data() + i, 8);
    if (wa != wb && rules::ZeroDigits8(wa) != rules::ZeroDigits8(wb)) return false;
  }
  for (; i < a.size(); ++i) {
    const bool da = rules::IsAsciiDigit(a[i]), db = rules::IsAsciiDigit(b[i]);
    if (a[i] != b[i] && !(da && db)) return false;
  }
  return true;
}

// a == b, most often told apart by their last byte ("rank3", "rank5"): no
// memcmp call for the processes of a run that are not the line's.
inline bool SameProcess(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || a.back() == b.back()) && a == b;
}

// Sums up the block's runs of plain and step lines (ScannedBlock::Run), one
// prepared line at a time. What each line does is what Scanner::Line does
// with it when no traceback is open: a plain line is counted for its
// prefix's process; a step line is parsed, counted for its parsed process,
// and each training mark that confirmed moves its process's mark to the line
// (the last one of the run wins). Times as Scanner::Line inherits them: a
// step line's own, else the latest one before it (with several inputs, of
// any line: ResolveTime). The full parses of a kept run's lines are dropped
// (the walk parses them again in the rare case it walks the run line by
// line): a block of step lines holds at most kMaxRunLines parses.
class RunBuilder {
 public:
  static constexpr size_t kMinRunLines = 16;  // shorter runs are walked line by line
  static constexpr size_t kMaxRunLines = 4096;
  static constexpr size_t kMaxRunProcesses = 32;

  RunBuilder(const ScanThreadRules& which, ScannedBlock* block) : which_(which), block_(block) {
    block->runs.clear();
    block->run_processes.clear();
    block->run_marks.clear();
    block->run_reached.clear();
    block->run_worded.clear();
  }

  // Line j of the block (its hits and confirmations are in the block; its
  // full parse, when made, in *parse, not yet in block->parsed).
  void Add(size_t j, const ScannedBlock::Line& l, const parse::ParsedLine* parse) {
    const auto& confirmed = block_->confirmed;
    while (next_confirmed_ < confirmed.size() && confirmed[next_confirmed_].line_end < l.end) ++next_confirmed_;
    bool fits = l.structure == 0 && (j >= block_->line_identity.size() || block_->line_identity[j] == 0);
    bool step = false, generic = false, reached = false;
    for (uint32_t r = l.rules_begin; fits && r < l.rules_end; ++r) {
      unsigned id = block_->rule_ids[r];
      RunClass c = id < which_.classes.size() ? which_.classes[id] : RunClass::kBreaking;
      if (c == RunClass::kBreaking) fits = false;
      if (c == RunClass::kStep) step = true;
      if (c == RunClass::kGeneric) generic = true;
      if (c == RunClass::kReached) reached = true;
    }
    if (reached && (step || generic)) fits = false;  // the full walk of Line()
    bool marked = false;  // some training mark confirmed on the line
    if (fits && step) {
      for (size_t i = next_confirmed_; i < confirmed.size() && confirmed[i].line_end == l.end; ++i) {
        if (confirmed[i].matched && which_.classes[confirmed[i].id] == RunClass::kStep) marked = true;
      }
    }
    if (fits && (step || generic) && !marked) fits = false;  // the generic path, or no mark: walked
    if (fits && marked && !parse) fits = false;
    if (!fits) {
      Close(j);
      return;
    }
    std::string_view line = block_->data;
    line = line.substr(l.start, l.end - l.start);
    std::string_view process = marked ? parse->process : l.process;
    // A run moves training marks or reached phases, not both (their times differ).
    const bool mixed = open_ && ((marked && block_->run_reached.size() > run_.reached_begin) ||
                                 (reached && block_->run_marks.size() > run_.marks_begin));
    if (open_ && (j - run_.first >= kMaxRunLines || !RoomFor(process) || mixed)) Close(j);
    if (!open_) {
      open_ = true;
      run_ = ScannedBlock::Run{};
      run_.first = static_cast<uint32_t>(j);
      run_.processes_begin = static_cast<uint32_t>(block_->run_processes.size());
      run_.marks_begin = static_cast<uint32_t>(block_->run_marks.size());
      run_.reached_begin = static_cast<uint32_t>(block_->run_reached.size());
      run_.worded_begin = static_cast<uint32_t>(block_->run_worded.size());
      parsed_begin_ = block_->parsed.size();
      latest_ = parse::Timestamp();
    }
    const uint32_t index = static_cast<uint32_t>(j - run_.first);
    bool counted = false;
    for (size_t i = run_.processes_begin; i < block_->run_processes.size() && !counted; ++i) {
      ScannedBlock::RunProcess& rp = block_->run_processes[i];
      if (!SameProcess(rp.process, process)) continue;
      ++rp.lines;
      rp.last = index;
      counted = true;
    }
    if (!counted) block_->run_processes.push_back({process, 1, index});
    for (uint32_t r = l.rules_begin; r < l.rules_end; ++r) {
      const unsigned id = block_->rule_ids[r];
      if (id >= which_.classes.size() || which_.classes[id] != RunClass::kWorded) continue;
      bool known = false;
      for (size_t k = run_.worded_begin; k < block_->run_worded.size() && !known; ++k) {
        known = block_->run_worded[k].rule == id && SameProcess(block_->run_worded[k].process, process);
      }
      if (!known) block_->run_worded.push_back({id, process, -1});
    }
    if (reached) {
      // Every phase rule of the line must be reached (ApplyRun checks); the
      // last one's PhaseHit moves to the line, unless it is a frame.
      int64_t designated = -1;
      for (uint32_t r = l.rules_begin; r < l.rules_end; ++r) {
        if (which_.classes[block_->rule_ids[r]] == RunClass::kReached) designated = r;
      }
      const bool moves = !IsTracebackFrame(line);
      for (uint32_t r = l.rules_begin; r < l.rules_end; ++r) {
        const unsigned id = block_->rule_ids[r];
        if (which_.classes[id] != RunClass::kReached) continue;
        ScannedBlock::RunReached* m = nullptr;
        for (size_t k = run_.reached_begin; k < block_->run_reached.size() && !m; ++k) {
          if (block_->run_reached[k].rule == id && SameProcess(block_->run_reached[k].process, process))
            m = &block_->run_reached[k];
        }
        if (!m) {
          block_->run_reached.push_back({id, process, -1});
          m = &block_->run_reached.back();
        }
        if (moves && static_cast<int64_t>(r) == designated) m->line = static_cast<int64_t>(j);
      }
    }
    // The time this line gives the lines after it.
    if (marked) {
      if (parse->time.valid) latest_ = parse->time;
    } else if (which_.need_times && MayCarryTime(line)) {
      parse::Timestamp t = parse::ParseLine(line).time;
      if (t.valid) latest_ = t;
    }
    if (!marked) return;
    run_.last_full = static_cast<int32_t>(j);
    run_.latest_time = latest_;
    for (size_t i = next_confirmed_; i < confirmed.size() && confirmed[i].line_end == l.end; ++i) {
      const ScannedBlock::Confirmed& c = confirmed[i];
      if (!c.matched || which_.classes[c.id] != RunClass::kStep) continue;
      ScannedBlock::RunMark* m = nullptr;
      for (size_t k = run_.marks_begin; k < block_->run_marks.size() && !m; ++k) {
        if (block_->run_marks[k].rule == c.id && SameProcess(block_->run_marks[k].process, process))
          m = &block_->run_marks[k];
      }
      if (!m) {
        block_->run_marks.emplace_back();
        m = &block_->run_marks.back();
        m->rule = c.id;
        m->process = process;
      }
      m->line = static_cast<uint32_t>(j);
      m->confirmed = static_cast<uint32_t>(i);
      m->run_time = latest_;
      m->own_time = parse->time;
    }
  }

  void Finish() { Close(block_->lines.size()); }

 private:
  bool RoomFor(std::string_view process) const {
    if (block_->run_processes.size() < run_.processes_begin + kMaxRunProcesses) return true;
    for (size_t i = run_.processes_begin; i < block_->run_processes.size(); ++i) {
      if (SameProcess(block_->run_processes[i].process, process)) return true;
    }
    return false;
  }

  // Ends the open run before line `end`: kept when long enough.
  void Close(size_t end) {
    if (!open_) return;
    open_ = false;
    run_.end = static_cast<uint32_t>(end);
    if (run_.end - run_.first < kMinRunLines) {
      block_->run_processes.resize(run_.processes_begin);
      block_->run_marks.resize(run_.marks_begin);
      block_->run_reached.resize(run_.reached_begin);
      block_->run_worded.resize(run_.worded_begin);
      return;
    }
    run_.processes_end = static_cast<uint32_t>(block_->run_processes.size());
    run_.marks_end = static_cast<uint32_t>(block_->run_marks.size());
    run_.reached_end = static_cast<uint32_t>(block_->run_reached.size());
    run_.worded_end = static_cast<uint32_t>(block_->run_worded.size());
    std::stable_sort(block_->run_reached.begin() + run_.reached_begin, block_->run_reached.end(),
                     [](const ScannedBlock::RunReached& a, const ScannedBlock::RunReached& b) { return a.line < b.line; });
    const auto& lines = block_->lines;
    auto position = [&](const ScannedBlock::RunMark& m) {  // of the mark's rule among its line's hits
      const ScannedBlock::Line& l = lines[m.line];
      return std::find(block_->rule_ids.begin() + l.rules_begin, block_->rule_ids.begin() + l.rules_end, m.rule) -
             block_->rule_ids.begin();
    };
    std::sort(block_->run_marks.begin() + run_.marks_begin, block_->run_marks.end(),
              [&](const ScannedBlock::RunMark& a, const ScannedBlock::RunMark& b) {
                return a.line != b.line ? a.line < b.line : position(a) < position(b);
              });
    // The run's lines are the last ones parsed: their parses go.
    for (size_t k = run_.first; k < end && k < lines.size(); ++k) block_->lines[k].parsed = -1;
    block_->parsed.resize(parsed_begin_);
    block_->runs.push_back(run_);
  }

  const ScanThreadRules& which_;
  ScannedBlock* block_;
  size_t next_confirmed_ = 0;
  ScannedBlock::Run run_{};
  bool open_ = false;
  size_t parsed_begin_ = 0;  // block->parsed's size when the open run began
  parse::Timestamp latest_;  // of the open run, up to the current line
};

// A line's step rules (StepRules: training marks and progress counters, the
// rules RuleSet::GateLiterals may gate) are confirmed by RE2 on the scan
// thread, gated or not: only those that match are hits, in rule order (the
// order of the rule files), after the line's other hits (in order of end,
// as Hyperscan reports them). Gated, a hit is on a literal, whose end says
// nothing of where the rule matches, and an unconfirmed one would make a
// line interesting that the full scan may not hit. Resolved this way, a
// line's hits are the same whether the rules are gated or matched by
// Hyperscan (RunWalkTest.GatedRulesFindWhatTheFullScanFinds), and finding
// where each match ends (a second RE2 pass on every step line) is not needed.
// The captures of an always-confirmed rule are kept for Take() (no second
// match).
class StepResolver {
 public:
  // The line's hits, `hits` (those of a full scan, or a gated one's), with
  // its step rules resolved; `line_end`: the line's end in the block.
  std::span<const rules::PatternHit> Resolve(const rules::RuleSet& rules, const ScanThreadRules& which,
                                             std::string_view line, size_t line_end,
                                             std::span<const rules::PatternHit> hits) {
    merged_.clear();
    rules_.clear();
    taken_.clear();
    for (const rules::PatternHit& h : hits) {
      const unsigned id = h.id >= rules::kGateBase ? h.id - rules::kGateBase : h.id;
      if (h.id < rules::kGateBase && (id >= which.steps.size() || !which.steps[id])) {
        merged_.push_back(h);
      } else if (std::find(rules_.begin(), rules_.end(), id) == rules_.end()) {
        rules_.push_back(id);
      }
    }
    std::sort(rules_.begin(), rules_.end());
    // Scanner::Line counts the first generic counter that matches (in rule
    // order: the bracketed "[ 240/500] ... loss" before "Epoch 1", which does
    // not rise within an epoch), and only when no other phase rule speaks for
    // the line: the generic rules after it are no hits, and its captures are
    // kept (no second match in the walk) when the line holds no other phase rule.
    bool phases = false;
    for (const rules::PatternHit& h : merged_) {
      phases |= h.id < rules::kStructuralBase && rules.rules()[h.id].kind == RuleKind::kPhase &&
                !rules.rules()[h.id].fallback;  // Scanner::Line confirms a fallback after the counters
    }
    for (unsigned id : rules_) phases |= !rules.rules()[id].progress;
    bool counted = false;
    for (unsigned id : rules_) {
      const bool generic = rules.rules()[id].progress;
      if (generic && counted) continue;
      const bool keep = (id < which.always.size() && which.always[id]) || (generic && !phases);
      rules::Captures caps;
      if (!rules.Confirm(id, line, keep ? &caps : nullptr)) continue;
      merged_.push_back({id, line_end});
      counted |= generic;
      if (keep) taken_.emplace_back(id, std::move(caps));
    }
    return merged_;
  }

  // The captures of rule `id`'s match on the line Resolve() last saw; false
  // when it kept none (not a step rule there, or not always confirmed).
  bool Take(unsigned id, rules::Captures* captures) {
    for (auto& [rule, caps] : taken_) {
      if (rule != id) continue;
      *captures = std::move(caps);
      return true;
    }
    return false;
  }

 private:
  std::vector<rules::PatternHit> merged_;
  std::vector<unsigned> rules_;
  std::vector<std::pair<unsigned, rules::Captures>> taken_;
};

// The stateless part of the line walk, on the scan thread: splits the block
// into lines, gives each line its hits (a hit belongs to the line whose end
// is the first at or after the hit's end), parses its process prefix, parses
// in full a line whose hits the walk will need it for, and confirms the
// always-confirmed hits (RE2 work off the serial walk), once per (line, rule).
void PrepareOnScanThread(const rules::RuleSet& rules, const ScanThreadRules& which, ScannedBlock* block) {
  std::string_view data = block->data;
  const std::vector<rules::PatternHit>& hits = block->hits;
  block->lines.clear();
  block->rule_ids.clear();
  block->parsed.clear();
  RunBuilder runs(which, block);
  StepResolver steps;
  parse::ParsedLine full;
  bool full_blank = false;  // full is a BlankParse (of the line before)
  size_t hit = 0;
  size_t pos = 0;
  // The previous line, when a line of its shape may take its resolved hits:
  // its text, its pattern hits' ids, its line entry and its confirmations.
  bool prev_ok = false;
  std::string_view prev_line;
  std::vector<unsigned> prev_hits;
  ScannedBlock::Line prev_out{};
  bool prev_parse = false;
  size_t prev_confirmed_begin = 0, prev_confirmed_end = 0;
  // The line before, for the parses of a line of its digit shape. The line
  // parser decides on shapes, never on a digit's value (a field is "digits
  // here", a length, a punctuation; LineParserTest.ShapesDecide checks it on
  // every golden and real log): a line of the same shape has its process
  // prefix at the same place, and a full parse that found nothing (a step
  // line without a header) finds nothing again.
  std::string_view before;
  bool before_prefix = false;  // its prefix parse is known: the process at [process_at, +process_len)
  size_t before_process_at = 0, before_process_len = 0;
  bool before_blank = false;  // it was fully parsed and the parse found nothing
  while (pos < data.size()) {
    const char* nl = static_cast<const char*>(std::memchr(data.data() + pos, '\n', data.size() - pos));
    size_t end = nl ? static_cast<size_t>(nl - data.data()) : data.size();
    std::string_view line = data.substr(pos, end - pos);
    ScannedBlock::Line out{static_cast<uint32_t>(pos),
                           static_cast<uint32_t>(end),
                           static_cast<uint32_t>(block->rule_ids.size()),
                           0,
                           0,
                           -1,
                           {}};
    bool parse = false;
    const size_t first_hit = hit;
    bool stepped = false;  // a step rule's hit or its literal's
    for (; hit < hits.size() && hits[hit].end <= end; ++hit) {
      const unsigned id = hits[hit].id;
      stepped |= id >= rules::kGateBase || (id < which.steps.size() && which.steps[id]);
    }
    std::span<const rules::PatternHit> line_hits(hits.data() + first_hit, hit - first_hit);
    // The same shape and the same hits as the line before: the same rules
    // hit and confirm, their groups at the same places.
    // One shape check against the line before serves both reuses.
    const bool shaped = (before_prefix || before_blank) && SameDigitShape(line, before);
    bool same = prev_ok && stepped && line_hits.size() == prev_hits.size() &&
                (prev_line.data() == before.data() && (before_prefix || before_blank) ? shaped
                                                                                      : SameDigitShape(line, prev_line));
    for (size_t k = 0; same && k < line_hits.size(); ++k) same = line_hits[k].id == prev_hits[k];
    const size_t confirmed_begin = block->confirmed.size();
    if (same) {
      for (uint32_t r = prev_out.rules_begin; r < prev_out.rules_end; ++r) {
        const unsigned id = block->rule_ids[r];
        block->rule_ids.push_back(id);
      }
      out.structure = prev_out.structure;
      parse = prev_parse;
      for (size_t c = prev_confirmed_begin; c < prev_confirmed_end; ++c) {
        const ScannedBlock::Confirmed& was = block->confirmed[c];
        ScannedBlock::Confirmed now{end, was.id, was.matched, {}};
        // Groups at the same places: read again from this line (a cache hit).
        if (was.matched && !was.captures.empty()) rules.Confirm(was.id, line, &now.captures);
        block->confirmed.push_back(std::move(now));
      }
      line_hits = {};
    } else if (which.reuse_shapes && stepped) {
      prev_ok = true;
      prev_hits.clear();
      for (const rules::PatternHit& h : line_hits) {
        const unsigned id = h.id >= rules::kGateBase ? h.id - rules::kGateBase : h.id;
        prev_ok &= id >= rules::kStructuralBase || (id < which.reusable.size() && which.reusable[id]);
        prev_hits.push_back(h.id);
      }
    } else {
      prev_ok = false;
    }
    if (stepped && !same) line_hits = steps.Resolve(rules, which, line, end, line_hits);
    for (const rules::PatternHit& h : line_hits) {
      const unsigned id = h.id;
      if (id >= rules::kStructuralBase) {
        out.structure |= 1u << (id - rules::kStructuralBase);
        continue;
      }
      if (std::find(block->rule_ids.begin() + out.rules_begin, block->rule_ids.end(), id) != block->rule_ids.end()) {
        continue;
      }
      block->rule_ids.push_back(id);
      if (id < which.parsed.size() && which.parsed[id]) parse = true;
      ScannedBlock::Confirmed c{end, id, true, {}};
      if (stepped && steps.Take(id, &c.captures)) {
        block->confirmed.push_back(std::move(c));
      } else if (id < which.always.size() && which.always[id]) {
        c.matched = rules.Confirm(id, line, &c.captures);
        block->confirmed.push_back(std::move(c));
      }
    }
    out.rules_end = static_cast<uint32_t>(block->rule_ids.size());
    if (prev_ok) {
      prev_line = line;
      prev_out = out;
      prev_parse = parse;
      prev_confirmed_begin = confirmed_begin;
      prev_confirmed_end = block->confirmed.size();
    }
    if (shaped && before_prefix) {
      out.process = line.substr(before_process_at, before_process_len);
    } else {
      out.process = parse::ParseProcessPrefixes(line).process;
    }
    parse |= out.structure != 0;
    bool blank = false;
    if (parse && shaped && before_blank) {
      if (full_blank) {  // only its line differs from the BlankParse it holds
        full.text = line;
        full.message = line;
      } else {
        full = BlankParse(line);
        full_blank = true;
      }
      blank = true;
    } else if (parse) {
      full = parse::ParseLine(line);
      blank = full.message.size() == line.size() && full == BlankParse(line);
      full_blank = false;
    }
    before = line;
    before_prefix = out.process.empty() ||
                    (out.process.data() >= line.data() && out.process.data() + out.process.size() <= line.data() + line.size());
    before_process_at = out.process.empty() ? 0 : static_cast<size_t>(out.process.data() - line.data());
    before_process_len = out.process.size();
    before_blank = blank;
    // The line is in the block before the run builder sees it; its parse
    // after (closing a run drops the parses of the run's lines, the last ones).
    const size_t j = block->lines.size();
    block->lines.push_back(out);
    runs.Add(j, block->lines.back(), parse ? &full : nullptr);
    if (parse) {
      block->lines.back().parsed = static_cast<int32_t>(block->parsed.size());
      block->parsed.push_back(full);
    }
    pos = end + 1;
  }
  runs.Finish();
}

}  // namespace

// A newest-first file is reversed in memory; a log viewer's export is far
// smaller than this.
constexpr size_t kMaxReorderedBytes = size_t{256} << 20;

size_t AutoBlockBytes() {
  static const size_t bytes = std::thread::hardware_concurrency() <= 4 ? size_t{256} << 10 : size_t{1} << 20;
  return bytes;
}

bool MayCarryTime(std::string_view line) {
  // Every timestamp the line parser reads holds a clock "HH:MM:SS"
  // (parse/line_parser.cc ClockAt; a unit test checks this on every golden
  // and real log line).
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  // A colon at i with two digits before it and "DD:DD" after it.
  for (size_t i = 2; i + 5 < line.size(); ++i) {
    const void* c = std::memchr(line.data() + i, ':', line.size() - 5 - i);
    if (!c) return false;
    i = static_cast<size_t>(static_cast<const char*>(c) - line.data());
    if (line[i + 3] == ':' && digit(line[i - 2]) && digit(line[i - 1]) && digit(line[i + 1]) && digit(line[i + 2]) &&
        digit(line[i + 4]) && digit(line[i + 5]))
      return true;
  }
  return false;
}

Status ScanInput(const input::InputFile& file, int file_index, bool need_times, const rules::RuleSet& rules,
                 const parse::WrapperSet* wrappers, Findings* findings, const ScanTuning& tuning) {
  auto opened = input::OpenByteSource(file.path);
  if (!opened.ok()) return opened.status();
  input::Unfolding unfolding;
  auto unfolded = input::Unfolded(std::move(*opened), kMaxReorderedBytes, &unfolding);
  if (!unfolded.ok()) return unfolded.status();
  input::NewestFirst order;
  auto source = input::OldestFirst(std::move(*unfolded), kMaxReorderedBytes, &order);
  if (!source.ok()) return source.status();
  input::LineReaderOptions reader_options;
  reader_options.count_lines = false;
  reader_options.block_bytes = tuning.block_bytes ? tuning.block_bytes : AutoBlockBytes();
  input::LineReader reader(std::move(*source), reader_options);
  Scanner scanner(file_index, need_times, rules, findings);
  scanner.set_runs_enabled(tuning.runs);
  std::string worn;
  {
    static const bool kThreaded = std::thread::hardware_concurrency() > 1;
    std::vector<bool> always = AlwaysConfirmed(rules), steps = StepRules(rules);
    std::vector<bool> reusable = ReusableRules(rules, always, steps);
    const ScanThreadRules which{std::move(always), ParsedOnScanThread(rules), RunClasses(rules), std::move(steps),
                                std::move(reusable), need_times, tuning.reuse_shapes};
    BlockPipeline pipeline(&reader, rules.matcher(), kThreaded, wrappers,
                           [&rules, &which](ScannedBlock* block) { PrepareOnScanThread(rules, which, block); });
    while (const ScannedBlock* block = pipeline.Next()) scanner.Block(*block);
    worn = pipeline.wrappers();
  }  // joins the producer: the reader is ours again
  scanner.Finish();
  if (tuning.runs_applied) *tuning.runs_applied += scanner.runs_applied();
  if (tuning.step_runs_applied) *tuning.step_runs_applied += scanner.step_runs_applied();
  if (order.reversed) {
    findings->reversed_files[file_index] = scanner.lines();
    findings->warnings.push_back(
        fmt::format("{}: newest entry first (its timestamps run backwards, as a log viewer's export does): read "
                    "oldest first; line numbers are the file's",
                    file.display));
  } else if (order.too_large) {
    findings->warnings.push_back(
        fmt::format("{}: its timestamps run backwards (newest first?) but it is over {} MiB: read in file order",
                    file.display, kMaxReorderedBytes >> 20));
  }
  const bool folded = unfolding.shape.width > 0;
  if (folded) {
    findings->warnings.push_back(fmt::format(
        "{}: rows cut at {} columns (a terminal copy or `fold`) were joined back into {} lines; line numbers are "
        "the file's rows",
        file.display, unfolding.shape.width, scanner.lines()));
  }
  report::InputSummary summary;
  summary.file = file.display;
  summary.lines = folded ? unfolding.FileRows(scanner.lines()) : scanner.lines();
  summary.bytes = reader.bytes();
  summary.format = input::CompressionName(reader.source().compression());
  if (folded) {
    const std::string fold = fmt::format("folded {}{}", unfolding.shape.width, unfolding.shape.padded ? " padded" : "");
    worn = worn.empty() ? fold : fold + "+" + worn;
    findings->unfolded_files[file_index] = std::move(unfolding);
  }
  summary.wrappers = std::move(worn);
  findings->inputs.push_back(summary);
  if (!reader.status().ok()) {
    findings->warnings.push_back(
        fmt::format("{} (kept the {} lines read before the damage)", reader.status().message(), scanner.lines()));
  }
  if (reader.truncated_lines() > 0) {
    findings->warnings.push_back(
        fmt::format("{}: {} over-long line(s) cut at 256 KiB", file.display, reader.truncated_lines()));
  }
  return Status::Ok();
}

}  // namespace faultline::diagnosis
