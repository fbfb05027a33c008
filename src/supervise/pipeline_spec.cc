#include "supervise/pipeline_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "supervise/duration.h"
#include "util/read_file.h"

namespace faultline::supervise {
namespace {

// Everything one file's parse learns: its directory, and every mistake.
struct Parse {
  std::string source;
  std::string dir;  // absolute directory of the file
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  void Error(const std::string& where, const std::string& what) { errors.push_back(where + ": " + what); }
};

std::string At(const Parse& p, const YAML::Node& node) {
  if (node.Mark().is_null()) return p.source;
  return fmt::format("{}:{}", p.source, node.Mark().line + 1);
}

// Unknown keys are mistakes; x-* keys are the user's own (compose extensions).
void CheckKeys(Parse& p, const YAML::Node& node, const std::set<std::string>& allowed, const std::string& where) {
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (key.rfind("x-", 0) == 0 || allowed.count(key)) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    p.Error(where, fmt::format("unknown key '{}' (known: {})", key, list));
  }
}

bool Duration(Parse& p, const YAML::Node& node, const std::string& where, double* out) {
  auto d = ParseDuration(node.as<std::string>());
  if (!d.ok()) {
    p.Error(where, d.status().message());
    return false;
  }
  *out = *d;
  return true;
}

std::string Absolute(const Parse& p, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(p.dir) / path).lexically_normal().string();
}

// YAML merge keys (<<: *defaults, <<: [*a, *b]): the merged maps' keys that
// the map does not set itself. yaml-cpp reads "<<" as a plain key.
void ResolveMerges(YAML::Node node, int depth = 0) {
  if (depth > 64) return;
  if (node.IsSequence()) {
    for (auto item : node) ResolveMerges(item, depth + 1);
    return;
  }
  if (!node.IsMap()) return;
  if (YAML::Node merge = node["<<"]) {
    std::vector<YAML::Node> sources;
    if (merge.IsSequence()) {
      for (auto m : merge) sources.push_back(m);
    } else {
      sources.push_back(merge);
    }
    node.remove("<<");
    for (auto& m : sources) {
      ResolveMerges(m, depth + 1);
      if (!m.IsMap()) continue;
      for (auto kv : m) {
        std::string key = kv.first.as<std::string>();
        if (!node[key]) node[key] = kv.second;
      }
    }
  }
  for (auto kv : node) ResolveMerges(kv.second, depth + 1);
}

// Compose interpolation of one value: $$, $VAR, ${VAR}, ${VAR:-default}
// (unset or empty), ${VAR-default} (unset), ${VAR:?message} (an error when
// unset or empty), ${VAR?message} (when unset).
std::string Interpolate(Parse& p, const std::string& text, const std::string& where) {
  auto is_name = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    char next = text[i + 1];
    if (next == '$') {
      out += '$';
      ++i;
    } else if (is_name(next, true)) {
      size_t j = i + 1;
      while (j < text.size() && is_name(text[j], false)) ++j;
      const char* v = std::getenv(text.substr(i + 1, j - i - 1).c_str());
      out += v ? v : "";
      i = j - 1;
    } else if (next == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string::npos) {
        p.Error(where, fmt::format("'{}': unterminated ${{", text));
        return text;
      }
      std::string inner = text.substr(i + 2, close - i - 2);
      size_t op = inner.find_first_of(":-?");
      std::string name = inner.substr(0, op);
      std::string rest = op == std::string::npos ? "" : inner.substr(op);
      const char* v = std::getenv(name.c_str());
      bool set = v != nullptr, nonempty = v != nullptr && *v != 0;
      if (rest.empty()) {
        out += nonempty ? v : "";
      } else if (rest.rfind(":-", 0) == 0) {
        out += nonempty ? std::string(v) : rest.substr(2);
      } else if (rest.rfind("-", 0) == 0) {
        out += set ? std::string(v) : rest.substr(1);
      } else if (rest.rfind(":?", 0) == 0 || rest.rfind("?", 0) == 0) {
        bool colon = rest[0] == ':';
        if (colon ? !nonempty : !set) {
          std::string message = rest.substr(colon ? 2 : 1);
          p.Error(where, fmt::format("{} is required{}{}", name, colon ? "" : " (may be empty)",
                                     message.empty() ? "" : ": " + message));
        } else {
          out += v;
        }
      } else {
        p.Error(where, fmt::format("'${{{}}}': expected ${{VAR}}, "
                                   "${{VAR:-default}} or ${{VAR:?message}}",
                                   inner));
      }
      i = close;
    } else {
      out += '$';
    }
  }
  return out;
}

// Every scalar value of the tree, once (an alias shares its anchor's node).
void InterpolateTree(Parse& p, YAML::Node node, std::vector<YAML::Node>& seen) {
  for (const auto& s : seen) {
    if (s.is(node)) return;
  }
  seen.push_back(node);
  if (node.IsScalar()) {
    std::string text = node.Scalar();
    if (text.find('$') != std::string::npos) node = Interpolate(p, text, At(p, node));
  } else if (node.IsSequence()) {
    for (auto item : node) InterpolateTree(p, item, seen);
  } else if (node.IsMap()) {
    for (auto kv : node) InterpolateTree(p, kv.second, seen);
  }
}

// gpus: [0, 1] / "0,1" (indexes), all, or {count: N}. A lone number is
// ambiguous (GPU 2, or two GPUs?) and refused.
void ParseGpus(Parse& p, const YAML::Node& node, const std::string& where, ServiceSpec* s, int* count) {
  std::vector<std::string> items;
  if (node.IsMap()) {
    CheckKeys(p, node, {"count"}, where + ": gpus");
    long n = -1;
    if (node["count"]) {
      std::string c = node["count"].as<std::string>();
      char* end = nullptr;
      n = std::strtol(c.c_str(), &end, 10);
      if (c.empty() || *end != 0) n = -1;
    }
    if (n <= 0) {
      p.Error(where, "gpus: {count: N} needs a positive N");
    } else {
      *count = static_cast<int>(n);
    }
    return;
  }
  if (node.IsSequence()) {
    for (const auto& g : node) items.push_back(g.as<std::string>());
  } else {
    std::string text = node.as<std::string>();
    if (text == "all") {
      s->gpus_all = true;
      return;
    }
    if (text.find(',') == std::string::npos) {
      p.Error(where, fmt::format("gpus: {} is ambiguous: write gpus: [{}] for "
                                 "GPU {}, or gpus: {{count: {}}} for {} GPU(s)",
                                 text, text, text, text, text));
      return;
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) items.push_back(item);
  }
  for (auto item : items) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != 0 || v < 0) {
      p.Error(where, fmt::format("gpus: '{}' is not a GPU index", item));
      continue;
    }
    s->gpus.push_back(static_cast<int>(v));
  }
  s->gpus_set = true;
}

bool ParseCondition(Parse& p, const std::string& s, const std::string& where, Dependency::Condition* out) {
  if (s == "ready" || s == "service_healthy" || s == "process_healthy") {
    *out = Dependency::Condition::kReady;
  } else if (s == "completed" || s == "service_completed_successfully" || s == "process_completed_successfully") {
    *out = Dependency::Condition::kCompleted;
  } else if (s == "started" || s == "service_started" || s == "process_started") {
    *out = Dependency::Condition::kStarted;
  } else {
    p.Error(where, fmt::format("depends_on condition '{}' (use ready, completed or started)", s));
    return false;
  }
  return true;
}

// KEY=VALUE lines; # comments, blank lines and "export " are allowed, and
// quotes around a value are removed.
void LoadEnvFile(Parse& p, const std::string& path, const std::string& where, std::map<std::string, std::string>* env) {
  std::ifstream in(Absolute(p, path));
  if (!in) {
    p.Error(where, fmt::format("env_file {}: cannot open {}", path, Absolute(p, path)));
    return;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) {
      p.Error(where, fmt::format("env_file {}:{}: '{}' is not KEY=VALUE", path, number, line));
      continue;
    }
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0]) {
      value = value.substr(1, value.size() - 2);
    } else if (size_t hash = value.find(" #"); hash != std::string::npos) {
      value = value.substr(0, hash);
    }
    (*env)[key] = value;
  }
}

struct ParsedService {
  ServiceSpec spec;
  bool explicit_kind = false;
  int gpu_count = 0;             // gpus: {count: N}
  std::vector<bool> short_form;  // per depends_on entry: a bare name
};

ParsedService ParseService(Parse& p, const std::string& name, const YAML::Node& node) {
  std::string where = fmt::format("{}: {}", At(p, node), name);
  ParsedService parsed;
  ServiceSpec& s = parsed.spec;
  s.name = name;
  s.working_dir = p.dir;
  if (!node.IsMap()) {
    p.Error(where, "expected a map");
    return parsed;
  }
  CheckKeys(p, node,
            {"command", "environment", "env", "env_file", "working_dir", "gpus", "ready", "depends_on", "kind",
             "stall_after", "description"},
            where);
  YAML::Node cmd = node["command"];
  if (!cmd) {
    p.Error(where, "no command");
  } else if (cmd.IsSequence()) {
    for (const auto& a : cmd) s.argv.push_back(a.as<std::string>());
    if (s.argv.empty()) p.Error(where, "empty command");
  } else {
    s.argv = {"/bin/sh", "-c", cmd.as<std::string>()};
  }
  if (YAML::Node files = node["env_file"]) {
    if (files.IsSequence()) {
      for (const auto& f : files) LoadEnvFile(p, f.as<std::string>(), where, &s.env);
    } else {
      LoadEnvFile(p, files.as<std::string>(), where, &s.env);
    }
  }
  YAML::Node env = node["environment"] ? node["environment"] : node["env"];
  if (env) {
    if (env.IsMap()) {
      for (const auto& kv : env)
        s.env[kv.first.as<std::string>()] = kv.second.IsNull() ? "" : kv.second.as<std::string>();
    } else {
      for (const auto& item : env) {
        std::string kv = item.as<std::string>();
        size_t eq = kv.find('=');
        if (eq == std::string::npos) {
          p.Error(where, fmt::format("environment entry '{}' is not KEY=VALUE", kv));
          continue;
        }
        s.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    }
  }
  if (node["working_dir"]) s.working_dir = Absolute(p, node["working_dir"].as<std::string>());
  if (node["gpus"]) {
    ParseGpus(p, node["gpus"], where, &s, &parsed.gpu_count);
    if ((s.gpus_set || s.gpus_all || parsed.gpu_count > 0) && s.env.count("CUDA_VISIBLE_DEVICES")) {
      p.Error(where, "set either gpus or environment CUDA_VISIBLE_DEVICES, not both");
    }
  }
  if (YAML::Node r = node["ready"]) {
    std::string rw = where + ": ready";
    CheckKeys(p, r, {"http", "tcp", "log", "exec", "timeout", "interval", "retries", "start_period"}, rw);
    int kinds = 0;
    for (auto [key, kind] : {std::pair{"http", ReadySpec::Kind::kHttp}, std::pair{"tcp", ReadySpec::Kind::kTcp},
                             std::pair{"log", ReadySpec::Kind::kLog}, std::pair{"exec", ReadySpec::Kind::kExec}}) {
      if (!r[key]) continue;
      s.ready.kind = kind;
      if (r[key].IsSequence()) {  // exec: ["curl", "-f", URL]: each word quoted
                                  // for sh
        std::string joined;
        for (const auto& w : r[key]) {
          std::string word = w.as<std::string>(), quoted = "'";
          for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
          joined += (joined.empty() ? "" : " ") + quoted + "'";
        }
        s.ready.target = joined;
      } else {
        s.ready.target = r[key].as<std::string>();
      }
      ++kinds;
    }
    if (kinds != 1) p.Error(where, "ready: give exactly one of http, tcp, log, exec");
    s.ready.working_dir = s.working_dir;
    if (r["timeout"]) Duration(p, r["timeout"], rw + ".timeout", &s.ready.timeout);
    if (r["interval"]) Duration(p, r["interval"], rw + ".interval", &s.ready.interval);
    // As a compose healthcheck: failures during start_period do not count,
    // then retries failures in a row (interval apart) give up.
    double start_period = 0;
    if (r["start_period"]) Duration(p, r["start_period"], rw + ".start_period", &start_period);
    if (r["retries"]) {
      long retries = std::strtol(r["retries"].as<std::string>().c_str(), nullptr, 10);
      if (retries <= 0) {
        p.Error(where, "ready.retries: expected a positive count");
      } else if (!r["timeout"]) {
        s.ready.timeout = start_period + static_cast<double>(retries) * s.ready.interval;
      }
    } else if (r["start_period"] && !r["timeout"]) {
      p.Error(where, "ready.start_period needs retries (or a timeout)");
    }
    if (kinds == 1) {
      if (Status st = ValidateReadySpec(s.ready); !st.ok()) p.Error(where, st.message());
    }
  }
  std::string kind = "service";
  if (node["kind"]) {
    kind = node["kind"].as<std::string>();
    parsed.explicit_kind = true;
  } else if (s.ready.kind == ReadySpec::Kind::kNone) {
    kind = "job";
  }
  if (kind != "job" && kind != "service") p.Error(where, fmt::format("kind '{}' (use service or job)", kind));
  s.is_job = kind == "job";
  if (YAML::Node d = node["depends_on"]) {
    if (d.IsSequence()) {
      for (const auto& item : d) {
        s.depends_on.push_back({item.as<std::string>(), Dependency::Condition::kReady});
        parsed.short_form.push_back(true);
      }
    } else if (d.IsMap()) {
      for (const auto& kv : d) {
        Dependency dep{kv.first.as<std::string>(), Dependency::Condition::kReady};
        bool bare = true;
        if (kv.second.IsMap() && kv.second["condition"]) {
          ParseCondition(p, kv.second["condition"].as<std::string>(), where, &dep.condition);
          bare = false;
        }
        s.depends_on.push_back(dep);
        parsed.short_form.push_back(bare);
      }
    } else {
      s.depends_on.push_back({d.as<std::string>(), Dependency::Condition::kReady});
      parsed.short_form.push_back(true);
    }
  }
  if (node["stall_after"]) Duration(p, node["stall_after"], where + ": stall_after", &s.stall_after);
  return parsed;
}

void Validate(Parse& p, PipelineSpec& spec, std::vector<ParsedService>& parsed) {
  std::map<std::string, const ParsedService*> by_name;
  for (const auto& s : parsed) by_name[s.spec.name] = &s;
  // Dependencies exist and can be met. A bare dependency (depends_on: [x])
  // waits for x's probe when it has one; on a job declared as such, for its
  // completion; otherwise for x to start, as in compose.
  for (auto& ps : parsed) {
    ServiceSpec& s = ps.spec;
    for (size_t i = 0; i < s.depends_on.size(); ++i) {
      Dependency& d = s.depends_on[i];
      auto it = by_name.find(d.name);
      if (it == by_name.end()) {
        p.Error(p.source, fmt::format("{} depends on unknown '{}'", s.name, d.name));
        continue;
      }
      if (d.name == s.name) {
        p.Error(p.source, fmt::format("{} depends on itself", s.name));
        continue;
      }
      const ParsedService& dep = *it->second;
      bool has_probe = dep.spec.ready.kind != ReadySpec::Kind::kNone;
      if (ps.short_form[i] && !has_probe) {
        if (dep.spec.is_job && dep.explicit_kind) {
          d.condition = Dependency::Condition::kCompleted;
        } else {
          d.condition = Dependency::Condition::kStarted;
          p.notes.push_back(
              fmt::format("{} starts once {} has started: {} has no ready: "
                          "probe (as with compose's "
                          "depends_on); add one to {} to wait until it answers",
                          s.name, d.name, d.name, d.name));
        }
      } else if (d.condition == Dependency::Condition::kReady && !has_probe) {
        p.Error(p.source,
                fmt::format("{} waits for {} to be ready, but {} has no ready: probe", s.name, d.name, d.name));
      } else if (d.condition == Dependency::Condition::kCompleted && !dep.spec.is_job) {
        p.Error(p.source, fmt::format("{} waits for {} to complete, but {} is "
                                      "a service (kind: job to run it to "
                                      "completion)",
                                      s.name, d.name, d.name));
      }
    }
  }
  // No cycles.
  std::map<std::string, int> mark;  // 1 visiting, 2 done
  std::function<bool(const std::string&, std::string)> visit = [&](const std::string& n, std::string path) -> bool {
    if (mark[n] == 2 || !by_name.count(n)) return true;
    if (mark[n] == 1) {
      p.Error(p.source, fmt::format("dependency cycle: {} -> {}", path, n));
      return false;
    }
    mark[n] = 1;
    for (const auto& d : by_name[n]->spec.depends_on) {
      if (!visit(d.name, path.empty() ? n : path + " -> " + n)) return false;
    }
    mark[n] = 2;
    return true;
  };
  for (const auto& s : parsed) {
    if (mark[s.spec.name] == 0 && !visit(s.spec.name, "")) break;
  }
  // GPU sets are disjoint; gpus: all shares with nobody; {count: N} takes
  // the lowest indexes nobody named.
  std::map<int, std::string> owner;
  std::string all_owner;
  for (const auto& ps : parsed) {
    const ServiceSpec& s = ps.spec;
    for (int g : s.gpus) {
      auto [it, inserted] = owner.emplace(g, s.name);
      if (!inserted && it->second != s.name) {
        p.Error(p.source,
                fmt::format("GPU {} is given to both {} and {}: GPU sets must not overlap", g, it->second, s.name));
      }
    }
    if (s.gpus_all) all_owner = s.name;
  }
  for (auto& ps : parsed) {
    for (int next = 0; ps.gpu_count > 0 && static_cast<int>(ps.spec.gpus.size()) < ps.gpu_count; ++next) {
      if (owner.emplace(next, ps.spec.name).second) ps.spec.gpus.push_back(next);
    }
    if (ps.gpu_count > 0) ps.spec.gpus_set = true;
  }
  if (!all_owner.empty()) {
    for (const auto& ps : parsed) {
      if (ps.spec.name != all_owner && (ps.spec.gpus_set || ps.spec.gpus_all)) {
        p.Error(p.source, fmt::format("{} has gpus: all, so {} cannot have "
                                      "GPUs too: GPU sets must not overlap",
                                      all_owner, ps.spec.name));
      }
    }
  }
  for (auto& ps : parsed) spec.services.push_back(std::move(ps.spec));
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
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
  PipelineSpec spec;
  spec.source = source;
  Parse p;
  p.source = source;
  std::error_code ec;
  p.dir = std::filesystem::absolute(std::filesystem::path(source).parent_path(), ec).lexically_normal().string();
  if (ec || p.dir.empty()) p.dir = ".";
  while (p.dir.size() > 1 && p.dir.back() == '/') p.dir.pop_back();
  std::vector<ParsedService> parsed;
  try {
    YAML::Node root = YAML::Load(yaml_text);
    if (!root.IsMap()) return Status::InvalidArgument(source + ": expected a map with services:");
    ResolveMerges(root);
    std::vector<YAML::Node> seen;
    InterpolateTree(p, root, seen);
    CheckKeys(p, root, {"version", "name", "services", "processes", "stall_after", "grace_period", "description"},
              source);
    std::string base = source.substr(source.rfind('/') == std::string::npos ? 0 : source.rfind('/') + 1);
    base = base.substr(0, base.find('.'));
    spec.name = root["name"].as<std::string>(base.empty() ? "pipeline" : base);
    if (root["stall_after"]) Duration(p, root["stall_after"], source + ": stall_after", &spec.stall_after);
    if (root["grace_period"]) Duration(p, root["grace_period"], source + ": grace_period", &spec.grace_period);
    YAML::Node services = root["services"] ? root["services"] : root["processes"];
    if (!services || !services.IsMap() || services.size() == 0) {
      p.Error(source, "no services:");
    } else {
      for (const auto& kv : services) {
        std::string name = kv.first.as<std::string>();
        if (name.rfind("x-", 0) == 0) continue;
        parsed.push_back(ParseService(p, name, kv.second));
      }
    }
  } catch (const YAML::Exception& e) {
    p.errors.push_back(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
    return Status::InvalidArgument(Join(p.errors));
  }
  Validate(p, spec, parsed);
  if (!p.errors.empty()) return Status::InvalidArgument(Join(p.errors));
  spec.notes = std::move(p.notes);
  return spec;
}

Status CheckGpusOnNode(const PipelineSpec& spec, int gpu_count) {
  std::vector<std::string> errors;
  for (const auto& s : spec.services) {
    for (int g : s.gpus) {
      if (g >= gpu_count) {
        errors.push_back(fmt::format("{}: {}: GPU {} does not exist: this node has {} GPU(s){}", spec.source, s.name, g,
                                     gpu_count, gpu_count > 0 ? fmt::format(" (0-{})", gpu_count - 1) : ""));
      }
    }
  }
  if (errors.empty()) return Status::Ok();
  return Status::InvalidArgument(Join(errors));
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
