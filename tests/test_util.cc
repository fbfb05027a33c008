#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace faultline::testing {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult RunShell(const std::string& command, const std::string& dir) {
  char err_path[] = "/tmp/faultline-test-stderr-XXXXXX";
  int fd = mkstemp(err_path);
  if (fd >= 0) close(fd);
  std::string full = "cd " + ShellQuote(dir) + " && " + command + " 2>" + err_path;
  CommandResult r;
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = ReadFile(err_path);
  unlink(err_path);
  return r;
}

}  // namespace faultline::testing
