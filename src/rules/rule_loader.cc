#include "rules/rule_loader.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>

#include "rules/embedded_rules.h"
#include "util/read_file.h"

namespace faultline::rules {

const char* RuleKindName(RuleKind kind) {
  switch (kind) {
    case RuleKind::kSignature:
      return "signature";
    case RuleKind::kCascade:
      return "cascade";
    case RuleKind::kPhase:
      return "phase";
    case RuleKind::kFact:
      return "fact";
    case RuleKind::kBenign:
      return "benign";
    case RuleKind::kRedact:
      return "redact";
    case RuleKind::kStop:
      return "stop";
  }
  return "?";
}

const std::vector<std::string>& PhaseOrder() {
  static const std::vector<std::string> order = {"process-start", "distributed-init",   "weight-loading",
                                                 "torch-compile", "kv-cache-profiling", "cuda-graph-capture",
                                                 "ready",         "training",           "shutdown"};
  return order;
}

int PhaseIndex(std::string_view phase) {
  const auto& order = PhaseOrder();
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == phase) return static_cast<int>(i);
  }
  return -1;
}

namespace {

std::string Where(const std::string& name, const YAML::Node& node) {
  return fmt::format("{}:{}", name, node.Mark().line + 1);
}

Result<std::vector<std::string>> StringList(const YAML::Node& node, const std::string& where, const char* field) {
  std::vector<std::string> out;
  if (!node) return out;
  if (node.IsScalar()) {
    out.push_back(node.as<std::string>());
    return out;
  }
  if (!node.IsSequence()) {
    return Status::InvalidArgument(fmt::format("{}: '{}' must be a list of strings", where, field));
  }
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

Result<RuleKind> KindFromName(const std::string& s, const std::string& where) {
  static const std::pair<const char*, RuleKind> kKinds[] = {{"signature", RuleKind::kSignature},
                                                            {"cascade", RuleKind::kCascade},
                                                            {"phase", RuleKind::kPhase},
                                                            {"fact", RuleKind::kFact},
                                                            {"benign", RuleKind::kBenign},
                                                            {"redact", RuleKind::kRedact},
                                                            {"stop", RuleKind::kStop}};
  for (const auto& [name, kind] : kKinds) {
    if (s == name) return kind;
  }
  return Status::InvalidArgument(
      fmt::format("{}: unknown kind '{}' (use signature, cascade, phase, fact, benign, redact or stop)", where, s));
}

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

Result<Rule> ParseRule(const YAML::Node& node, const std::string& name, const std::string& default_framework) {
  std::string where = Where(name, node);
  if (!node.IsMap()) return Status::InvalidArgument(where + ": a rule must be a mapping");
  static const std::set<std::string> kKnownKeys = {
      "id",     "kind",     "pattern", "framework", "versions", "category",    "title",   "explanation", "fix",
      "reason", "summary",  "phase",   "completes", "progress", "replacement", "samples", "generic",     "frames",
      "fatal",  "explains", "hang",    "batch",     "dead",     "final",       "stack",   "exit",
      "ends_at_total", "interrupted", "run_end", "one_per_run", "at_total", "unrecoverable", "counts_once", "traffic", "tentative", "control_flow", "fallback", "launcher"};
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!kKnownKeys.count(key)) {
      return Status::InvalidArgument(fmt::format("{}: unknown field '{}'", Where(name, kv.first), key));
    }
  }
  Rule rule;
  rule.source = where;
  rule.id = Scalar(node, "id");
  if (rule.id.empty()) return Status::InvalidArgument(where + ": rule has no 'id'");
  auto kind = KindFromName(Scalar(node, "kind").empty() ? "signature" : Scalar(node, "kind"), where);
  if (!kind.ok()) return kind.status();
  rule.kind = *kind;
  rule.pattern = Scalar(node, "pattern");
  if (rule.pattern.empty()) return Status::InvalidArgument(fmt::format("{}: rule {} has no 'pattern'", where, rule.id));
  RE2 re(rule.pattern, RE2::Quiet);
  if (!re.ok()) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: bad pattern: {}", where, rule.id, re.error()));
  }
  rule.framework = Scalar(node, "framework");
  if (rule.framework.empty()) rule.framework = default_framework;
  auto versions = StringList(node["versions"], where, "versions");
  if (!versions.ok()) return versions.status();
  rule.versions = *versions;
  rule.category = Scalar(node, "category");
  rule.title = Scalar(node, "title");
  rule.explanation = Scalar(node, "explanation");
  rule.fix = Scalar(node, "fix");
  rule.reason = Scalar(node, "reason");
  rule.summary = node["summary"] && node["summary"].as<bool>();
  rule.generic = node["generic"] && node["generic"].as<bool>();
  rule.control_flow = node["control_flow"] && node["control_flow"].as<bool>();
  if (rule.control_flow && rule.kind != RuleKind::kSignature) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'control_flow' is for signature rules", where, rule.id));
  }
  rule.frames = node["frames"] && node["frames"].as<bool>();
  rule.fatal = node["fatal"] && node["fatal"].as<bool>();
  rule.hang = node["hang"] && node["hang"].as<bool>();
  rule.tentative = node["tentative"] && node["tentative"].as<bool>();
  if (rule.tentative && rule.kind != RuleKind::kStop) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'tentative' is for stop rules", where, rule.id));
  }
  rule.dead = node["dead"] && node["dead"].as<bool>();
  rule.unrecoverable = node["unrecoverable"] && node["unrecoverable"].as<bool>();
  if (rule.unrecoverable && rule.kind != RuleKind::kSignature) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'unrecoverable' is for signature rules", where, rule.id));
  }
  rule.run_end = node["run_end"] && node["run_end"].as<bool>();
  rule.one_per_run = node["one_per_run"] && node["one_per_run"].as<bool>();
  if (rule.one_per_run && !rule.run_end) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'one_per_run' is for run_end rules", where, rule.id));
  }
  if (rule.run_end && rule.kind != RuleKind::kCascade) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'run_end' is for cascade rules", where, rule.id));
  }
  if (rule.dead && rule.kind != RuleKind::kCascade) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: 'dead' is for cascade rules", where, rule.id));
  }
  rule.explains = Scalar(node, "explains");
  if (!rule.explains.empty()) {
    RE2 explains(rule.explains, RE2::Quiet);
    if (!explains.ok()) {
      return Status::InvalidArgument(fmt::format("{}: rule {}: bad explains: {}", where, rule.id, explains.error()));
    }
    if (rule.kind != RuleKind::kSignature) {
      return Status::InvalidArgument(fmt::format("{}: rule {}: only a signature explains", where, rule.id));
    }
  }
  rule.phase = Scalar(node, "phase");
  rule.completes = node["completes"] && node["completes"].as<bool>();
  rule.progress = node["progress"] && node["progress"].as<bool>();
  rule.batch = node["batch"] && node["batch"].as<bool>();
  rule.final_only = node["final"] && node["final"].as<bool>();
  if (rule.final_only && !rule.completes) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: only a phase that completes is final", where, rule.id));
  }
  rule.exit_only = node["exit"] && node["exit"].as<bool>();
  if (rule.exit_only && !rule.completes) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a phase that completes says the process exited", where, rule.id));
  }
  if (rule.batch && (rule.kind != RuleKind::kPhase || rule.completes)) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a phase that does not complete is a batch", where, rule.id));
  }
  rule.ends_at_total = node["ends_at_total"] && node["ends_at_total"].as<bool>();
  if (rule.ends_at_total && !rule.progress) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a progress counter ends at its total", where, rule.id));
  }
  rule.counts_once = node["counts_once"] && node["counts_once"].as<bool>();
  if (rule.counts_once && !rule.progress) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a progress counter counts its first line", where, rule.id));
  }
  rule.traffic = node["traffic"] && node["traffic"].as<bool>();
  if (rule.traffic && (rule.kind != RuleKind::kPhase || rule.progress || rule.completes)) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a specific phase mark is a server's traffic", where, rule.id));
  }
  rule.at_total = node["at_total"] && node["at_total"].as<bool>();
  if (rule.at_total && !rule.completes) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a phase that completes ends at a counter's total", where, rule.id));
  }
  rule.fallback = node["fallback"] && node["fallback"].as<bool>();
  if (rule.fallback && (rule.kind != RuleKind::kPhase || rule.completes || rule.progress || rule.traffic ||
                        rule.batch || rule.phase == "process-start" || rule.phase == "ready" ||
                        rule.phase == "shutdown")) {
    return Status::InvalidArgument(fmt::format(
        "{}: rule {}: only a plain phase mark between process-start and ready (or training) is a fallback", where,
        rule.id));
  }
  rule.launcher = node["launcher"] && node["launcher"].as<bool>();
  if (rule.launcher && (rule.kind != RuleKind::kPhase || rule.phase != "process-start")) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a process-start mark is a launcher's", where, rule.id));
  }
  rule.stack = node["stack"] && node["stack"].as<bool>();
  if (rule.stack && rule.kind != RuleKind::kPhase) {
    return Status::InvalidArgument(fmt::format("{}: rule {}: only a phase reads stack frames", where, rule.id));
  }
  rule.interrupted = node["interrupted"] && node["interrupted"].as<bool>();
  if (rule.interrupted && (rule.kind != RuleKind::kPhase || rule.completes || rule.progress || rule.stack)) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {}: only a phase marker (not completes, progress or stack) reads interrupted frames",
                    where, rule.id));
  }
  rule.replacement = Scalar(node, "replacement");
  switch (rule.kind) {
    case RuleKind::kSignature:
      if (rule.explanation.empty() || rule.fix.empty()) {
        return Status::InvalidArgument(fmt::format("{}: signature {} needs 'explanation' and 'fix'", where, rule.id));
      }
      break;
    case RuleKind::kCascade:
      if (rule.reason.empty()) {
        return Status::InvalidArgument(fmt::format("{}: cascade {} needs a 'reason'", where, rule.id));
      }
      break;
    case RuleKind::kPhase:
      if (PhaseIndex(rule.phase) < 0) {
        return Status::InvalidArgument(
            fmt::format("{}: phase rule {} has phase '{}'; use one of process-start, distributed-init, "
                        "weight-loading, torch-compile, kv-cache-profiling, cuda-graph-capture, ready, "
                        "training, shutdown",
                        where, rule.id, rule.phase));
      }
      if (rule.progress && re.NamedCapturingGroups().count("step") == 0) {
        return Status::InvalidArgument(
            fmt::format("{}: progress rule {} must capture the counter as (?P<step>\\d+)", where, rule.id));
      }
      break;
    case RuleKind::kStop:
      if (rule.reason.empty()) {
        return Status::InvalidArgument(fmt::format("{}: stop {} needs a 'reason'", where, rule.id));
      }
      break;
    case RuleKind::kFact:
      if (re.NumberOfCapturingGroups() == 0) {
        return Status::InvalidArgument(
            fmt::format("{}: fact {} must capture a named value, e.g. (?P<tp>\\d+)", where, rule.id));
      }
      break;
    default:
      break;
  }
  const YAML::Node samples = node["samples"];
  if (!samples || !samples["match"]) {
    return Status::InvalidArgument(
        fmt::format("{}: rule {} needs samples.match: lines (from real logs) it must match", where, rule.id));
  }
  auto match = StringList(samples["match"], where, "samples.match");
  if (!match.ok()) return match.status();
  rule.match_samples = *match;
  auto no_match = StringList(samples["no_match"], where, "samples.no_match");
  if (!no_match.ok()) return no_match.status();
  rule.no_match_samples = *no_match;
  return rule;
}

}  // namespace

namespace {

Result<YAML::Node> LoadYaml(std::string_view yaml_text, const std::string& name) {
  try {
    return YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: YAML error: {}", name, e.mark.line + 1, e.msg));
  }
}

Result<std::vector<Rule>> ParseRuleNode(const YAML::Node& root, const std::string& name) {
  // A file may hold only wrappers (rules/wrappers.yaml, rules/wrapper_loader.h).
  if (root.IsMap() && !root["rules"] && root["wrappers"]) return std::vector<Rule>();
  if (!root.IsMap() || !root["rules"] || !root["rules"].IsSequence()) {
    return Status::InvalidArgument(name + ": a rule file is a mapping with a 'rules:' list");
  }
  std::string framework = root["framework"] ? root["framework"].as<std::string>() : "";
  std::vector<Rule> rules;
  try {
    for (const auto& node : root["rules"]) {
      auto rule = ParseRule(node, name, framework);
      if (!rule.ok()) return rule.status();
      rules.push_back(std::move(*rule));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", name, e.mark.line + 1, e.msg));
  }
  return rules;
}

}  // namespace

Result<std::vector<Rule>> ParseRuleFile(std::string_view yaml_text, const std::string& name) {
  auto root = LoadYaml(yaml_text, name);
  if (!root.ok()) return root.status();
  return ParseRuleNode(*root, name);
}

Result<std::vector<Rule>> LoadRuleFile(const std::string& path) {
  auto text = ReadSmallFile(path);  // bounded; a FIFO or /dev/zero is refused
  if (!text.ok()) return Status::NotFound(fmt::format("cannot read rule file {}", text.status().message()));
  return ParseRuleFile(*text, path);
}

bool IsTriageRuleFile(std::string_view yaml_text) {
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    return root.IsMap() && root["rules"];
  } catch (const YAML::Exception&) {
    return true;  // let the parser report the syntax error
  }
}

namespace {

// Every field of a Rule, in one order, for SerializeRules and DeserializeRules.
template <class R, class F>
void VisitRuleFields(R& r, F&& f) {
  f(r.id), f(r.kind), f(r.pattern), f(r.framework), f(r.versions), f(r.category), f(r.title);
  f(r.explanation), f(r.fix), f(r.reason), f(r.summary), f(r.generic), f(r.control_flow), f(r.frames), f(r.fatal);
  f(r.hang), f(r.tentative), f(r.dead), f(r.unrecoverable), f(r.run_end), f(r.one_per_run), f(r.explains), f(r.phase), f(r.completes), f(r.final_only);
  f(r.exit_only), f(r.progress), f(r.ends_at_total), f(r.counts_once), f(r.traffic), f(r.at_total), f(r.batch), f(r.stack);
  f(r.interrupted), f(r.fallback), f(r.launcher), f(r.replacement), f(r.match_samples), f(r.no_match_samples), f(r.source);
}

void PutSize(std::string* out, size_t n) {
  for (; n >= 0x80; n >>= 7) out->push_back(static_cast<char>((n & 0x7f) | 0x80));
  out->push_back(static_cast<char>(n));
}

struct BlobReader {
  std::string_view in;
  bool ok = true;

  size_t Size() {
    size_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in.empty()) break;
      const auto b = static_cast<unsigned char>(in.front());
      in.remove_prefix(1);
      n |= static_cast<size_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return n;
    }
    ok = false;
    return 0;
  }
  void operator()(std::string& s) {
    const size_t n = Size();
    if (n > in.size()) {
      ok = false;
      return;
    }
    s.assign(in.substr(0, n));
    in.remove_prefix(n);
  }
  void operator()(std::vector<std::string>& v) {
    const size_t n = Size();
    if (n > in.size()) {  // each string takes at least its length byte
      ok = false;
      return;
    }
    v.resize(n);
    for (auto& s : v) (*this)(s);
  }
  void operator()(bool& b) { b = Size() != 0; }
  void operator()(RuleKind& k) { k = static_cast<RuleKind>(Size()); }
};

// The built-in rules serialised at build time (RegisterBuiltinRules), when the binary has them.
std::string_view g_builtin_blob;

}  // namespace

std::string SerializeRules(const std::vector<Rule>& rules) {
  std::string out;
  PutSize(&out, rules.size());
  for (const auto& rule : rules) {
    VisitRuleFields(rule, [&](const auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, std::string>) {
        PutSize(&out, v.size());
        out += v;
      } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        PutSize(&out, v.size());
        for (const auto& s : v) PutSize(&out, s.size()), out += s;
      } else {
        PutSize(&out, static_cast<size_t>(v));
      }
    });
  }
  return out;
}

Result<std::vector<Rule>> DeserializeRules(std::string_view blob) {
  BlobReader in{blob};
  const size_t n = in.Size();
  if (!in.ok || n > blob.size()) return Status::InvalidArgument("serialised rules: truncated");
  std::vector<Rule> rules(n);
  for (auto& rule : rules) VisitRuleFields(rule, in);
  if (!in.ok || !in.in.empty()) return Status::InvalidArgument("serialised rules: truncated or trailing bytes");
  return rules;
}

void RegisterBuiltinRules(std::string_view blob) { g_builtin_blob = blob; }

bool HaveSerialisedBuiltinRules() { return !g_builtin_blob.empty(); }

Result<std::vector<Rule>> LoadBuiltinRules() {
  if (!g_builtin_blob.empty()) return DeserializeRules(g_builtin_blob);
  return ParseBuiltinRuleFiles();
}

Result<std::vector<Rule>> ParseBuiltinRuleFiles() {
  // Parsing the YAML was most of triage's start-up (the binary now loads the
  // build-time copy): the files are parsed on several threads, the rules kept
  // in file order.
  const auto& files = EmbeddedRuleFiles();
  std::vector<std::optional<Result<std::vector<Rule>>>> parsed(files.size());
  auto parse = [&](size_t i) {
    // rules/ also holds data for other stages (the GPU catalog, stall
    // classes, miner settings); triage rules are the files with a rules: list,
    // which every built-in rule file opens at the start of a line (block
    // style): the others are not parsed at all.
    std::string_view text = files[i].second;
    if (text.substr(0, 6) != "rules:" && text.find("\nrules:") == std::string_view::npos) {
      parsed[i].emplace(std::vector<Rule>());
      return;
    }
    std::string file = "rules/" + std::string(files[i].first);
    auto root = LoadYaml(files[i].second, file);
    if (!root.ok()) {
      parsed[i].emplace(root.status());
    } else if (!root->IsMap() || !(*root)["rules"]) {
      parsed[i].emplace(std::vector<Rule>());
    } else {
      parsed[i].emplace(ParseRuleNode(*root, file));
    }
  };
  const size_t threads = std::min<size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < files.size();) parse(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::vector<Rule> all;
  for (auto& one : parsed) {
    if (!one->ok()) return one->status();
    for (auto& r : **one) all.push_back(std::move(r));
  }
  std::set<std::string> ids;
  for (const auto& r : all) {
    if (!ids.insert(r.id).second) {
      return Status::InvalidArgument(fmt::format("{}: duplicate rule id {}", r.source, r.id));
    }
  }
  return all;
}

std::vector<std::string> CheckSamples(const std::vector<Rule>& rules) {
  std::vector<std::string> problems;
  for (const auto& rule : rules) {
    RE2 re(rule.pattern);
    for (const auto& s : rule.match_samples) {
      if (!RE2::PartialMatch(s, re)) {
        problems.push_back(fmt::format("{}: {} does not match its sample: {}", rule.source, rule.id, s));
      }
    }
    for (const auto& s : rule.no_match_samples) {
      if (RE2::PartialMatch(s, re)) {
        problems.push_back(fmt::format("{}: {} matches its no_match sample: {}", rule.source, rule.id, s));
      }
    }
  }
  return problems;
}

}  // namespace faultline::rules
