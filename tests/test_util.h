// Helpers for tests that run the faultline binary as a user would.
#ifndef FAULTLINE_TESTS_TEST_UTIL_H_
#define FAULTLINE_TESTS_TEST_UTIL_H_

#include <string>

namespace faultline::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line (through /bin/sh) in dir, capturing stdout and
// stderr separately.
CommandResult RunShell(const std::string& command, const std::string& dir = ".");

// Quotes s for /bin/sh.
std::string ShellQuote(const std::string& s);

std::string ReadFile(const std::string& path);

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_TEST_UTIL_H_
