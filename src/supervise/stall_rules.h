// StallRules: rules/stall.yaml in memory — what counts as progress, which
// compile caches and wait channels to watch, the log's phase markers, and the
// ordered stall classes with their conditions, evidence and suggestions.
// The file is embedded in the binary at build time; --stall-rules FILE
// replaces it. Loading checks every condition, feature name, template and
// regex, and an error names the file and the class.
#ifndef FAULTLINE_SUPERVISE_STALL_RULES_H_
#define FAULTLINE_SUPERVISE_STALL_RULES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/live_cache.h"
#include "supervise/condition.h"
#include "supervise/stacks.h"
#include "util/status.h"

namespace faultline::supervise {

struct ProgressThresholds {
  int64_t log_bytes = 1;
  int64_t read_bytes = 8 << 20;
  int64_t write_bytes = 8 << 20;  // storage writes or write() bytes (checkpoints, caches)
  int64_t rss_bytes = 256 << 20;
  int64_t gpu_memory_bytes = 64 << 20;
  int64_t cache_bytes = 1;
  int64_t gpu_util_change = 20;  // utilisation points moved since the last progress (GPU work)
  bool tree_change = true;
};

struct Templated {
  std::string text;
  std::optional<Condition> when;
};

struct StallClass {
  std::string id;
  std::string title;
  Condition when;
  std::string explanation;
  std::vector<Templated> evidence;
  std::vector<Templated> suggestions;
};

struct PhaseMarker {
  std::string phase;
  std::string pattern;  // RE2
};

// A kernel log line (/dev/kmsg) that explains a death. pattern is RE2;
// "{pid}" in it stands for the dead process's pid (a line without it is
// taken when it was logged while the job ran: NVRM Xid errors).
struct KernelMessage {
  std::string kind;  // "oom-kill", "gpu-xid", ...
  std::string pattern;
  std::string explain;  // "killed by the OOM killer"
};

struct StallRules {
  std::string source;  // "rules/stall.yaml (built in)" or the file given
  ProgressThresholds progress;
  double window_seconds = 60;
  double busy_cpu_percent = 80;
  // Also busy: state R in at least this share of the samples while getting
  // at least busy_runnable_cpu_percent (a spin loop on an overloaded host).
  double busy_runnable_fraction = 0.8;
  double busy_runnable_cpu_percent = 10;
  std::vector<probe::CacheDirWatcher::Dir> cache_dirs;
  std::vector<std::string> compile_workers;                       // RE2 over cmdline / comm
  std::map<std::string, std::vector<std::string>> wait_channels;  // group -> wchan names
  std::vector<PhaseMarker> phase_markers;
  std::vector<StallClass> classes;  // tried in order
  // Frame patterns that name the phase of a stuck Python process, in
  // priority order (stacks.h); each names the stall class it means.
  std::vector<StackPhase> stack_phases;
  std::vector<KernelMessage> kernel_messages;
};

Result<StallRules> ParseStallRules(const std::string& yaml_text, const std::string& source);
Result<StallRules> LoadStallRulesFile(const std::string& path);
// The rules/stall.yaml embedded at build time.
Result<StallRules> BuiltinStallRules();

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_STALL_RULES_H_
