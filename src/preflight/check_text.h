// The words of each preflight finding (rules/preflight_checks.yaml): the
// error the launcher would print, where that text lives in its source, and
// the fix, as templates with {placeholders} filled from the finding's numbers.
#ifndef FAULTLINE_PREFLIGHT_CHECK_TEXT_H_
#define FAULTLINE_PREFLIGHT_CHECK_TEXT_H_

#include <map>
#include <string>
#include <string_view>

#include "util/status.h"

namespace faultline::preflight {

struct CheckText {
  std::string tool_error;
  std::string source;
  std::string fix;
};

using TemplateValues = std::map<std::string, std::string>;

class CheckTexts {
 public:
  static Result<CheckTexts> Load(std::string_view yaml_text);
  static const CheckTexts& Builtin();

  // `variant` first ("vllm-dp", "vllm", "heads"), then "default". Empty
  // texts when neither exists.
  CheckText Get(const std::string& check, const std::string& variant) const;
  // Get() with the placeholders filled.
  CheckText Render(const std::string& check, const std::string& variant, const TemplateValues& values) const;

  const std::map<std::string, std::map<std::string, CheckText>>& all() const { return texts_; }

 private:
  std::map<std::string, std::map<std::string, CheckText>> texts_;
};

// Replaces {name} with values[name]; unknown names are left as written.
std::string FillTemplate(std::string_view tmpl, const TemplateValues& values);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_CHECK_TEXT_H_
