// Every subcommand registers itself on the CLI11 app through one of these.
// The subcommand's callback stores the process exit code (0 healthy, 1
// diagnosed failure/stall or blocking problem, 2 usage or input error) in
// *exit_code. One file per command: <name>_command.cc.
#ifndef FAULTLINE_CLI_COMMANDS_H_
#define FAULTLINE_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace faultline::cli {

inline constexpr int kExitHealthy = 0;
inline constexpr int kExitDiagnosed = 1;
inline constexpr int kExitUsage = 2;

void AddTriageCommand(CLI::App& app, int* exit_code);
void AddRulesCommand(CLI::App& app, int* exit_code);

void AddTemplatesCommand(CLI::App& app, int* exit_code);
void AddPreflightCommand(CLI::App& app, int* exit_code);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_COMMANDS_H_
