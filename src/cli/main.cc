// faultline: finds the line at fault when a distributed GPU job fails or
// stalls.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/cli_support.h"
#include "cli/commands.h"

namespace faultline::cli {
std::vector<RegisteredCommand>& CommandRegistry() {
  static std::vector<RegisteredCommand> registry;
  return registry;
}
}  // namespace faultline::cli

int main(int argc, char** argv) {
  // A closed stdout (faultline ... | head) must not kill us mid-report.
  std::signal(SIGPIPE, SIG_IGN);
#if defined(__GLIBC__)
  // A directory of rank logs is scanned file after file, each with its own
  // blocks (1 MiB and more): glibc maps such blocks afresh and hands freed
  // memory back at once, and the page faults of touching it again took ~10%
  // of a scan of 64 rank files. Blocks stay in the heap instead (peak RSS is
  // what the largest scan holds at once, and at most 8 MiB more a thread).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
  // Named, so that usage lines say "faultline", not the path it was run by.
  CLI::App app{"faultline: finds the line at fault when a distributed GPU job fails or stalls", "faultline"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "faultline " + faultline::cli::VersionString());
  app.footer(
      "\n'faultline help COMMAND' shows a command's flags, an example "
      "and its exit codes.");
  int exit_code = faultline::cli::kExitHealthy;
  auto commands = faultline::cli::CommandRegistry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& c : commands) c.add(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, prefixed, with "did you mean" for a mistyped command or flag
    // (CLI11's own message is two lines and suggests nothing).
    std::vector<std::string> args(argv + 1, argv + argc);
    std::cerr << "faultline: " << faultline::cli::DescribeParseError(app, e, args) << "\n";
    return faultline::cli::kExitUsage;
  }
  std::cout.flush();
  return exit_code;
}
