#include "supervise/log_phase.h"

#include <re2/re2.h>

#include "rules/rule_loader.h"

namespace faultline::supervise {

LogPhase::LogPhase(const std::vector<rules::Rule>& phase_rules, const std::vector<PhaseMarker>& markers) {
  for (const auto& r : phase_rules) {
    if (r.kind != rules::RuleKind::kPhase || r.phase.empty()) continue;
    auto re = std::make_unique<RE2>(r.pattern, RE2::Quiet);
    if (!re->ok()) continue;  // rule files are checked at load; a bad one marks nothing here
    markers_.push_back({r.phase, r.progress, std::move(re)});
  }
  for (const auto& m : markers) {
    auto re = std::make_unique<RE2>(m.pattern, RE2::Quiet);
    if (re->ok()) markers_.push_back({m.phase, false, std::move(re)});
  }
}

LogPhase::~LogPhase() = default;

const std::vector<rules::Rule>& LogPhase::BuiltinPhaseRules() {
  static const std::vector<rules::Rule> phase_rules = [] {
    std::vector<rules::Rule> out;
    auto all = rules::LoadBuiltinRules();
    if (!all.ok()) return out;  // the live status then shows only stall.yaml's markers
    for (auto& r : *all) {
      if (r.kind == rules::RuleKind::kPhase) out.push_back(std::move(r));
    }
    return out;
  }();
  return phase_rules;
}

bool LogPhase::CounterRises(const Marker& m, const std::deque<std::string>& tail) const {
  const auto& names = m.re->NamedCapturingGroups();
  const auto named = names.find("step");
  // Without a (?P<step>N) group, two different lines of the shape count.
  const int group = named == names.end() ? 0 : named->second;
  std::vector<re2::StringPiece> groups(group + 1);
  std::string first;
  bool seen = false;
  for (const auto& line : tail) {
    if (!m.re->Match(line, 0, line.size(), RE2::UNANCHORED, groups.data(), group + 1)) continue;
    std::string value(groups[group].data(), groups[group].size());
    if (!seen) {
      first = std::move(value);
      seen = true;
    } else if (value != first) {
      return true;
    }
  }
  return false;
}

std::string LogPhase::PhaseOf(const std::deque<std::string>& tail) const {
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    for (const auto& m : markers_) {
      if (!RE2::PartialMatch(*it, *m.re)) continue;
      if (m.progress && !CounterRises(m, tail)) continue;
      return m.phase;
    }
  }
  return "";
}

}  // namespace faultline::supervise
