#include "preflight/check_text.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "preflight/embedded_rules.h"

namespace faultline::preflight {

std::string FillTemplate(std::string_view tmpl, const TemplateValues& values) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{') {
      size_t close = tmpl.find('}', i);
      if (close != std::string_view::npos) {
        std::string name(tmpl.substr(i + 1, close - i - 1));
        auto it = values.find(name);
        if (it != values.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += tmpl[i++];
  }
  return out;
}

Result<CheckTexts> CheckTexts::Load(std::string_view yaml_text) {
  CheckTexts t;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    for (const auto& check : root["checks"]) {
      std::string name = check.first.as<std::string>();
      for (const auto& variant : check.second) {
        CheckText text;
        text.tool_error = variant.second["tool_error"].as<std::string>("");
        text.source = variant.second["source"].as<std::string>("");
        text.fix = variant.second["fix"].as<std::string>("");
        t.texts_[name][variant.first.as<std::string>()] = text;
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("rules/preflight_checks.yaml: {}", e.what()));
  }
  return t;
}

const CheckTexts& CheckTexts::Builtin() {
  static const CheckTexts* t = [] {
    Result<CheckTexts> r = Load(EmbeddedCheckTexts());
    return new CheckTexts(r.ok() ? *r : CheckTexts());
  }();
  return *t;
}

CheckText CheckTexts::Get(const std::string& check, const std::string& variant) const {
  auto c = texts_.find(check);
  if (c == texts_.end()) return {};
  auto v = c->second.find(variant);
  if (v != c->second.end()) return v->second;
  v = c->second.find("default");
  return v == c->second.end() ? CheckText{} : v->second;
}

CheckText CheckTexts::Render(const std::string& check, const std::string& variant, const TemplateValues& values) const {
  CheckText t = Get(check, variant);
  t.tool_error = FillTemplate(t.tool_error, values);
  t.fix = FillTemplate(t.fix, values);
  return t;
}

}  // namespace faultline::preflight
