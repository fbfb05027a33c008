#include "rules/wrapper_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "rules/embedded_rules.h"
#include "util/read_file.h"

namespace faultline::rules {

namespace {

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

std::vector<std::string> Strings(const YAML::Node& node) {
  std::vector<std::string> out;
  if (node && node.IsSequence()) {
    for (const auto& item : node) out.push_back(item.as<std::string>());
  }
  return out;
}

Result<parse::WrapperSpec> ParseWrapper(const YAML::Node& node, const std::string& name) {
  std::string where = fmt::format("{}:{}", name, node.Mark().line + 1);
  if (!node.IsMap()) return Status::InvalidArgument(where + ": a wrapper must be a mapping");
  static const std::set<std::string> kKnownKeys = {"id",       "description", "pattern", "json_field", "json_captures",
                                                   "json_line", "identity",    "rank",    "samples",    "min_share"};
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!kKnownKeys.count(key)) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: unknown wrapper field '{}'", name, kv.first.Mark().line + 1, key));
    }
  }
  parse::WrapperSpec spec;
  spec.source = where;
  spec.id = Scalar(node, "id");
  if (spec.id.empty()) return Status::InvalidArgument(where + ": wrapper has no 'id'");
  spec.description = Scalar(node, "description");
  spec.pattern = Scalar(node, "pattern");
  spec.json_field = Scalar(node, "json_field");
  if (const YAML::Node caps = node["json_captures"]) {
    if (!caps.IsMap()) return Status::InvalidArgument(where + ": json_captures maps capture names to fields");
    for (const auto& kv : caps)
      spec.json_captures.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
  }
  spec.json_line = Scalar(node, "json_line");
  if (!spec.json_line.empty() && spec.json_field.empty()) {
    return Status::InvalidArgument(where + ": json_line needs json_field (it rebuilds a JSON record's line)");
  }
  spec.identity = Scalar(node, "identity");
  spec.rank_capture = Scalar(node, "rank");
  if (const YAML::Node share = node["min_share"]) {
    try {
      spec.min_share = share.as<double>();
    } catch (const YAML::Exception&) {
      spec.min_share = -1;
    }
    if (!(spec.min_share > 0 && spec.min_share <= 1)) {
      return Status::InvalidArgument(where + ": min_share is a share of lines, above 0 and at most 1");
    }
  }
  const YAML::Node samples = node["samples"];
  if (!samples || !samples["match"]) {
    return Status::InvalidArgument(
        fmt::format("{}: wrapper {} needs samples.match: wrapped lines it must peel", where, spec.id));
  }
  spec.match_samples = Strings(samples["match"]);
  spec.no_match_samples = Strings(samples["no_match"]);
  return spec;
}

std::string ReadFile(const std::string& path, bool* ok) {
  auto text = ReadSmallFile(path);  // bounded; a FIFO or /dev/zero is refused
  *ok = text.ok();
  return text.ok() ? *text : std::string();
}

}  // namespace

Result<std::vector<parse::WrapperSpec>> ParseWrapperFile(std::string_view yaml_text, const std::string& name) {
  std::vector<parse::WrapperSpec> out;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root.IsMap() || !root["wrappers"]) return out;
    if (!root["wrappers"].IsSequence()) return Status::InvalidArgument(name + ": 'wrappers:' must be a list");
    for (const auto& node : root["wrappers"]) {
      auto spec = ParseWrapper(node, name);
      if (!spec.ok()) return spec.status();
      out.push_back(std::move(*spec));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: YAML error: {}", name, e.mark.line + 1, e.msg));
  }
  return out;
}

Result<std::unique_ptr<parse::WrapperSet>> LoadWrappers(const std::vector<std::string>& extra_files) {
  std::vector<parse::WrapperSpec> all;
  for (const auto& [name, text] : EmbeddedRuleFiles()) {
    if (text.find("wrappers:") == std::string_view::npos) continue;  // most files: skip the YAML parse
    auto specs = ParseWrapperFile(text, "rules/" + std::string(name));
    if (!specs.ok()) return specs.status();
    for (auto& s : *specs) all.push_back(std::move(s));
  }
  for (const auto& path : extra_files) {
    bool ok = false;
    std::string text = ReadFile(path, &ok);
    if (!ok) return Status::NotFound(fmt::format("{}: cannot read rule file", path));
    auto specs = ParseWrapperFile(text, path);
    if (!specs.ok()) return specs.status();
    for (auto& s : *specs) all.push_back(std::move(s));
  }
  std::set<std::string> ids;
  for (const auto& s : all) {
    if (!ids.insert(s.id).second) {
      return Status::InvalidArgument(fmt::format("{}: duplicate wrapper id {}", s.source, s.id));
    }
  }
  auto set = parse::WrapperSet::Build(std::move(all));
  if (!set.ok()) return set.status();
  std::vector<std::string> problems = parse::CheckWrapperSamples(**set);
  if (!problems.empty()) return Status::InvalidArgument(problems.front());
  return set;
}

}  // namespace faultline::rules
