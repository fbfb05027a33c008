// Every subcommand lives in its own src/cli/<name>_command.cc and registers
// itself with FAULTLINE_REGISTER_COMMAND(order, AddXCommand); main.cc knows
// no command by name, so adding one touches no shared file. AddXCommand adds
// a CLI11 subcommand whose callback stores the process exit code (0 healthy,
// 1 diagnosed failure/stall or blocking problem, 2 usage or input error) in
// *exit_code.
#ifndef FAULTLINE_CLI_COMMANDS_H_
#define FAULTLINE_CLI_COMMANDS_H_

#include <vector>

#include <CLI/CLI.hpp>

namespace faultline::cli {

inline constexpr int kExitHealthy = 0;
inline constexpr int kExitDiagnosed = 1;
inline constexpr int kExitUsage = 2;

using AddCommandFn = void (*)(CLI::App& app, int* exit_code);

struct RegisteredCommand {
  int order;  // position in --help
  AddCommandFn add;
};

// The registered commands, in no particular order.
std::vector<RegisteredCommand>& CommandRegistry();

struct CommandRegistrar {
  CommandRegistrar(int order, AddCommandFn add) { CommandRegistry().push_back({order, add}); }
};

#define FAULTLINE_REGISTER_COMMAND(order, fn) \
  static ::faultline::cli::CommandRegistrar fn##_registrar(order, fn)

// Commands (order in --help): triage 10, preflight 20, run 30, wait-ready 40,
// watch 50, dashboard 60, templates 70, rules 80.
void AddTriageCommand(CLI::App& app, int* exit_code);
void AddRulesCommand(CLI::App& app, int* exit_code);
void AddTemplatesCommand(CLI::App& app, int* exit_code);
void AddPreflightCommand(CLI::App& app, int* exit_code);
void AddRunCommand(CLI::App& app, int* exit_code);
void AddWatchCommand(CLI::App& app, int* exit_code);
void AddWaitReadyCommand(CLI::App& app, int* exit_code);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_COMMANDS_H_
