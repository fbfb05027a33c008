// Masker: splits a log message into tokens and replaces the variable parts
// (numbers, hex ids, IP addresses, UUIDs, paths, pids, ranks) by "<*>" before
// the template miner groups it.
//
// Masking is a hand-written scan, not a list of regexes, so that it costs one
// pass over the bytes: a token (whitespace-separated, or split further at
// MaskOptions::delimiters) keeps its leading "([{<'\"" and trailing
// ")]}>'\",;:." punctuation, and its core is classified:
//   * uuid      8-4-4-4-12 hex digits                      -> <*>
//   * hex       0x1f3a, or >= 8 hex digits with a digit    -> <*>
//   * ip        10.0.0.1, 10.0.0.1:8080, host.example.com:8080, and DNS
//               names with a digit (ec2-3-4.compute.amazonaws.com) (a letterless
//               token with a digit is also a number,
//               so this matters with numbers off)
//   * number    a token with a digit and no letters (42, -1.5, 12:03:44,
//               2017-05-16, 50%) or a number with a short unit (10ms, 4GB)
//               -> <*>; otherwise each digit run that stands between
//               non-alphanumerics is masked (and each hex run with a
//               decimal digit that starts with a digit or has >= 6
//               characters: 0e, df0798e): rank=3 -> rank=<*>,
//               pid:1234 -> pid:<*>, blk_-42 -> blk_<*>, and so is
//               the number of a rank or device name: rank3 -> rank<*>,
//               EngineCore_DP1 -> EngineCore_DP<*>, gpu0 -> gpu<*>
//   * path      /usr/lib/x.so, ./a/b, C:\x, http://host/a  -> <*>
//   * date      month and weekday names of a date: Jul, Fri -> <*>
// Extra RE2 patterns (MaskOptions::patterns) run first on the whole message,
// each match becoming "<*>" (or a given rewrite): that is where per-data-set
// knowledge goes.
//
// Not thread-safe; one Masker per thread. The string_views returned are valid
// until the next call to Mask().
#ifndef FAULTLINE_MINING_MASKER_H_
#define FAULTLINE_MINING_MASKER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace re2 {
class RE2;
}

namespace faultline::mining {

inline constexpr std::string_view kWildcard = "<*>";

// A regex whose matches are rewritten (RE2 syntax; \\1 in `replace` names
// a group): "<*>" by default.
struct MaskPattern {
  MaskPattern(std::string m, std::string r = "<*>") : match(std::move(m)), replace(std::move(r)) {}  // NOLINT
  MaskPattern(const char* m) : match(m) {}                                                           // NOLINT
  std::string match;
  std::string replace = "<*>";
};

struct MaskOptions {
  bool numbers = true;
  bool hex = true;
  bool ip = true;
  bool uuid = true;
  bool path = true;
  bool date = true;
  // Rewrites applied in order to the whole message before tokenizing.
  std::vector<MaskPattern> patterns;
  // Characters that separate tokens in addition to whitespace (e.g. "=,").
  std::string delimiters;
  // Runs of adjacent <*> tokens count as one (variables of varying width).
  bool collapse_wildcards = false;
  // Messages with more tokens are cut; the rest is one trailing <*>.
  size_t max_tokens = 256;
};

// One masked message: tokens and the separator written before each.
struct MaskedMessage {
  std::vector<std::string_view> tokens;
  // separators[i] precedes tokens[i]; " " when only whitespace splits.
  std::vector<std::string_view> separators;
  // All tokens joined by a space: a key for exact-match lookups.
  std::string_view key;
};

class Masker {
 public:
  // Compiles the patterns; InvalidArgument names the bad one.
  static Result<std::unique_ptr<Masker>> Create(MaskOptions options);
  ~Masker();

  // Masks `message`. The result is valid until the next call.
  const MaskedMessage& Mask(std::string_view message);

  // True for a token that stands for a variable or contains one
  // (<*>, rank=<*>, or a token with a digit left in it).
  static bool HasVariable(std::string_view token);

  const MaskOptions& options() const { return options_; }

 private:
  explicit Masker(MaskOptions options);
  // Appends the masked form of `token` to buffer_.
  // `classes`: the character-class bits of the token (masker.cc), or -1
  // to compute them.
  void MaskToken(std::string_view token, int classes);
  void MaskCore(std::string_view core, int classes = -1);
  void MaskDigitRunsOrKeep(std::string_view core);

  MaskOptions options_;
  std::vector<std::unique_ptr<re2::RE2>> patterns_;
  bool is_delimiter_[256] = {};
  std::string rewritten_;  // message after the patterns ran
  std::string buffer_;     // masked tokens, space-separated
  std::string separator_buffer_;
  std::vector<std::pair<size_t, size_t>> token_spans_;
  std::vector<std::pair<size_t, size_t>> separator_spans_;
  MaskedMessage result_;
};

}  // namespace faultline::mining

#endif  // FAULTLINE_MINING_MASKER_H_
