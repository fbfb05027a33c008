// faultline help [COMMAND] | help --man, faultline version, faultline
// completion bash|zsh|fish: what the binary says about itself. The man page
// and the completions are generated from the command definitions.
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/commands.h"

namespace faultline::cli {

void AddHelpCommand(CLI::App& app, int* exit_code) {
  struct Args {
    std::string command;
    bool man = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* root = &app;
  CLI::App* cmd = app.add_subcommand("help", "Show the commands, one command's flags (help COMMAND), or the man page");
  cmd->add_option("command", args->command, "the command to describe");
  cmd->add_flag("--man", args->man, "print the man page (roff); e.g. faultline help --man | man -l -");
  cmd->footer(HelpFooter("faultline help triage", "0 shown, 2 no such command"));
  cmd->callback([args, root, exit_code]() {
    if (args->man) {
      std::cout << ManPage(*root);
      return;
    }
    if (args->command.empty()) {
      std::cout << root->get_formatter()->make_help(root, "faultline", CLI::AppFormatMode::Normal);
      return;
    }
    for (const CLI::App* c : VisibleCommands(*root)) {
      if (c->get_name() == args->command) {
        std::cout << c->get_formatter()->make_help(c, "faultline " + c->get_name(), CLI::AppFormatMode::Normal);
        return;
      }
    }
    std::vector<std::string> names;
    for (const CLI::App* c : VisibleCommands(*root)) names.push_back(c->get_name());
    std::string hint = Suggest(args->command, names);
    std::cerr << "faultline: help: unknown command '" << args->command << "'"
              << (hint.empty() ? std::string("; 'faultline help' lists the commands")
                               : "; did you mean '" + hint + "'?")
              << "\n";
    *exit_code = kExitUsage;
  });
}

void AddVersionCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version and the git commit it was built from");
  cmd->footer(HelpFooter("faultline version", "0"));
  cmd->callback([]() { std::cout << "faultline " << VersionString() << "\n"; });
}

void AddCompletionCommand(CLI::App& app, int* exit_code) {
  auto shell = std::make_shared<std::string>();
  CLI::App* root = &app;
  CLI::App* cmd = app.add_subcommand("completion", "Print the shell completion script for bash, zsh or fish");
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer(HelpFooter("faultline completion bash > /etc/bash_completion.d/faultline", "0, 2 unknown shell"));
  cmd->callback([shell, root]() { std::cout << CompletionScript(*root, *shell); });
}

FAULTLINE_REGISTER_COMMAND(90, AddHelpCommand);
FAULTLINE_REGISTER_COMMAND(100, AddVersionCommand);
FAULTLINE_REGISTER_COMMAND(110, AddCompletionCommand);

}  // namespace faultline::cli
