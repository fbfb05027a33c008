#include "rules/rule_set.h"

#include <fmt/format.h>
#include <re2/filtered_re2.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rules/digit_shape.h"

namespace faultline::rules {

bool RuleSet::MarksSteps(const Rule& rule) {
  return rule.kind == RuleKind::kPhase && (rule.progress || (IsTrainingMark(rule) && !rule.completes));
}

std::vector<std::string> RuleSet::GateLiterals(const Rule& rule) {
  if (!MarksSteps(rule)) return {};
  // One rule alone in RE2's prefilter: a formula over literals (atoms,
  // lowercased; ANDs and ORs, no negation) that every text it matches
  // satisfies. Atoms shorter than 2 bytes are left out by weakening the
  // formula (it stays necessary).
  re2::FilteredRE2 filter(2);
  int id = 0;
  if (filter.Add(rule.pattern, RE2::Options(RE2::Quiet), &id) != RE2::NoError) return {};
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  // A cover: atoms of which every text the rule matches holds one. A text
  // without them holds no atom containing one of them either: the cover is
  // one when the formula fails given every other atom.
  auto covers = [&](const std::vector<int>& cover) {
    std::vector<int> others;
    for (size_t a = 0; a < atoms.size(); ++a) {
      bool out = false;
      for (int c : cover) out |= atoms[a].find(atoms[c]) != std::string::npos;
      if (!out) others.push_back(static_cast<int>(a));
    }
    std::vector<int> passed;
    filter.AllPotentials(others, &passed);
    return passed.empty();
  };
  std::vector<int> all(atoms.size());
  for (size_t i = 0; i < atoms.size(); ++i) all[i] = static_cast<int>(i);
  if (!covers(all)) return {};  // a text without any atom can match
  // From all atoms, the shortest (the most common in text) are left out
  // first while the rest still cover: an alternation's literals go when an
  // atom beside them suffices.
  std::vector<int> cover = all;
  std::stable_sort(cover.begin(), cover.end(), [&atoms](int a, int b) { return atoms[a].size() < atoms[b].size(); });
  for (size_t i = 0; i < cover.size();) {
    std::vector<int> without = cover;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (covers(without)) {
      cover = std::move(without);
    } else {
      ++i;
    }
  }
  std::vector<std::string> out;
  for (int a : cover) {
    for (unsigned char c : atoms[a]) {
      if (c >= 0x80) return {};  // Hyperscan folds the case of ASCII letters only
    }
    out.push_back(atoms[a]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A literal for Hyperscan, any case: every byte but a letter or digit escaped.
std::string CaselessLiteral(std::string_view literal) {
  std::string out = "(?i)";
  for (unsigned char c : literal) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<unsigned, std::string>> RuleSet::PatternList(
    const std::vector<Rule>& rules, const std::vector<std::pair<unsigned, std::string>>& structural, bool gate) {
  std::vector<std::pair<unsigned, std::string>> patterns;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].kind == RuleKind::kRedact) continue;  // applied to report text, not scanned in logs
    std::vector<std::string> literals = gate ? GateLiterals(rules[i]) : std::vector<std::string>();
    if (literals.empty()) {
      patterns.emplace_back(static_cast<unsigned>(i), rules[i].pattern);
      continue;
    }
    for (const std::string& l : literals)
      patterns.emplace_back(kGateBase + static_cast<unsigned>(i), CaselessLiteral(l));
  }
  for (const auto& p : structural) patterns.push_back(p);
  return patterns;
}

Result<std::unique_ptr<RuleSet>> RuleSet::Build(std::vector<Rule> rules,
                                                const std::vector<std::pair<unsigned, std::string>>& structural,
                                                const PrecompiledDatabase* precompiled, bool gate) {
  static std::atomic<uint64_t> serials{0};
  auto set = std::unique_ptr<RuleSet>(new RuleSet());
  set->serial_ = ++serials;
  // Only the redact rules are compiled here: a rule is confirmed with the
  // confirming thread's own copy (ThreadCompiled), compiled on first use, so
  // start-up does not compile ~200 patterns that most logs never hit. The
  // loader has checked every pattern.
  set->compiled_.resize(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].kind != RuleKind::kRedact) continue;
    set->compiled_[i] = std::make_unique<RE2>(rules[i].pattern, RE2::Quiet);
    if (!set->compiled_[i]->ok()) {
      return Status::InvalidArgument(
          fmt::format("{}: rule {}: bad pattern: {}", rules[i].source, rules[i].id, set->compiled_[i]->error()));
    }
    set->redact_rules_.push_back(i);
  }
  set->digit_blind_.resize(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) set->digit_blind_[i] = DigitBlindPattern(rules[i].pattern);
  auto patterns = PatternList(rules, structural, gate);
  std::unique_ptr<PatternMatcher> matcher;
  if (precompiled && precompiled->fingerprint == PatternMatcher::Fingerprint(patterns)) {
    auto loaded = PatternMatcher::Deserialize(precompiled->bytes);
    if (loaded.ok()) matcher = std::move(*loaded);
  }
  if (!matcher) {
    auto compiled = PatternMatcher::Compile(patterns);
    if (!compiled.ok()) return compiled.status();
    matcher = std::move(*compiled);
  }
  set->matcher_ = std::move(matcher);
  set->rules_ = std::move(rules);
  return set;
}

// RE2 guards its DFA cache with a reader-writer lock taken on every search,
// so threads sharing one RE2 contend on that lock (several files scanned at
// once confirm the same step-line rule millions of times). Each thread
// confirms with its own copies, compiled on first use: a thread confirms a
// few of the rules. The copies belong to one rule set at a time (by serial
// number: a later set may reuse an earlier one's address).
const RE2& RuleSet::ThreadCompiled(size_t index) const {
  struct Copies {
    uint64_t serial = 0;
    std::vector<std::unique_ptr<RE2>> re;
  };
  thread_local Copies copies;
  if (copies.serial != serial_) {
    copies.serial = serial_;
    copies.re.clear();
  }
  if (copies.re.size() < rules_.size()) copies.re.resize(rules_.size());
  std::unique_ptr<RE2>& copy = copies.re[index];
  if (!copy) copy = std::make_unique<RE2>(rules_[index].pattern, RE2::Quiet);
  return *copy;
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A character class from just after its '[' (RE2 syntax): *i is left after
// its ']'. False when a digit stands in it other than as the range 0-9 (a
// range whose ends are not digits holds all of them or none: they are
// contiguous), or an escape could name one.
bool DigitBlindClass(std::string_view p, size_t* i) {
  size_t k = *i;
  if (k < p.size() && p[k] == '^') ++k;
  bool first = true;
  // One end of a range: false when it is an escape that could name a digit;
  // *digit says whether it is one.
  auto end_at = [&](size_t* at, bool* digit, bool* set) {
    *digit = false;
    *set = false;
    if (p[*at] == '\\') {
      if (*at + 1 >= p.size()) return false;
      char e = p[*at + 1];
      if (IsDigit(e) || e == 'x' || e == 'p' || e == 'P' || e == 'Q' || e == 'C') return false;
      *set = e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S';
      *at += 2;
      return true;
    }
    *digit = IsDigit(p[*at]);
    *at += 1;
    return true;
  };
  while (k < p.size()) {
    if (p[k] == ']' && !first) {
      *i = k + 1;
      return true;
    }
    first = false;
    if (p.compare(k, 2, "[:") == 0) {  // [:alnum:] and the others hold every digit or none
      size_t close = p.find(":]", k + 2);
      if (close == std::string_view::npos) return false;
      k = close + 2;
      continue;
    }
    const char lo_char = p[k];
    bool lo_digit, lo_set;
    if (!end_at(&k, &lo_digit, &lo_set)) return false;
    if (!lo_set && k + 1 < p.size() && p[k] == '-' && p[k + 1] != ']') {
      ++k;
      const char hi_char = p[k];
      bool hi_digit, hi_set;
      if (!end_at(&k, &hi_digit, &hi_set) || hi_set) return false;
      if ((lo_digit || hi_digit) && !(lo_char == '0' && hi_char == '9')) return false;
      continue;
    }
    if (lo_digit) return false;
  }
  return false;  // unclosed
}

}  // namespace

bool RuleSet::DigitBlindPattern(std::string_view p) {
  size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return false;
      char e = p[i + 1];
      if (IsDigit(e) || e == 'x' || e == 'p' || e == 'P' || e == 'Q' || e == 'C') return false;
      i += 2;
    } else if (c == '[') {
      ++i;
      if (!DigitBlindClass(p, &i)) return false;
    } else if (c == '(' && (p.compare(i, 4, "(?P<") == 0 || p.compare(i, 3, "(?<") == 0)) {
      size_t close = p.find('>', i);  // a group's name may hold digits
      if (close == std::string_view::npos) return false;
      i = close + 1;
    } else if (c == '{') {
      // A repetition {n}, {n,} or {n,m}; any other brace is a literal one.
      size_t k = i + 1;
      while (k < p.size() && IsDigit(p[k])) ++k;
      bool counted = k > i + 1;
      if (counted && k < p.size() && p[k] == ',') {
        ++k;
        while (k < p.size() && IsDigit(p[k])) ++k;
      }
      i = counted && k < p.size() && p[k] == '}' ? k + 1 : i + 1;
    } else if (IsDigit(c)) {
      return false;
    } else {
      ++i;
    }
  }
  return true;
}

namespace {

// Runs re (which has capturing groups) on line; on a match calls take(name,
// piece) for each named group that took part. Most rules have a few groups:
// their submatches live on the stack.
template <typename Take>
bool MatchNamedGroups(const RE2& re, std::string_view line, Take take) {
  const int groups = re.NumberOfCapturingGroups();
  re2::StringPiece small[8];
  std::vector<re2::StringPiece> large;
  re2::StringPiece* sub = small;
  if (groups + 1 > 8) {
    large.resize(groups + 1);
    sub = large.data();
  }
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, sub, groups + 1)) {
    return false;
  }
  for (const auto& [name, idx] : re.NamedCapturingGroups()) {
    if (sub[idx].data() != nullptr) take(name, sub[idx]);
  }
  return true;
}

// The per-thread answers of digit-blind rules by line shape (RuleSet::Confirm).
struct ShapeCache {
  static constexpr size_t kSlots = 256;
  static constexpr size_t kMaxLine = 1024;  // longer lines are matched as they come
  struct Slot {
    uint64_t serial = 0;  // of the rule set; 0: empty
    size_t index = 0;
    uint64_t hash = 0;
    bool matched = false;
    bool has_spans = false;  // the groups' places are known
    std::string shape;
    struct Span {
      std::string name;
      size_t offset, size;
    };
    std::vector<Span> spans;  // the named groups that took part, in the order Confirm gives them
  };
  std::vector<Slot> slots = std::vector<Slot>(kSlots);
  std::string shape;  // the current line's
};

// Writes line with every ASCII digit made '0' to *out; returns its hash.
uint64_t DigitShape(std::string_view line, std::string* out) {
  out->resize(line.size());
  char* o = out->data();
  const char* p = line.data();
  const size_t n = line.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    w = ZeroDigits8(w);
    std::memcpy(o + i, &w, 8);
    mix(w);
  }
  uint64_t tail = 0;
  for (size_t k = 0; i < n; ++i, ++k) {
    char c = IsAsciiDigit(p[i]) ? '0' : p[i];
    o[i] = c;
    tail |= static_cast<uint64_t>(static_cast<unsigned char>(c)) << (8 * k);
  }
  mix(tail);
  return h;
}

}  // namespace

bool RuleSet::Confirm(size_t index, std::string_view line, Captures* captures) const {
  if (!DigitBlind(index) || line.size() > ShapeCache::kMaxLine) return Match(index, line, captures);
  thread_local ShapeCache cache;
  const uint64_t hash = DigitShape(line, &cache.shape);
  uint64_t key = hash ^ (static_cast<uint64_t>(index) * 0xff51afd7ed558ccdull);
  key ^= key >> 29;
  ShapeCache::Slot& slot = cache.slots[(key * 0x94d049bb133111ebull) >> 56];
  const bool same = slot.serial == serial_ && slot.index == index && slot.hash == hash && slot.shape == cache.shape;
  if (same && (!slot.matched || !captures || slot.has_spans)) {
    if (slot.matched && captures) {
      for (const auto& span : slot.spans) captures->emplace_back(span.name, std::string(line.substr(span.offset, span.size)));
    }
    return slot.matched;
  }
  slot.serial = serial_;
  slot.index = index;
  slot.hash = hash;
  slot.shape = cache.shape;
  slot.spans.clear();
  slot.matched = false;
  slot.has_spans = true;
  const RE2& re = ThreadCompiled(index);
  if (!re.ok()) return false;  // a pattern the loader did not check
  const int groups = re.NumberOfCapturingGroups();
  if (groups == 0 || !captures) {
    slot.has_spans = groups == 0;
    slot.matched = RE2::PartialMatch(line, re);
    return slot.matched;
  }
  slot.matched = MatchNamedGroups(re, line, [&](const std::string& name, re2::StringPiece piece) {
    captures->emplace_back(name, std::string(piece));
    slot.spans.push_back({name, static_cast<size_t>(piece.data() - line.data()), piece.size()});
  });
  return slot.matched;
}

bool RuleSet::Match(size_t index, std::string_view line, Captures* captures) const {
  const RE2& re = ThreadCompiled(index);
  if (!re.ok()) return false;  // a pattern the loader did not check
  int groups = re.NumberOfCapturingGroups();
  if (groups == 0 || !captures) return RE2::PartialMatch(line, re);
  return MatchNamedGroups(re, line, [&](const std::string& name, re2::StringPiece piece) {
    captures->emplace_back(name, std::string(piece));
  });
}

std::string RuleSet::Redact(std::string_view text) const {
  std::string out(text);
  for (size_t i : redact_rules_) {
    const Rule& rule = rules_[i];
    RE2::GlobalReplace(&out, *compiled_[i], rule.replacement.empty() ? "<redacted>" : rule.replacement);
  }
  return out;
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

// One {expr}: a name, or "a*b*c" multiplied; empty when a value is unknown.
template <typename Lookup>
std::string RenderValue(std::string_view expr, Lookup& lookup) {
  if (expr.find('*') == std::string_view::npos) return lookup(Trim(expr));
  long long product = 1;
  size_t start = 0;
  while (start <= expr.size()) {
    size_t star = expr.find('*', start);
    std::string_view term = Trim(expr.substr(start, star == std::string_view::npos ? expr.npos : star - start));
    std::string v = lookup(term);
    char* end = nullptr;
    long long n = v.empty() ? 0 : std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || (end && *end != '\0')) return "";
    product *= n;
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return std::to_string(product);
}

// Fills the placeholders of a clause-free stretch of text; *missing is set
// when one of them has no value (it renders as nothing).
template <typename Lookup>
std::string FillPlaceholders(std::string_view tmpl, Lookup& lookup, bool* missing) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('{', i);
    size_t close = open == std::string_view::npos ? open : tmpl.find('}', open);
    if (close == std::string_view::npos) {
      out += tmpl.substr(i);
      break;
    }
    out += tmpl.substr(i, open - i);
    std::string v = RenderValue(tmpl.substr(open + 1, close - open - 1), lookup);
    if (v.empty()) *missing = true;
    out += v;
    i = close + 1;
  }
  return out;
}

// Splits text into clauses that end after ", ", "; ", ". " (or the end):
// the unit dropped when a value outside any [optional clause] is missing.
std::vector<std::string_view> Clauses(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if ((text[i] == ',' || text[i] == ';' || text[i] == '.') && text[i + 1] == ' ') {
      out.push_back(text.substr(start, i + 2 - start));
      start = i + 2;
    }
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

bool HasPlaceholder(std::string_view s) {
  size_t open = s.find('{');
  return open != std::string_view::npos && s.find('}', open) != std::string_view::npos;
}

// Renders a template without printing a placeholder for a missing value:
//  - "[ on GPU {gpu}]" is an optional clause: kept (without its brackets)
//    when every value in it is known, dropped otherwise. Brackets that hold
//    no placeholder are literal text ("[0, n)").
//  - a missing value outside brackets drops its clause (the text between
//    ", " / "; " / ". " boundaries); a sentence's last clause dropped keeps
//    the sentence's end mark.
template <typename Lookup>
std::string RenderTemplate(std::string_view tmpl, Lookup lookup) {
  // Pass 1: optional clauses. Their placeholders are filled here; what is
  // left for pass 2 is plain text plus placeholders outside brackets, so a
  // value is never read twice (values are not re-parsed as templates).
  std::string flat;
  std::vector<std::pair<size_t, size_t>> filled;  // spans of flat already filled
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('[', i);
    size_t close = open == std::string_view::npos ? open : tmpl.find(']', open);
    if (close == std::string_view::npos) {
      flat += tmpl.substr(i);
      break;
    }
    std::string_view inner = tmpl.substr(open + 1, close - open - 1);
    if (!HasPlaceholder(inner)) {
      flat += tmpl.substr(i, close + 1 - i);
      i = close + 1;
      continue;
    }
    flat += tmpl.substr(i, open - i);
    bool missing = false;
    std::string text = FillPlaceholders(inner, lookup, &missing);
    if (!missing) {
      filled.emplace_back(flat.size(), flat.size() + text.size());
      flat += text;
    }
    i = close + 1;
  }
  // Pass 2: placeholders outside brackets, clause by clause.
  auto is_filled = [&](size_t pos) {
    for (const auto& [a, b] : filled) {
      if (pos >= a && pos < b) return true;
    }
    return false;
  };
  std::string out;
  size_t offset = 0;
  for (std::string_view clause : Clauses(flat)) {
    const size_t clause_at = offset;
    offset += clause.size();
    std::string rendered;
    bool missing = false;
    size_t j = 0;
    while (j < clause.size()) {
      size_t open = clause.find('{', j);
      while (open != std::string_view::npos && is_filled(clause_at + open)) open = clause.find('{', open + 1);
      size_t close = open == std::string_view::npos ? open : clause.find('}', open);
      if (close == std::string_view::npos) {
        rendered += clause.substr(j);
        break;
      }
      rendered += clause.substr(j, open - j);
      std::string v = RenderValue(clause.substr(open + 1, close - open - 1), lookup);
      if (v.empty()) missing = true;
      rendered += v;
      j = close + 1;
    }
    if (!missing) {
      out += rendered;
      continue;
    }
    // Dropped: a sentence end it carried moves onto the clause before it.
    std::string_view end = Trim(clause);
    if (!end.empty() && (end.back() == '.' || end.back() == '!' || end.back() == '?')) {
      while (!out.empty() && (out.back() == ' ' || out.back() == ',' || out.back() == ';')) out.pop_back();
      if (!out.empty() && out.back() != '.') out += end.back();
      if (clause.back() == ' ') out += ' ';
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ',' || out.back() == ';')) out.pop_back();
  return out;
}

std::string RenderTemplateWith(std::string_view tmpl, const Captures& captures, const Captures& facts) {
  return RenderTemplate(tmpl, [&](std::string_view name) -> std::string {
    for (const auto& [k, v] : captures) {
      if (k == name) return v;
    }
    for (auto it = facts.rbegin(); it != facts.rend(); ++it) {  // latest value wins
      if (it->first == name) return it->second;
    }
    return "";
  });
}

}  // namespace faultline::rules
