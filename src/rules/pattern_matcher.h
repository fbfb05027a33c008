// PatternMatcher: many regexes matched in one pass over a block of lines.
//
// All patterns (rule signatures plus the structural patterns of events/) go
// into one Hyperscan database compiled in prefilter mode, so the cost of a
// scan hardly grows with the number of rules. Prefiltering may over-report;
// callers confirm a hit on its line with RE2 (which also yields captures).
// Scan() may be called from several threads at once (a scratch space per thread).
#ifndef FAULTLINE_RULES_PATTERN_MATCHER_H_
#define FAULTLINE_RULES_PATTERN_MATCHER_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace faultline::rules {

struct PatternHit {
  unsigned id;
  size_t end;  // offset just past the match in the scanned data
};

class PatternMatcher {
 public:
  ~PatternMatcher();
  // Patterns use RE2 syntax; named groups are accepted (and ignored here).
  static Result<std::unique_ptr<PatternMatcher>> Compile(
      const std::vector<std::pair<unsigned, std::string>>& patterns);

  // Appends every hit in data to *hits, in order of end offset.
  void Scan(std::string_view data, std::vector<PatternHit>* hits) const;

  // A compiled database as bytes, and back: built-in rules are compiled at
  // build time (compiling ~200 patterns in prefilter mode takes ~0.5 s).
  Result<std::string> Serialize() const;
  static Result<std::unique_ptr<PatternMatcher>> Deserialize(std::string_view bytes);

  // Identifies a pattern list (ids, patterns, flags, Hyperscan version): a
  // serialized database is used only for the exact list it was built from.
  static uint64_t Fingerprint(const std::vector<std::pair<unsigned, std::string>>& patterns);

 private:
  PatternMatcher() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Rewrites an RE2 pattern into the dialect Hyperscan accepts.
std::string ToHyperscanPattern(std::string_view re2_pattern);

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_PATTERN_MATCHER_H_
