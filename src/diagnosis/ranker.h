// Ranker: picks the root cause among the events and explains every decision.
//
// The documented ordering (docs/diagnosis.md):
//   1. Events are put in causal order: by timestamp across files when lines
//      carry one, otherwise by file order and line number.
//   2. Events matched by a cascade rule are consequences; an error followed
//      by the same process reaching ready/training is recovered.
//   3. The root cause is the earliest remaining strong event (traceback,
//      exception, terminate, signal, kernel assertion, exit status); failing
//      that the earliest weak one (ERROR line, NCCL WARN); failing that the
//      earliest launcher summary (cascade rule with summary: true).
//   4. Within a chained traceback the first printed exception (the innermost
//      cause) is the message.
//   5. Every other event is cascade, with the reason it was judged so.
//   6. A stop (rule kind stop: Ctrl-C, SIGTERM, a scheduler's time limit)
//      makes every later event its consequence; with no fatal error before
//      it there is no root cause and the job is stalled where it was.
#ifndef FAULTLINE_DIAGNOSIS_RANKER_H_
#define FAULTLINE_DIAGNOSIS_RANKER_H_

#include <optional>
#include <string>
#include <vector>

#include "diagnosis/findings.h"
#include "rules/rule_set.h"

namespace faultline::diagnosis {

struct CascadeDecision {
  size_t event = 0;  // index into the ranked events
  std::string reason;
  std::optional<size_t> rule;
};

struct Ranking {
  std::vector<size_t> order;          // event indexes in causal order
  std::optional<size_t> root;         // index into findings.events
  std::vector<std::string> why;       // reasons for the root
  std::vector<CascadeDecision> cascade;
  std::vector<size_t> same_error;     // events that repeat the root's error elsewhere
  std::vector<size_t> recovered;
  // Index into findings.stops: the earliest stop (Ctrl-C, SIGTERM, a time
  // limit). Events from it on are its consequences; a root cause is then
  // only a fatal error before it, otherwise the job is stalled.
  std::optional<size_t> stop;
};

// Causal order key of a line: timestamps where present, then file and line.
bool CausallyBefore(const events::LineInfo& a, const parse::Timestamp& ta, const events::LineInfo& b,
                    const parse::Timestamp& tb, bool multi_file);

// The rule of `kind` that speaks for an event (see ranker.cc for the order).
std::optional<size_t> FirstRuleOfKind(const events::Event& e, const rules::RuleSet& rules, rules::RuleKind kind);

Ranking Rank(const Findings& findings, const rules::RuleSet& rules, bool multi_file);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_RANKER_H_
