// A launch command line (vllm serve / python -m vllm.entrypoints.openai.api_server /
// python -m sglang.launch_server / torchrun) parsed with the launcher's own
// flag names (rules/preflight_flags.yaml) into the settings preflight checks:
// parallel sizes, model, memory and length limits, port.
#ifndef FAULTLINE_PREFLIGHT_LAUNCH_COMMAND_H_
#define FAULTLINE_PREFLIGHT_LAUNCH_COMMAND_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::preflight {

enum class Launcher { kVllm, kSglang, kTorchrun };
const char* LauncherName(Launcher l);  // "vllm", "sglang", "torchrun"

struct LaunchCommand {
  Launcher launcher = Launcher::kVllm;
  std::string entry;                          // "vllm serve", "python -m sglang.launch_server", ...
  std::string model;                          // as written; empty when none
  std::map<std::string, std::string> values;  // key -> value as written (bools: "true"/"false")
  std::map<std::string, std::string> env;     // VAR=VALUE words before the program
  std::vector<std::string> unknown_flags;     // flags not in the table, as written
  std::vector<std::string> notes;             // things worth saying (config file read, ...)
  std::vector<std::string> script_args;       // torchrun: the script and its arguments

  bool Has(const std::string& key) const { return values.count(key) > 0; }
  std::string Str(const std::string& key, const std::string& fallback = "") const;
  // REQUIRES: the value was validated at parse time (ints and sizes are).
  int64_t Int(const std::string& key, int64_t fallback) const;
  std::optional<int64_t> OptInt(const std::string& key) const;
  double Float(const std::string& key, double fallback) const;
  bool Bool(const std::string& key) const;
};

// argv[0] is the program ("vllm", "/usr/bin/python3", "torchrun", or
// VAR=VALUE / "env" words before it). Fails (kInvalidArgument) when the
// command is not one of the supported launchers or a value is malformed
// ("--tensor-parallel-size two").
Result<LaunchCommand> ParseLaunchCommand(const std::vector<std::string>& argv);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_LAUNCH_COMMAND_H_
