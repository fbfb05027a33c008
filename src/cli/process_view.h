// triage --process TAG and --around [FILE:]LINE: one process's story, and the
// interleaved neighbourhood of one line. Lines are read as triage reads them
// (files, directories, .gz/.zst, stdin), with the wrappers a file wears
// (docker compose, kubectl, srun --label, ...: rules/wrappers.yaml) peeled by
// parse::WrapperStack, and attributed to processes by
// parse::ParseProcessPrefixes, so TAG is a process as the report names it.
#ifndef FAULTLINE_CLI_PROCESS_VIEW_H_
#define FAULTLINE_CLI_PROCESS_VIEW_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace faultline::cli {

struct ProcessViewOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> rule_files;  // --rules: may add wrappers
  // --process: "Worker pid=7506", "rank3", "7506" (a pid or rank),
  // "pid=7506", or a wrapper's identity ("qwen-server").
  std::string process;
  std::string around;  // --around: "41" or "vllm.log:41"
  int context = 8;     // lines each side of --around
  bool color = false;
};

// Prints the view; returns the exit code (0 lines shown, 2 usage or input
// error, with one "faultline: " line on err).
int PrintProcessView(const ProcessViewOptions& options, std::ostream& out, std::ostream& err);

// Whether a line of process `key` (pid, rank; -1 when unknown; `identity`
// the wrapper's part) is what TAG names.
bool ProcessMatches(const std::string& tag, const std::string& key, const std::string& identity, int64_t pid, int rank);

}  // namespace faultline::cli

#endif  // FAULTLINE_CLI_PROCESS_VIEW_H_
