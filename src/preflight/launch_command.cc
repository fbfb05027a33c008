#include "preflight/launch_command.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "preflight/flag_table.h"
#include "preflight/units.h"
#include "util/read_file.h"

namespace faultline::preflight {
namespace {

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsEnvAssignment(const std::string& word) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    char c = word[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return !std::isdigit(static_cast<unsigned char>(word[0]));
}

bool StartsWith(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

Status CheckRange(const FlagSpec& spec, const std::string& flag, const std::string& value, double v) {
  if (spec.min && v < *spec.min) {
    return Status::InvalidArgument(fmt::format("{} {}: must be at least {}", flag, value, *spec.min));
  }
  if (spec.max && v > *spec.max) {
    return Status::InvalidArgument(fmt::format("{} {}: must be at most {}", flag, value, *spec.max));
  }
  return Status::Ok();
}

Status CheckValue(const FlagSpec& spec, const std::string& flag, const std::string& value) {
  switch (spec.type) {
    case FlagType::kInt: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0') {
        return Status::InvalidArgument(fmt::format("{} {}: not an integer", flag, value));
      }
      if (errno == ERANGE) return Status::InvalidArgument(fmt::format("{} {}: integer out of range", flag, value));
      return CheckRange(spec, flag, value, static_cast<double>(v));
    }
    case FlagType::kFloat: {
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0') {
        return Status::InvalidArgument(fmt::format("{} {}: not a number", flag, value));
      }
      if (!std::isfinite(v)) return Status::InvalidArgument(fmt::format("{} {}: not a finite number", flag, value));
      return CheckRange(spec, flag, value, v);
    }
    case FlagType::kSize: {
      Result<int64_t> v = ParseHumanInt(value);
      if (!v.ok()) return Status::InvalidArgument(fmt::format("{} {}: {}", flag, value, v.status().message()));
      return CheckRange(spec, flag, value, static_cast<double>(*v));
    }
    default:
      return Status::Ok();
  }
}

class Parser {
 public:
  Parser(Launcher launcher, LaunchCommand* out) : table_(BuiltinFlagTable(LauncherName(launcher))), out_(out) {}

  // Parses flags and positionals. For torchrun, the first positional starts
  // the script part and everything after it belongs to the script.
  Status Parse(const std::vector<std::string>& args, size_t start) {
    for (size_t i = start; i < args.size(); ++i) {
      std::string word = args[i];
      if (word == "--") {
        for (size_t j = i + 1; j < args.size(); ++j) positionals_.push_back(args[j]);
        break;
      }
      if (word.size() < 2 || word[0] != '-' || IsNegativeNumber(word)) {
        positionals_.push_back(word);
        if (out_->launcher == Launcher::kTorchrun) {
          for (size_t j = i + 1; j < args.size(); ++j) positionals_.push_back(args[j]);
          break;
        }
        continue;
      }
      std::string name = word;
      std::optional<std::string> inline_value;
      size_t eq = word.find('=');
      if (eq != std::string::npos) {
        name = word.substr(0, eq);
        inline_value = word.substr(eq + 1);
      }
      if (table_.underscores && StartsWith(name, "--")) {
        for (size_t k = 2; k < name.size(); ++k) {
          if (name[k] == '_') name[k] = '-';
        }
      }
      const FlagSpec* spec = table_.Find(name);
      bool negated = false;
      if (!spec && StartsWith(name, "--no-")) {
        spec = table_.Find("--" + name.substr(5));
        negated = spec && spec->type == FlagType::kBool;
        if (!negated) spec = nullptr;
      }
      if (!spec) {
        out_->unknown_flags.push_back(word);
        // Unknown: assume it takes a value when the next word is not a flag
        // (argparse cannot tell us), unless that would eat the model.
        if (!inline_value && i + 1 < args.size() && !StartsWith(args[i + 1], "-")) {
          out_->unknown_flags.back() += " " + args[i + 1];
          ++i;
        }
        continue;
      }
      if (spec->type == FlagType::kBool) {
        if (!spec->key.empty()) out_->values[spec->key] = negated ? "false" : "true";
        continue;
      }
      if (spec->type == FlagType::kList) {
        std::string joined = inline_value.value_or("");
        while (i + 1 < args.size() && !StartsWith(args[i + 1], "-")) {
          if (!joined.empty()) joined += " ";
          joined += args[++i];
        }
        if (!spec->key.empty()) out_->values[spec->key] = joined;
        continue;
      }
      std::string value;
      if (inline_value) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return Status::InvalidArgument(fmt::format("{}: expected a value", word));
      }
      Status st = CheckValue(*spec, name, value);
      if (!st.ok()) return st;
      if (!spec->key.empty()) out_->values[spec->key] = value;
    }
    return Status::Ok();
  }

  const std::vector<std::string>& positionals() const { return positionals_; }

 private:
  static bool IsNegativeNumber(const std::string& w) {
    return w.size() > 1 && w[0] == '-' && std::isdigit(static_cast<unsigned char>(w[1]));
  }

  const FlagTable& table_;
  LaunchCommand* out_;
  std::vector<std::string> positionals_;
};

// vLLM's --config FILE (YAML): keys are flag names without dashes; values on
// the command line win (vllm/utils/argparse_utils.py, _load_config_file).
Status MergeVllmConfigFile(LaunchCommand* cmd) {
  std::string path = cmd->Str("config_file");
  if (path.empty()) return Status::Ok();
  YAML::Node root;
  try {
    auto text = ReadSmallFile(path);  // bounded; a FIFO or /dev/zero is refused
    if (!text.ok()) {
      cmd->notes.push_back(fmt::format("--config {}: not read ({})", path, text.status().message()));
      return Status::Ok();
    }
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    cmd->notes.push_back(fmt::format("--config {}: not read ({})", path, e.what()));
    return Status::Ok();
  }
  if (!root.IsMap()) return Status::InvalidArgument(fmt::format("--config {}: not a YAML mapping", path));
  std::vector<std::string> args;
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    if (kv.second.IsScalar()) {
      std::string v = kv.second.as<std::string>();
      if (v == "true" || v == "True") {
        args.push_back("--" + key);
      } else if (v != "false" && v != "False") {
        args.push_back("--" + key);
        args.push_back(v);
      }
    }
  }
  LaunchCommand from_file;
  from_file.launcher = cmd->launcher;
  Parser p(cmd->launcher, &from_file);
  Status st = p.Parse(args, 0);
  if (!st.ok()) return Status::InvalidArgument(fmt::format("--config {}: {}", path, st.message()));
  for (const auto& [k, v] : from_file.values) cmd->values.emplace(k, v);  // CLI wins
  cmd->notes.push_back(fmt::format("read settings from --config {}", path));
  return Status::Ok();
}

}  // namespace

const char* LauncherName(Launcher l) {
  switch (l) {
    case Launcher::kVllm:
      return "vllm";
    case Launcher::kSglang:
      return "sglang";
    case Launcher::kTorchrun:
      return "torchrun";
  }
  return "?";
}

std::string LaunchCommand::Str(const std::string& key, const std::string& fallback) const {
  auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

int64_t LaunchCommand::Int(const std::string& key, int64_t fallback) const {
  std::optional<int64_t> v = OptInt(key);
  return v ? *v : fallback;
}

std::optional<int64_t> LaunchCommand::OptInt(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  Result<int64_t> v = ParseHumanInt(it->second);
  if (!v.ok()) return std::nullopt;
  return *v;
}

double LaunchCommand::Float(const std::string& key, double fallback) const {
  auto it = values.find(key);
  return it == values.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}

bool LaunchCommand::Bool(const std::string& key) const { return Str(key) == "true"; }

Result<LaunchCommand> ParseLaunchCommand(const std::vector<std::string>& argv) {
  LaunchCommand cmd;
  size_t i = 0;
  if (i < argv.size() && Basename(argv[i]) == "env") ++i;
  while (i < argv.size() && IsEnvAssignment(argv[i])) {
    size_t eq = argv[i].find('=');
    cmd.env[argv[i].substr(0, eq)] = argv[i].substr(eq + 1);
    ++i;
  }
  if (i >= argv.size()) return Status::InvalidArgument("no command given after --");
  std::string prog = Basename(argv[i]);
  size_t flags_start = 0;
  if (prog == "vllm") {
    if (i + 1 >= argv.size() || argv[i + 1] != "serve") {
      return Status::InvalidArgument(
          fmt::format("'vllm {}': only 'vllm serve' is checked", i + 1 < argv.size() ? argv[i + 1] : ""));
    }
    cmd.launcher = Launcher::kVllm;
    cmd.entry = "vllm serve";
    flags_start = i + 2;
  } else if (prog == "torchrun") {
    cmd.launcher = Launcher::kTorchrun;
    cmd.entry = "torchrun";
    flags_start = i + 1;
  } else if (StartsWith(prog, "python")) {
    size_t j = i + 1;
    while (j < argv.size() && argv[j] != "-m" && StartsWith(argv[j], "-")) ++j;  // python -u -m ...
    if (j + 1 >= argv.size() || argv[j] != "-m") {
      return Status::InvalidArgument(fmt::format("'{}': expected 'python -m <launcher module>'", argv[i]));
    }
    std::string module = argv[j + 1];
    cmd.entry = "python -m " + module;
    flags_start = j + 2;
    if (module == "vllm.entrypoints.openai.api_server") {
      cmd.launcher = Launcher::kVllm;
    } else if (module == "vllm.entrypoints.cli.main" && flags_start < argv.size() && argv[flags_start] == "serve") {
      cmd.launcher = Launcher::kVllm;
      ++flags_start;
    } else if (module == "sglang.launch_server") {
      cmd.launcher = Launcher::kSglang;
    } else if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
      cmd.launcher = Launcher::kTorchrun;
    } else {
      return Status::InvalidArgument(
          fmt::format("'python -m {}' is not a launcher preflight knows (vllm.entrypoints.openai.api_server, "
                      "sglang.launch_server, torch.distributed.run)",
                      module));
    }
  } else {
    return Status::InvalidArgument(
        fmt::format("'{}' is not a launcher preflight knows: expected vllm serve, python -m "
                    "vllm.entrypoints.openai.api_server, python -m sglang.launch_server or torchrun",
                    argv[i]));
  }

  std::vector<std::string> args(argv.begin(), argv.end());
  Parser parser(cmd.launcher, &cmd);
  Status st = parser.Parse(args, flags_start);
  if (!st.ok()) return st;
  const std::vector<std::string>& pos = parser.positionals();
  switch (cmd.launcher) {
    case Launcher::kVllm:
      // `vllm serve MODEL`: the positional wins over --model.
      cmd.model = !pos.empty() ? pos.front() : cmd.Str("model");
      if (cmd.entry == "vllm serve" && pos.empty() && cmd.model.empty()) {
        return Status::InvalidArgument("vllm serve: no model given");
      }
      if (cmd.model.empty()) cmd.model = "facebook/opt-125m";  // EngineArgs default
      for (size_t k = 1; k < pos.size(); ++k) cmd.unknown_flags.push_back(pos[k]);
      st = MergeVllmConfigFile(&cmd);
      if (!st.ok()) return st;
      break;
    case Launcher::kSglang:
      cmd.model = cmd.Str("model");
      if (cmd.model.empty()) return Status::InvalidArgument("sglang.launch_server: --model-path is required");
      for (const std::string& p : pos) cmd.unknown_flags.push_back(p);
      break;
    case Launcher::kTorchrun:
      cmd.script_args = pos;
      if (pos.empty()) return Status::InvalidArgument("torchrun: no training script given");
      break;
  }
  return cmd;
}

}  // namespace faultline::preflight
