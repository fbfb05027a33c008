#include "supervise/pipeline_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "supervise/duration.h"
#include "util/read_file.h"

namespace faultline::supervise {
namespace {

Status Error(const std::string& where, const std::string& what) { return Status::InvalidArgument(where + ": " + what); }

Status CheckKeys(const YAML::Node& node, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Error(where, fmt::format("unknown key '{}' (known: {})", key, list));
    }
  }
  return Status::Ok();
}

Result<double> Duration(const YAML::Node& node, const std::string& where) {
  auto d = ParseDuration(node.as<std::string>());
  if (!d.ok()) return Error(where, d.status().message());
  return *d;
}

Result<std::vector<int>> ParseGpus(const YAML::Node& node, const std::string& where) {
  std::vector<int> out;
  std::vector<std::string> items;
  if (node.IsSequence()) {
    for (const auto& g : node) items.push_back(g.as<std::string>());
  } else {
    std::stringstream ss(node.as<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) items.push_back(item);
  }
  for (auto item : items) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != 0 || v < 0) return Error(where, fmt::format("gpus: '{}' is not a GPU index", item));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

Result<Dependency::Condition> ParseCondition(const std::string& s, const std::string& where) {
  if (s == "ready" || s == "service_healthy" || s == "process_healthy") return Dependency::Condition::kReady;
  if (s == "completed" || s == "service_completed_successfully" || s == "process_completed_successfully") {
    return Dependency::Condition::kCompleted;
  }
  if (s == "started" || s == "service_started" || s == "process_started") return Dependency::Condition::kStarted;
  return Error(where, fmt::format("depends_on condition '{}' (use ready, completed or started)", s));
}

Result<ServiceSpec> ParseService(const std::string& name, const YAML::Node& node, const std::string& source) {
  std::string where = fmt::format("{}: {}", source, name);
  ServiceSpec s;
  s.name = name;
  if (!node.IsMap()) return Error(where, "expected a map");
  if (Status st = CheckKeys(node,
                            {"command", "environment", "env", "working_dir", "gpus", "ready", "depends_on", "kind",
                             "stall_after", "description"},
                            where);
      !st.ok()) {
    return st;
  }
  YAML::Node cmd = node["command"];
  if (!cmd) return Error(where, "no command");
  if (cmd.IsSequence()) {
    for (const auto& a : cmd) s.argv.push_back(a.as<std::string>());
  } else {
    s.argv = {"/bin/sh", "-c", cmd.as<std::string>()};
  }
  if (s.argv.empty()) return Error(where, "empty command");
  YAML::Node env = node["environment"] ? node["environment"] : node["env"];
  if (env) {
    if (env.IsMap()) {
      for (const auto& kv : env)
        s.env[kv.first.as<std::string>()] = kv.second.IsNull() ? "" : kv.second.as<std::string>();
    } else {
      for (const auto& item : env) {
        std::string kv = item.as<std::string>();
        size_t eq = kv.find('=');
        if (eq == std::string::npos) return Error(where, fmt::format("environment entry '{}' is not KEY=VALUE", kv));
        s.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }
  }
  s.working_dir = node["working_dir"].as<std::string>("");
  if (node["gpus"]) {
    auto gpus = ParseGpus(node["gpus"], where);
    if (!gpus.ok()) return gpus.status();
    s.gpus = *gpus;
    s.gpus_set = true;
    if (s.env.count("CUDA_VISIBLE_DEVICES")) {
      return Error(where, "set either gpus or environment CUDA_VISIBLE_DEVICES, not both");
    }
  }
  if (YAML::Node r = node["ready"]) {
    if (Status st = CheckKeys(r, {"http", "tcp", "log", "timeout", "interval"}, where + ": ready"); !st.ok()) return st;
    int kinds = 0;
    if (r["http"]) {
      s.ready.kind = ReadySpec::Kind::kHttp;
      s.ready.target = r["http"].as<std::string>();
      ++kinds;
    }
    if (r["tcp"]) {
      s.ready.kind = ReadySpec::Kind::kTcp;
      s.ready.target = r["tcp"].as<std::string>();
      ++kinds;
    }
    if (r["log"]) {
      s.ready.kind = ReadySpec::Kind::kLog;
      s.ready.target = r["log"].as<std::string>();
      ++kinds;
    }
    if (kinds != 1) return Error(where, "ready: give exactly one of http, tcp, log");
    if (r["timeout"]) {
      auto d = Duration(r["timeout"], where + ": ready.timeout");
      if (!d.ok()) return d.status();
      s.ready.timeout = *d;
    }
    if (r["interval"]) {
      auto d = Duration(r["interval"], where + ": ready.interval");
      if (!d.ok()) return d.status();
      s.ready.interval = *d;
    }
    if (Status st = ValidateReadySpec(s.ready); !st.ok()) return Error(where, st.message());
  }
  std::string kind = node["kind"].as<std::string>(s.ready.kind == ReadySpec::Kind::kNone ? "job" : "service");
  if (kind != "job" && kind != "service") return Error(where, fmt::format("kind '{}' (use service or job)", kind));
  s.is_job = kind == "job";
  if (YAML::Node d = node["depends_on"]) {
    if (d.IsSequence()) {
      for (const auto& item : d) s.depends_on.push_back({item.as<std::string>(), Dependency::Condition::kReady});
    } else if (d.IsMap()) {
      for (const auto& kv : d) {
        Dependency dep{kv.first.as<std::string>(), Dependency::Condition::kReady};
        if (kv.second.IsMap() && kv.second["condition"]) {
          auto c = ParseCondition(kv.second["condition"].as<std::string>(), where);
          if (!c.ok()) return c.status();
          dep.condition = *c;
        }
        s.depends_on.push_back(dep);
      }
    } else {
      s.depends_on.push_back({d.as<std::string>(), Dependency::Condition::kReady});
    }
  }
  if (node["stall_after"]) {
    auto d = Duration(node["stall_after"], where + ": stall_after");
    if (!d.ok()) return d.status();
    s.stall_after = *d;
  }
  return s;
}

Status Validate(PipelineSpec& p) {
  std::map<std::string, const ServiceSpec*> by_name;
  for (const auto& s : p.services) by_name[s.name] = &s;
  // Dependencies exist, and "ready" has a probe to wait for. A short-form
  // dependency on a job means "completed".
  for (auto& s : p.services) {
    for (auto& d : s.depends_on) {
      auto it = by_name.find(d.name);
      if (it == by_name.end()) return Error(p.source, fmt::format("{} depends on unknown '{}'", s.name, d.name));
      if (d.name == s.name) return Error(p.source, fmt::format("{} depends on itself", s.name));
      const ServiceSpec& dep = *it->second;
      if (d.condition == Dependency::Condition::kReady && dep.ready.kind == ReadySpec::Kind::kNone) {
        if (dep.is_job) {
          d.condition = Dependency::Condition::kCompleted;
        } else {
          return Error(p.source,
                       fmt::format("{} waits for {} to be ready, but {} has no ready: probe", s.name, d.name, d.name));
        }
      }
      if (d.condition == Dependency::Condition::kCompleted && !dep.is_job) {
        return Error(p.source, fmt::format("{} waits for {} to complete, but {} is a service (kind: job to run it to "
                                           "completion)",
                                           s.name, d.name, d.name));
      }
    }
  }
  // No cycles.
  std::map<std::string, int> mark;  // 1 visiting, 2 done
  std::function<Status(const std::string&, std::string)> visit = [&](const std::string& n, std::string path) -> Status {
    if (mark[n] == 2) return Status::Ok();
    if (mark[n] == 1) return Error(p.source, fmt::format("dependency cycle: {} -> {}", path, n));
    mark[n] = 1;
    for (const auto& d : by_name[n]->depends_on) {
      if (Status s = visit(d.name, path.empty() ? n : path + " -> " + n); !s.ok()) return s;
    }
    mark[n] = 2;
    return Status::Ok();
  };
  for (const auto& s : p.services) {
    if (Status st = visit(s.name, ""); !st.ok()) return st;
  }
  // GPU sets are disjoint.
  std::map<int, std::string> owner;
  for (const auto& s : p.services) {
    for (int g : s.gpus) {
      auto [it, inserted] = owner.emplace(g, s.name);
      if (!inserted && it->second != s.name) {
        return Error(p.source, fmt::format("GPU {} is given to both {} and {}: GPU sets must not overlap", g,
                                           it->second, s.name));
      }
    }
  }
  return Status::Ok();
}

// docker-compose interpolation: ${VAR}, ${VAR:-default}, $$ for a literal $.
std::string Interpolate(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close != std::string::npos) {
        std::string inner = text.substr(i + 2, close - i - 2);
        std::string name = inner, fallback;
        size_t dash = inner.find(":-");
        if (dash != std::string::npos) {
          name = inner.substr(0, dash);
          fallback = inner.substr(dash + 2);
        }
        const char* v = std::getenv(name.c_str());
        out += (v != nullptr && *v != 0) ? std::string(v) : fallback;
        i = close;
        continue;
      }
    }
    out += '$';
  }
  return out;
}

}  // namespace

const char* ConditionName(Dependency::Condition c) {
  switch (c) {
    case Dependency::Condition::kStarted:
      return "started";
    case Dependency::Condition::kReady:
      return "ready";
    case Dependency::Condition::kCompleted:
      return "completed";
  }
  return "?";
}

Result<PipelineSpec> ParsePipeline(const std::string& yaml_text, const std::string& source) {
  PipelineSpec p;
  p.source = source;
  try {
    YAML::Node root = YAML::Load(Interpolate(yaml_text));
    if (!root.IsMap()) return Error(source, "expected a map with services:");
    if (Status st = CheckKeys(
            root, {"version", "name", "services", "processes", "stall_after", "grace_period", "description"}, source);
        !st.ok()) {
      return st;
    }
    std::string base = source.substr(source.rfind('/') == std::string::npos ? 0 : source.rfind('/') + 1);
    base = base.substr(0, base.find('.'));
    p.name = root["name"].as<std::string>(base.empty() ? "pipeline" : base);
    if (root["stall_after"]) {
      auto d = Duration(root["stall_after"], source + ": stall_after");
      if (!d.ok()) return d.status();
      p.stall_after = *d;
    }
    if (root["grace_period"]) {
      auto d = Duration(root["grace_period"], source + ": grace_period");
      if (!d.ok()) return d.status();
      p.grace_period = *d;
    }
    YAML::Node services = root["services"] ? root["services"] : root["processes"];
    if (!services || !services.IsMap() || services.size() == 0) return Error(source, "no services:");
    for (const auto& kv : services) {
      auto s = ParseService(kv.first.as<std::string>(), kv.second, source);
      if (!s.ok()) return s.status();
      p.services.push_back(std::move(*s));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  if (Status st = Validate(p); !st.ok()) return st;
  return p;
}

Result<PipelineSpec> LoadPipelineFile(const std::string& path) {
  auto text = ReadSmallFile(path);  // bounded; a FIFO or /dev/zero is refused
  if (!text.ok()) return text.status();
  return ParsePipeline(*text, path);
}

PipelineSpec SingleCommandPipeline(const std::vector<std::string>& argv, double stall_after, double grace) {
  PipelineSpec p;
  std::string prog = argv.empty() ? "command" : argv[0];
  prog = prog.substr(prog.rfind('/') == std::string::npos ? 0 : prog.rfind('/') + 1);
  // "python3 train.py" is better named after the script.
  if ((prog.rfind("python", 0) == 0 || prog == "sh" || prog == "bash") && argv.size() > 1 && argv[1][0] != '-') {
    std::string script = argv[1].substr(argv[1].rfind('/') == std::string::npos ? 0 : argv[1].rfind('/') + 1);
    prog = script.substr(0, script.find('.'));
  }
  p.name = prog.empty() ? "command" : prog;
  p.source = "command line";
  p.stall_after = stall_after;
  p.grace_period = grace;
  ServiceSpec s;
  s.name = p.name;
  s.is_job = true;
  s.argv = argv;
  p.services.push_back(std::move(s));
  return p;
}

}  // namespace faultline::supervise
