#include "supervise/stall_rules.h"
#include "util/read_file.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace faultline::supervise {

extern const char kEmbeddedStallYaml[];

namespace {

// "8 MiB" / "1" / 1024 -> bytes.
Result<int64_t> ParseBytes(const YAML::Node& node, const std::string& where) {
  std::string s = node.as<std::string>();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return Status::InvalidArgument(fmt::format("{}: '{}' is not a size", where, s));
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  double scale = 1;
  if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    return Status::InvalidArgument(fmt::format("{}: unknown unit '{}'", where, unit));
  return static_cast<int64_t>(v * scale);
}

Result<Condition> ParseCondition(const YAML::Node& node, const std::string& where) {
  if (!node || node.IsNull()) return Condition{};
  if (node.IsScalar()) return ParseLeaf(node.as<std::string>());
  Condition group;
  YAML::Node list;
  if (node.IsSequence()) {
    list = node;
  } else if (node.IsMap() && node["all"]) {
    list = node["all"];
  } else if (node.IsMap() && node["any"]) {
    group.kind = Condition::Kind::kAny;
    list = node["any"];
  } else {
    return Status::InvalidArgument(fmt::format("{}: a condition is a string, a list, all: or any:", where));
  }
  if (!list.IsSequence()) return Status::InvalidArgument(fmt::format("{}: all:/any: takes a list", where));
  for (const auto& child : list) {
    auto c = ParseCondition(child, where);
    if (!c.ok()) return Status::InvalidArgument(fmt::format("{}: {}", where, c.status().message()));
    group.children.push_back(std::move(*c));
  }
  return group;
}

Status CheckTemplate(const std::string& text, const std::string& where) {
  size_t i = 0;
  while ((i = text.find('{', i)) != std::string::npos) {
    size_t close = text.find('}', i);
    if (close == std::string::npos)
      return Status::InvalidArgument(fmt::format("{}: unclosed '{{' in '{}'", where, text));
    std::string name = text.substr(i + 1, close - i - 1);
    if (!KnownFeatures().count(name)) {
      return Status::InvalidArgument(fmt::format("{}: unknown feature {{{}}} in '{}'", where, name, text));
    }
    i = close + 1;
  }
  return Status::Ok();
}

Result<std::vector<Templated>> ParseTemplated(const YAML::Node& node, const std::string& where) {
  std::vector<Templated> out;
  if (!node) return out;
  for (const auto& item : node) {
    Templated t;
    t.text = item.IsScalar() ? item.as<std::string>() : item["text"].as<std::string>("");
    if (Status s = CheckTemplate(t.text, where); !s.ok()) return s;
    if (item.IsMap() && item["when"]) {
      auto c = ParseCondition(item["when"], where);
      if (!c.ok()) return c.status();
      t.when = std::move(*c);
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<StallRules> ParseRoot(const YAML::Node& root, const std::string& source) {
  StallRules r;
  r.source = source;
  if (!root.IsMap() || !root["classes"]) return Status::InvalidArgument(source + ": no classes: list");
  if (auto p = root["progress"]) {
    struct Field {
      const char* name;
      int64_t* out;
    } fields[] = {{"log_bytes", &r.progress.log_bytes},
                  {"read_bytes", &r.progress.read_bytes},
                  {"write_bytes", &r.progress.write_bytes},
                  {"rss_bytes", &r.progress.rss_bytes},
                  {"gpu_memory_bytes", &r.progress.gpu_memory_bytes},
                  {"cache_bytes", &r.progress.cache_bytes}};
    for (const auto& f : fields) {
      if (!p[f.name]) continue;
      auto v = ParseBytes(p[f.name], source + ": progress." + f.name);
      if (!v.ok()) return v.status();
      *f.out = *v;
    }
    if (p["gpu_util_change"]) {
      double v = p["gpu_util_change"].as<double>(-1);
      if (!(v > 0 && v <= 100)) return Status::InvalidArgument(source + ": progress.gpu_util_change: 1 to 100");
      r.progress.gpu_util_change = static_cast<int64_t>(v);
    }
    if (p["tree_change"]) r.progress.tree_change = p["tree_change"].as<bool>();
  }
  r.window_seconds = root["window_seconds"].as<double>(r.window_seconds);
  r.busy_cpu_percent = root["busy_cpu_percent"].as<double>(r.busy_cpu_percent);
  r.busy_runnable_fraction = root["busy_runnable_fraction"].as<double>(r.busy_runnable_fraction);
  r.busy_runnable_cpu_percent = root["busy_runnable_cpu_percent"].as<double>(r.busy_runnable_cpu_percent);
  for (const auto& d : root["cache_dirs"])
    r.cache_dirs.push_back({d["name"].as<std::string>(), d["path"].as<std::string>()});
  for (const auto& w : root["compile_workers"]) {
    std::string pattern = w.as<std::string>();
    RE2 re(pattern, RE2::Quiet);
    if (!re.ok()) return Status::InvalidArgument(fmt::format("{}: compile_workers: bad regex '{}'", source, pattern));
    r.compile_workers.push_back(pattern);
  }
  for (const auto& g : root["wait_channels"]) {
    for (const auto& name : g.second) r.wait_channels[g.first.as<std::string>()].push_back(name.as<std::string>());
  }
  for (const auto& m : root["phase_markers"]) {
    PhaseMarker pm{m["phase"].as<std::string>(), m["pattern"].as<std::string>()};
    RE2 re(pm.pattern, RE2::Quiet);
    if (!re.ok())
      return Status::InvalidArgument(fmt::format("{}: phase {}: bad regex: {}", source, pm.phase, re.error()));
    r.phase_markers.push_back(std::move(pm));
  }
  for (const auto& c : root["classes"]) {
    StallClass sc;
    sc.id = c["id"].as<std::string>("");
    std::string where = fmt::format("{}: class {}", source, sc.id);
    if (sc.id.empty()) return Status::InvalidArgument(source + ": a class without id");
    sc.title = c["title"].as<std::string>(sc.id);
    auto when = ParseCondition(c["when"], where);
    if (!when.ok()) return Status::InvalidArgument(fmt::format("{}: {}", where, when.status().message()));
    sc.when = std::move(*when);
    sc.explanation = c["explanation"].as<std::string>("");
    if (Status s = CheckTemplate(sc.explanation, where); !s.ok()) return s;
    auto evidence = ParseTemplated(c["evidence"], where);
    if (!evidence.ok()) return evidence.status();
    sc.evidence = std::move(*evidence);
    auto suggestions = ParseTemplated(c["suggestions"], where);
    if (!suggestions.ok()) return suggestions.status();
    sc.suggestions = std::move(*suggestions);
    r.classes.push_back(std::move(sc));
  }
  if (r.classes.empty()) return Status::InvalidArgument(source + ": classes: is empty");
  for (const auto& m : root["stack_phases"]) {
    StackPhase sp{m["phase"].as<std::string>(""), m["class"].as<std::string>(""), m["pattern"].as<std::string>("")};
    std::string where = fmt::format("{}: stack_phases {}", source, sp.phase);
    RE2 re(sp.pattern, RE2::Quiet);
    if (sp.phase.empty() || sp.pattern.empty()) return Status::InvalidArgument(where + ": needs phase and pattern");
    if (!re.ok()) return Status::InvalidArgument(fmt::format("{}: bad regex: {}", where, re.error()));
    bool known = false;
    for (const auto& c : r.classes) known |= c.id == sp.class_id;
    if (!known)
      return Status::InvalidArgument(fmt::format("{}: class '{}' is not a class of the file", where, sp.class_id));
    r.stack_phases.push_back(std::move(sp));
  }
  for (const auto& m : root["kernel_messages"]) {
    KernelMessage km{m["kind"].as<std::string>(""), m["pattern"].as<std::string>(""), m["explain"].as<std::string>("")};
    std::string probe = km.pattern;
    for (size_t at; (at = probe.find("{pid}")) != std::string::npos;) probe.replace(at, 5, "1");
    RE2 re(probe, RE2::Quiet);
    if (km.kind.empty() || !re.ok())
      return Status::InvalidArgument(
          fmt::format("{}: kernel_messages {}: needs kind and a valid pattern", source, km.kind));
    r.kernel_messages.push_back(std::move(km));
  }
  return r;
}

}  // namespace

Result<StallRules> ParseStallRules(const std::string& yaml_text, const std::string& source) {
  try {
    return ParseRoot(YAML::Load(yaml_text), source);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
}

Result<StallRules> LoadStallRulesFile(const std::string& path) {
  auto text = ReadSmallFile(path);  // bounded; a FIFO or /dev/zero is refused
  if (!text.ok()) return text.status();
  return ParseStallRules(*text, path);
}

Result<StallRules> BuiltinStallRules() { return ParseStallRules(kEmbeddedStallYaml, "rules/stall.yaml (built in)"); }

}  // namespace faultline::supervise
