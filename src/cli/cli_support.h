// What every command shares and nothing else in faultline needs: the version
// string, "did you mean" suggestions, one-line parse errors, the help footer,
// and the man page and shell completions generated from the CLI11 command
// definitions (so they cannot drift from the flags the binary accepts).
#ifndef FAULTLINE_CLI_CLI_SUPPORT_H_
#define FAULTLINE_CLI_CLI_SUPPORT_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::cli {

// "0.1.0 (git 649421b16d56)": the CMake project version and the commit the
// binary was built from.
std::string VersionString();

// Optimal string alignment distance (edits, with adjacent transpositions).
int EditDistance(std::string_view a, std::string_view b);

// The candidate closest to word, or "" when none is close enough to be a
// plausible typo (at most 2 edits, and fewer than half of word's letters).
std::string Suggest(std::string_view word, const std::vector<std::string>& candidates);

// A parse error as one line without the "faultline: " prefix, naming the
// command, with a suggestion for a mistyped command or flag.
std::string DescribeParseError(const CLI::App& root, const CLI::ParseError& e, const std::vector<std::string>& args);

// "Example:\n  ...\n\nExit codes: ..." for a command's --help.
std::string HelpFooter(std::string_view example, std::string_view exit_codes);
inline constexpr std::string_view kExitCodesTriage =
    "0 healthy, 1 a failure or stall was diagnosed, 2 usage or input error";

// The visible subcommands of root, in help order.
std::vector<const CLI::App*> VisibleCommands(const CLI::App& root);

// A man page (roff, section 1) listing every visible command and flag.
std::string ManPage(const CLI::App& root);

// A completion script for shell ("bash", "zsh" or "fish"); "" for another.
std::string CompletionScript(const CLI::App& root, std::string_view shell);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_CLI_SUPPORT_H_
