#include "rules/redactor.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <cstdio>
#include <cstdlib>

#include "rules/embedded_rules.h"
#include "rules/rule_loader.h"

namespace faultline::rules {

struct Redactor::Impl {
  std::vector<std::unique_ptr<RE2>> patterns;
  std::vector<std::string> replacements;
  std::unique_ptr<RE2::Set> set;
};

Redactor::Redactor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Redactor::~Redactor() = default;

size_t Redactor::size() const { return impl_->patterns.size(); }

Result<std::unique_ptr<Redactor>> Redactor::Build(const std::vector<Rule>& rules) {
  auto impl = std::make_unique<Impl>();
  RE2::Options options;
  options.set_log_errors(false);
  impl->set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (const Rule& r : rules) {
    if (r.kind != RuleKind::kRedact) continue;
    auto re = std::make_unique<RE2>(r.pattern, options);
    if (!re->ok()) return Status::InvalidArgument(r.id + ": " + re->error());
    // The samples are checked here, at load, not only by `rules check`: a redact rule that misses a
    // secret it names, or masks a line it must leave alone, never reaches an output.
    for (const std::string& s : r.match_samples)
      if (!RE2::PartialMatch(s, *re)) return Status::InvalidArgument(r.id + " does not match its sample: " + s);
    for (const std::string& s : r.no_match_samples)
      if (RE2::PartialMatch(s, *re)) return Status::InvalidArgument(r.id + " matches its no_match sample: " + s);
    std::string error;
    if (impl->set->Add(r.pattern, &error) < 0) return Status::InvalidArgument(r.id + ": " + error);
    impl->patterns.push_back(std::move(re));
    impl->replacements.push_back(r.replacement.empty() ? "<redacted>" : r.replacement);
  }
  if (!impl->set->Compile()) return Status::Internal("redact rules: the pattern set does not compile");
  return std::unique_ptr<Redactor>(new Redactor(std::move(impl)));
}

std::string Redactor::Text(std::string_view text) const {
  std::string out(text);
  if (impl_->patterns.empty() || text.empty()) return out;
  std::vector<int> hits;
  if (!impl_->set->Match(text, &hits)) return out;
  std::sort(hits.begin(), hits.end());  // the file's order
  for (int i : hits)
    RE2::GlobalReplace(&out, *impl_->patterns[static_cast<size_t>(i)], impl_->replacements[static_cast<size_t>(i)]);
  return out;
}

void Redactor::Argv(std::vector<std::string>* argv) const {
  std::vector<std::string>& a = *argv;
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    if (a[i].size() < 2 || a[i][0] != '-' || a[i].find('=') != std::string::npos) continue;
    std::string joined = a[i] + " " + a[i + 1];
    std::string masked = Text(joined);
    if (masked != joined && masked.compare(0, a[i].size() + 1, a[i] + " ") == 0)
      a[i + 1] = masked.substr(a[i].size() + 1);
  }
  for (auto& s : a) s = Text(s);
}

std::string Redactor::JsonLine(const nlohmann::json& value) const {
  nlohmann::json copy = value;
  Json(&copy);
  return copy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const Redactor& Secrets() {
  static const Redactor* secrets = [] {
    std::vector<Rule> rules;
    if (HaveSerialisedBuiltinRules()) {  // the build-time copy: no YAML parse
      auto all = LoadBuiltinRules();
      if (all.ok()) {
        for (auto& r : *all) {
          if (r.source.starts_with("rules/redact.yaml:")) rules.push_back(std::move(r));
        }
      }
    } else {
      for (const auto& [name, text] : EmbeddedRuleFiles()) {
        if (name != "redact.yaml") continue;
        auto parsed = ParseRuleFile(text, "rules/redact.yaml");
        if (parsed.ok()) rules = std::move(*parsed);
      }
    }
    auto built = Redactor::Build(rules);
    if (!built.ok()) {
      // The build's own test checks the embedded file; never reached in a released binary.
      std::fprintf(stderr, "faultline: rules/redact.yaml: %s\n", built.status().message().c_str());
      std::abort();
    }
    return built->release();
  }();
  return *secrets;
}

}  // namespace faultline::rules
