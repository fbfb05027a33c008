// The one place secrets are masked on their way out. Every output that can
// carry text from a job (live.jsonl records and `run --json`, diagnosis.json,
// the dashboard's JSON, event stream and log windows, triage and templates
// reports, preflight's echo of flags) passes through Secrets() before it is
// written. The formats are data: the kind: redact rules of rules/redact.yaml
// (each with samples), compiled once; an RE2::Set finds which rules can apply
// so clean text costs one scan.
#ifndef FAULTLINE_RULES_REDACTOR_H_
#define FAULTLINE_RULES_REDACTOR_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.h"
#include "util/status.h"

namespace faultline::rules {

class Redactor {
 public:
  // From the kind: redact rules among `rules` (others are ignored).
  static Result<std::unique_ptr<Redactor>> Build(const std::vector<Rule>& rules);
  ~Redactor();

  std::string Text(std::string_view text) const;
  // A command line as argv: each element, and each "--flag" "value" pair as
  // one text (so `--api-key SECRET` in two elements is masked too).
  void Argv(std::vector<std::string>* argv) const;
  // Every string in a JSON value; arrays of strings as argv.
  void Json(nlohmann::json* value) const { JsonOf(value); }
  void Json(nlohmann::ordered_json* value) const { JsonOf(value); }
  // Json() on a copy, dumped on one line (invalid UTF-8 replaced).
  std::string JsonLine(const nlohmann::json& value) const;

  size_t size() const;

 private:
  template <typename J>
  void JsonOf(J* value) const {
    J& v = *value;
    if (v.is_string()) {
      v = Text(v.template get_ref<const std::string&>());
    } else if (v.is_object()) {
      for (auto& item : v) JsonOf(&item);
    } else if (v.is_array()) {
      bool strings = !v.empty();
      for (const auto& item : v) strings = strings && item.is_string();
      if (!strings) {
        for (auto& item : v) JsonOf(&item);
        return;
      }
      std::vector<std::string> argv = v.template get<std::vector<std::string>>();
      Argv(&argv);
      v = argv;
    }
  }

  struct Impl;
  explicit Redactor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The built-in redact rules (rules/redact.yaml as embedded), built on first use.
const Redactor& Secrets();

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_REDACTOR_H_
