#include "rules/rule_set.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

namespace faultline::rules {

std::vector<std::pair<unsigned, std::string>> RuleSet::PatternList(
    const std::vector<Rule>& rules, const std::vector<std::pair<unsigned, std::string>>& structural) {
  std::vector<std::pair<unsigned, std::string>> patterns;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].kind == RuleKind::kRedact) continue;  // applied to report text, not scanned in logs
    patterns.emplace_back(static_cast<unsigned>(i), rules[i].pattern);
  }
  for (const auto& p : structural) patterns.push_back(p);
  return patterns;
}

Result<std::unique_ptr<RuleSet>> RuleSet::Build(
    std::vector<Rule> rules, const std::vector<std::pair<unsigned, std::string>>& structural,
    const PrecompiledDatabase* precompiled) {
  auto set = std::unique_ptr<RuleSet>(new RuleSet());
  // ~200 patterns: compiled on several threads (start-up time).
  set->compiled_.resize(rules.size());
  std::atomic<size_t> next{0};
  auto compile = [&] {
    for (size_t i; (i = next++) < rules.size();) {
      set->compiled_[i] = std::make_unique<RE2>(rules[i].pattern, RE2::Quiet);
    }
  };
  const size_t threads = std::min<size_t>(rules.size() / 16 + 1, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(compile);
  compile();
  for (auto& t : pool) t.join();
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!set->compiled_[i]->ok()) {
      return Status::InvalidArgument(fmt::format("{}: rule {}: bad pattern: {}", rules[i].source,
                                                 rules[i].id, set->compiled_[i]->error()));
    }
    if (rules[i].kind == RuleKind::kRedact) set->redact_rules_.push_back(i);
  }
  auto patterns = PatternList(rules, structural);
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

bool RuleSet::Confirm(size_t index, std::string_view line, Captures* captures) const {
  const RE2& re = *compiled_[index];
  int groups = re.NumberOfCapturingGroups();
  if (groups == 0) return RE2::PartialMatch(line, re);
  std::vector<re2::StringPiece> sub(groups + 1);
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, sub.data(),
                groups + 1)) {
    return false;
  }
  if (captures) {
    for (const auto& [name, idx] : re.NamedCapturingGroups()) {
      if (sub[idx].data() != nullptr) captures->emplace_back(name, std::string(sub[idx]));
    }
  }
  return true;
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

template <typename Lookup>
std::string RenderTemplate(std::string_view tmpl, Lookup lookup) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('{', i);
    if (open == std::string_view::npos) {
      out += tmpl.substr(i);
      break;
    }
    size_t close = tmpl.find('}', open);
    if (close == std::string_view::npos) {
      out += tmpl.substr(i);
      break;
    }
    out += tmpl.substr(i, open - i);
    std::string_view expr = tmpl.substr(open + 1, close - open - 1);
    if (expr.find('*') != std::string_view::npos) {
      long long product = 1;
      bool known = true;
      size_t start = 0;
      while (start <= expr.size()) {
        size_t star = expr.find('*', start);
        std::string_view term = Trim(expr.substr(start, star == std::string_view::npos ? expr.npos : star - start));
        std::string v = lookup(term);
        char* end = nullptr;
        long long n = v.empty() ? 0 : std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || (end && *end != '\0')) {
          known = false;
          break;
        }
        product *= n;
        if (star == std::string_view::npos) break;
        start = star + 1;
      }
      out += known ? std::to_string(product) : "?";
    } else {
      std::string v = lookup(Trim(expr));
      out += v.empty() ? "?" : v;
    }
    i = close + 1;
  }
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
