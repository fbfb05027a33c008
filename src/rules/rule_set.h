// RuleSet: the loaded rules, compiled for matching, plus the helpers that
// apply them (confirming a hit with captures, redacting secrets).
#ifndef FAULTLINE_RULES_RULE_SET_H_
#define FAULTLINE_RULES_RULE_SET_H_

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/pattern_matcher.h"
#include "rules/rule.h"
#include "util/status.h"

namespace faultline::rules {

using Captures = std::vector<std::pair<std::string, std::string>>;

// Ids at or above this value in the shared matcher are structural patterns
// registered by the caller; ids below it are indexes into rules().
inline constexpr unsigned kStructuralBase = 1u << 20;
// Ids at or above this value are the literals of a gated rule (id -
// kGateBase is its index into rules()): see RuleSet::Gated().
inline constexpr unsigned kGateBase = 1u << 24;

// A database compiled ahead of time, with the fingerprint of its pattern list.
struct PrecompiledDatabase {
  uint64_t fingerprint = 0;
  std::string_view bytes;
};

class RuleSet {
 public:
  // `structural` patterns join the same Hyperscan database with their own
  // ids (each >= kStructuralBase). When `precompiled` was built from exactly
  // this pattern list it is loaded instead of compiling.
  // REQUIRES: the rules' patterns are valid RE2 (the loader checks them; a
  // bad one never confirms).
  // `gate`: gated rules (Gated()) join the database as their literals.
  static Result<std::unique_ptr<RuleSet>> Build(std::vector<Rule> rules,
                                                const std::vector<std::pair<unsigned, std::string>>& structural = {},
                                                const PrecompiledDatabase* precompiled = nullptr, bool gate = true);

  // The (id, pattern) list Build() compiles for these rules.
  static std::vector<std::pair<unsigned, std::string>> PatternList(
      const std::vector<Rule>& rules, const std::vector<std::pair<unsigned, std::string>>& structural,
      bool gate = true);

  // Gating. A training mark or a progress counter (a phase rule of the
  // training phase that does not complete it, or a progress rule) hits every
  // step line of a training log, and Hyperscan runs its automaton at each of
  // them: such patterns took ~95% of the scan of a step log. A gated rule
  // joins the database as the literals one of which every line it matches
  // holds (RE2's prefilter atoms, matched without case, kGateBase ids); the
  // scanner confirms the rule with RE2 on a line where one of them hit
  // (diagnosis/log_scanner.cc). A rule whose literals are not all ASCII, or
  // that has none (every line could match), is not gated.
  // The literals of a gated rule, empty when it is not.
  static std::vector<std::string> GateLiterals(const Rule& rule);
  // The rules that may be gated: training marks and progress counters.
  static bool MarksSteps(const Rule& rule);

  const std::vector<Rule>& rules() const { return rules_; }
  const PatternMatcher& matcher() const { return *matcher_; }

  // Runs rule `index`'s RE2 on line; on a match fills *captures (named groups).
  // Thread-safe; each calling thread matches with its own copy of the RE2.
  // A digit-blind rule's answer is kept per thread for the line's shape (its
  // text with every digit read as '0'), and a line of a shape seen recently
  // takes it from there: a step log's lines differ in their digits only.
  bool Confirm(size_t index, std::string_view line, Captures* captures) const;

  // True when rule `index`'s pattern treats every ASCII digit alike (no
  // digit of its own outside a repetition count or a [0-9] range, no escape
  // that could name one): whether and where it matches, its groups
  // included, is then the same for every text that differs only in which
  // digits stand where. Conservative: false when unsure.
  bool DigitBlind(size_t index) const { return index < digit_blind_.size() && digit_blind_[index]; }
  static bool DigitBlindPattern(std::string_view pattern);

  // Masks every secret that a redact rule matches.
  std::string Redact(std::string_view text) const;

 private:
  const RE2& ThreadCompiled(size_t index) const;  // this thread's copy of compiled_[index]
  bool Match(size_t index, std::string_view line, Captures* captures) const;  // RE2, uncached

  uint64_t serial_ = 0;  // unique per Build() in the process
  std::vector<Rule> rules_;
  std::vector<std::unique_ptr<RE2>> compiled_;  // redact rules only (others: ThreadCompiled)
  std::vector<size_t> redact_rules_;
  std::vector<bool> digit_blind_;  // DigitBlind()
  std::unique_ptr<PatternMatcher> matcher_;
};

// Fills {name} placeholders from the rule's captures, then from facts (the
// latest value of a fact wins). "{a*b*c}" multiplies integer values. A
// missing value is never printed: "[ on GPU {gpu}]" is an optional clause,
// dropped when a value in it is unknown; a missing value outside brackets
// drops its clause (text between ", ", "; ", ". ").
std::string RenderTemplateWith(std::string_view tmpl, const Captures& captures, const Captures& facts);

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_RULE_SET_H_
