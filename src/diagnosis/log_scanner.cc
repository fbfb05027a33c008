#include "diagnosis/log_scanner.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <thread>

#include "diagnosis/block_pipeline.h"
#include "diagnosis/scan_patterns.h"
#include "events/event_builder.h"
#include "events/structure.h"
#include "input/line_cleaner.h"
#include "input/line_reader.h"
#include "parse/line_parser.h"

namespace faultline::diagnosis {

using events::LineInfo;
using rules::RuleKind;

Result<std::unique_ptr<rules::RuleSet>> BuildScanRuleSet(std::vector<rules::Rule> rule_list) {
  return rules::RuleSet::Build(std::move(rule_list), StructuralScanPatterns(), &PrecompiledBuiltinDatabase());
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

  // Walks a scanned block's lines. Lines are numbered here (the reader
  // does not count them).
  void Block(const ScannedBlock& block) {
    std::string_view data = block.data;
    const std::vector<rules::PatternHit>& hits = block.hits;
    const int64_t first_line = next_line_;
    size_t hit = 0;
    size_t pos = 0;
    int64_t line_no = first_line;
    size_t index = 0;  // of the line in the block
    block_ = data;
    confirmed_ = &block.confirmed;
    next_confirmed_ = 0;
    timed_from_ = 0;
    while (pos < data.size()) {
      const char* nl = static_cast<const char*>(std::memchr(data.data() + pos, '\n', data.size() - pos));
      size_t end = nl ? static_cast<size_t>(nl - data.data()) : data.size();
      std::string_view line = data.substr(pos, end - pos);
      uint32_t structure = 0;
      line_rules_.clear();
      while (hit < hits.size() && hits[hit].end <= end) {
        unsigned id = hits[hit].id;
        if (id >= rules::kStructuralBase) {
          structure |= 1u << (id - rules::kStructuralBase);
        } else if (std::find(line_rules_.begin(), line_rules_.end(), id) == line_rules_.end()) {
          line_rules_.push_back(id);
        }
        ++hit;
      }
      if (index < block.line_identity.size() && block.line_identity[index] != 0) {
        uint32_t id = block.line_identity[index];
        wrapper_identity_ = block.identities[id];
        wrapper_rank_ = block.identity_rank[id];
      } else {
        wrapper_identity_ = {};
        wrapper_rank_ = -1;
      }
      line_end_ = end;
      Line(line, line_no, structure, pos);
      if (need_times_ && line_examined_) timed_from_ = end + 1;
      pos = end + 1;
      ++line_no;
      ++index;
    }
    if (need_times_) ResolveTime(data.size());  // the next block cannot look back here
    timed_from_ = 0;
    block_ = {};
    confirmed_ = nullptr;
    RememberLastLine(data, line_no - 1);
    next_line_ = line_no;
  }

  int64_t lines() const { return next_line_ - 1; }

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
    const bool interesting = !line_rules_.empty() || structure != 0 || builder_.NeedsEveryLine();
    if (!findings_->miner && (!interesting || (structure == 0 && !builder_.NeedsEveryLine()))) {
      // The common case (INFO noise, or a line that only repeats a phase
      // its process already reached: a step counter, a progress bar): only
      // attribute the line to its process. With several inputs its time is
      // read only if a later line needs it (ResolveTime).
      parse::ParsedLine p = parse::ParseProcessPrefixes(text);
      WithWrapperIdentity(&p);
      if (!interesting || OnlyReachedPhases(p.process)) {
        NoteProcess(p, line_no);
        if (interesting && line_reached_hit_ != kNoHit && !IsTracebackFrame(text)) {
          PhaseHit& ph = findings_->phases[line_reached_hit_];  // its latest mark (ranker: recovered errors)
          ph.last = LineInfo{file_, line_no, {}};
          ph.last_time = last_time_;
        }
        return;
      }
    }
    parse::ParsedLine p = parse::ParseLine(text);
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
    bool benign = false, cascade = false, specific_phase = false;
    generic_rules_.clear();
    for (unsigned id : line_rules_) {
      const rules::Rule& rule = rules_.rules()[id];
      if (rule.kind == RuleKind::kPhase && rule.progress) {
        generic_rules_.push_back(id);  // confirmed below, only when no specific phase speaks for the line
        continue;
      }
      rules::Captures caps;
      if (!Confirm(id, text, &caps)) continue;  // a prefilter false positive
      switch (rule.kind) {
        case RuleKind::kPhase:
          specific_phase = true;
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
          matches_.push_back(events::RuleMatch{id, std::move(caps), line_no});
          break;
        case RuleKind::kRedact:
          break;
      }
    }
    // A generic progress shape (N/M, step N) counts only where no framework's
    // own marker spoke for the line (a weight-loading bar is not training):
    // the first generic rule that matches, confirmed only then (a step line
    // of a known framework skips the capture of its counter).
    if (!specific_phase) {
      for (unsigned id : generic_rules_) {
        rules::Captures caps;
        if (!rules_.Confirm(id, text, &caps)) continue;
        GenericProgress(id, caps, p, line_no);
        break;
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
    view.template_id = template_id;
    builder_.Add(view);
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
      // Progress and completion marks are kept per line (the last step, the
      // counter of a generic progress rule), not only the first.
      if (rule.progress || rule.completes || rule.phase == "training") return false;
      if (id == reached_rule_ && process == reached_process_) {
        hit = reached_hit_;
        continue;
      }
      bool reached = false;
      for (size_t i = 0; i < findings_->phases.size(); ++i) {
        const auto& ph = findings_->phases[i];
        if (ph.phase == rule.phase && ph.process.key == process && ph.completes == rule.completes) {
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
    // Per file: several inputs are scanned apart and merged (scan_inputs.cc).
    auto key = std::make_pair(static_cast<size_t>(id), fmt::format("{}\n{}", file_, p.process));
    auto it = findings_->progress_counters.find(key);
    if (it == findings_->progress_counters.end()) {
      findings_->progress_counters.emplace(std::move(key), value);
      return;
    }
    const bool rose = value > it->second;
    it->second = value;
    if (rose) AddPhase(rules_.rules()[id], id, p, line_no, caps);
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
    if (rule.completes || rule.phase == "training") {
      auto& marks = rule.completes  ? findings_->last_completion
                    : rule.progress ? findings_->last_generic_progress
                                    : findings_->last_progress;
      auto it = marks.find(p.process);
      if (it == marks.end()) it = marks.emplace(std::string(p.process), ProgressMark()).first;
      // Assigned in place: a step line's mark reuses the previous one's memory.
      ProgressMark& mark = it->second;
      mark.where.file = file_;
      mark.where.line = line_no;
      mark.where.text.assign(p.text.substr(0, 400));
      mark.where.template_id = -1;
      mark.time = p.time;
      AssignCapture(caps, "step", &mark.step);
      AssignCapture(caps, "total", &mark.total);
    }
    // Keep the first mark per (process, phase): enough to order phases.
    // Keep the latest one too: a server that answers requests after an error kept serving.
    for (auto& ph : findings_->phases) {
      if (ph.phase == rule.phase && ph.process.key == p.process && ph.completes == rule.completes &&
          ph.generic == rule.progress) {
        if (!IsTracebackFrame(p.text)) {
          ph.last = LineInfo{file_, line_no, {}};
          ph.last_time = p.time;
        }
        return;
      }
    }
    PhaseHit hit;
    hit.phase = rule.phase;
    hit.rule = id;
    hit.where = LineInfo{file_, line_no, std::string(p.text)};
    hit.process = events::ProcessId{std::string(p.process), std::string(p.role), std::string(p.parent), p.pid, p.rank};
    hit.time = p.time;
    hit.completes = rule.completes;
    hit.generic = rule.progress;
    findings_->phases.push_back(std::move(hit));
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
  std::vector<unsigned> line_rules_;
  std::vector<unsigned> generic_rules_;  // the line's generic progress rules, unconfirmed
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
  size_t reached_hit_ = kNoHit;                                      // its PhaseHit in findings_->phases
  size_t line_reached_hit_ = kNoHit;                                 // the PhaseHit the current line marks again
  std::string reached_process_;                                      // ... by this process
  std::string_view block_;                                           // the block being walked
  const std::vector<ScannedBlock::Confirmed>* confirmed_ = nullptr;  // its hits confirmed on the scan thread
  size_t next_confirmed_ = 0;                                        // the first of them not before the current line
  size_t line_end_ = 0;                                              // the current line's end in block_
  size_t timed_from_ = 0;       // lines of block_ from here are not examined for time
  bool line_examined_ = false;  // the current line's time is in last_time_
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
        out[i] = !r.progress && (r.completes || r.phase == "training");
        break;
      default:
        break;
    }
  }
  return out;
}

// Confirms a block's always-confirmed hits on the scan thread (RE2 work off
// the scanner's serial walk), once per (line, rule). A hit belongs to the
// line whose end is the first at or after the hit's end, as in Scanner::Block.
void ConfirmOnScanThread(const rules::RuleSet& rules, const std::vector<bool>& always, ScannedBlock* block) {
  std::string_view data = block->data;
  size_t line_start = 0, line_end = std::string_view::npos;
  size_t first_of_line = 0;  // in block->confirmed
  for (const rules::PatternHit& h : block->hits) {
    if (h.id >= always.size() || !always[h.id]) continue;
    if (line_end == std::string_view::npos || h.end > line_end) {
      if (h.end >= data.size()) break;  // past the last line
      const void* nl = std::memchr(data.data() + h.end, '\n', data.size() - h.end);
      line_end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data.data()) : data.size();
      const void* prev = line_end > 0 ? memrchr(data.data(), '\n', line_end) : nullptr;
      line_start = prev ? static_cast<size_t>(static_cast<const char*>(prev) - data.data()) + 1 : 0;
      first_of_line = block->confirmed.size();
    }
    bool seen = false;
    for (size_t i = first_of_line; i < block->confirmed.size() && !seen; ++i) seen = block->confirmed[i].id == h.id;
    if (seen) continue;
    ScannedBlock::Confirmed c{line_end, h.id, false, {}};
    c.matched = rules.Confirm(h.id, data.substr(line_start, line_end - line_start), &c.captures);
    block->confirmed.push_back(std::move(c));
  }
}

}  // namespace

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
                 const parse::WrapperSet* wrappers, Findings* findings) {
  auto source = input::OpenByteSource(file.path);
  if (!source.ok()) return source.status();
  input::LineReaderOptions reader_options;
  reader_options.count_lines = false;
  input::LineReader reader(std::move(*source), reader_options);
  Scanner scanner(file_index, need_times, rules, findings);
  std::string worn;
  {
    static const bool kThreaded = std::thread::hardware_concurrency() > 1;
    const std::vector<bool> always = AlwaysConfirmed(rules);
    BlockPipeline pipeline(&reader, rules.matcher(), kThreaded, wrappers,
                           [&rules, &always](ScannedBlock* block) { ConfirmOnScanThread(rules, always, block); });
    while (const ScannedBlock* block = pipeline.Next()) scanner.Block(*block);
    worn = pipeline.wrappers();
  }  // joins the producer: the reader is ours again
  scanner.Finish();
  report::InputSummary summary;
  summary.file = file.display;
  summary.lines = scanner.lines();
  summary.bytes = reader.bytes();
  summary.format = input::CompressionName(reader.source().compression());
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
