#include "diagnosis/runs.h"

#include <algorithm>

#include <fmt/format.h>

namespace faultline::diagnosis {
namespace {

bool IsRunEnd(const events::Event& e, const rules::RuleSet& rules) {
  return std::any_of(e.matches.begin(), e.matches.end(),
                     [&](const events::RuleMatch& m) { return rules.rules()[m.rule].run_end; });
}

// A phase mark that says a process is running: not a traceback's or a stack dump's frame (they say where
// a process was when it stopped), not a generic counter, not a completion.
bool RunsAgain(const PhaseHit& ph, const rules::RuleSet& rules) {
  const rules::Rule& r = rules.rules()[ph.rule];
  return !r.interrupted && !r.stack && !ph.generic && !ph.completes;
}

// The event is a run end that its writer prints once per run (a scheduler's job report).
bool OnePerRunEnd(const events::Event& e, const rules::RuleSet& rules) {
  return std::any_of(e.matches.begin(), e.matches.end(), [&](const events::RuleMatch& m) {
    return rules.rules()[m.rule].run_end && rules.rules()[m.rule].one_per_run;
  });
}

}  // namespace

std::optional<events::LineInfo> LastRunStart(const Findings& f, const rules::RuleSet& rules) {
  std::vector<const events::Event*> ends;
  for (const auto& e : f.events) {
    if (f.reversed_files.count(e.where.file)) continue;  // read last line first: no run order
    if (IsRunEnd(e, rules)) ends.push_back(&e);
  }
  std::optional<events::LineInfo> start;
  for (size_t i = 0; i < ends.size(); ++i) {
    const events::Event& end = *ends[i];
    const int file = end.where.file;
    const int64_t line = end.where.line;
    auto after = [&](const events::LineInfo& w) { return w.file == file && w.line > line; };
    bool again = false;
    // The same agent (a known pid: the parser's, from a glog header or a prefix) reports another run's
    // end or is stopped later: it had relaunched.
    const int64_t agent = end.process.pid;
    if (agent >= 0) {
      for (size_t j = i + 1; j < ends.size() && !again; ++j) {
        again = after(ends[j]->where) && ends[j]->process.pid == agent;
      }
      for (size_t s = 0; s < f.stops.size() && !again; ++s) {
        again = after(f.stops[s].where) && f.stops[s].process.pid == agent;
      }
    }
    // A scheduler's job report, printed once per job (a `one_per_run` rule: LSF's "Exited with exit code N."),
    // printed again later in the file by the same (unprefixed) writer: another job ended after this one (several
    // submissions appended to one output file).
    if (agent < 0) {
      for (size_t j = i + 1; j < ends.size() && !again; ++j) {
        again = after(ends[j]->where) && ends[j]->process.key == end.process.key && OnePerRunEnd(*ends[j], rules) &&
                OnePerRunEnd(end, rules);
      }
    }
    // A phase the launcher's process had passed before the run ended is reached again after it.
    for (size_t p = 0; p < f.phases.size() && !again; ++p) {
      const PhaseHit& ph = f.phases[p];
      if (ph.fallback) continue;  // words, no framework's mark: no restart
      again = RunsAgain(ph, rules) && ph.process.key == end.process.key && ph.where.file == file &&
              ph.where.line < line && after(ph.last);
    }
    if (again && (!start || line + 1 > start->line)) start = events::LineInfo{file, line + 1, "", -1};
  }
  return start;
}

bool KeepLastRun(const rules::RuleSet& rules, Findings* f) {
  const std::optional<events::LineInfo> start = LastRunStart(*f, rules);
  if (!start) return false;
  auto before = [&](const events::LineInfo& w) { return w.file == start->file && w.line < start->line; };
  f->events.erase(std::remove_if(f->events.begin(), f->events.end(),
                                 [&](const events::Event& e) { return before(e.where); }),
                  f->events.end());
  f->stops.erase(std::remove_if(f->stops.begin(), f->stops.end(), [&](const StopHit& s) { return before(s.where); }),
                 f->stops.end());
  std::vector<PhaseHit> kept;
  for (PhaseHit& ph : f->phases) {
    if (!before(ph.where)) {
      kept.push_back(std::move(ph));
    } else if (ph.last.file == start->file && ph.last.line >= start->line) {
      // Reached again in the last run: its mark there.
      ph.where = ph.last;
      ph.time = ph.last_time;
      kept.push_back(std::move(ph));
    }
  }
  f->phases = std::move(kept);
  for (auto* marks : {&f->last_progress, &f->last_generic_progress, &f->last_completion}) {
    for (auto it = marks->begin(); it != marks->end();) {
      it = before(it->second.where) ? marks->erase(it) : std::next(it);
    }
  }
  f->warnings.push_back(fmt::format(
      "the log holds more than one run of the job: the launcher reported a run's end at line {} and the job ran "
      "again (a relaunch); only the last run, from line {} on, says how the job ended",
      FileLine(*f, *start) - 1, FileLine(*f, *start)));
  return true;
}

}  // namespace faultline::diagnosis
