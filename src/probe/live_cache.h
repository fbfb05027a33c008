// CacheDirWatcher: how big the compile caches are (vLLM's torch.compile
// cache, TorchInductor's and Triton's), re-measured at most every few seconds
// since a walk of a large cache is not free. A cache that grows while the log
// is silent says torch.compile is working; an empty one says it is not.
// Which directories to watch is data (rules/stall.yaml, cache_dirs).
#ifndef FAULTLINE_PROBE_LIVE_CACHE_H_
#define FAULTLINE_PROBE_LIVE_CACHE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "probe/live_clock.h"

namespace faultline::probe {

struct CacheDirState {
  std::string name;  // "torch_compile", "inductor", "triton", ...
  std::string path;  // expanded
  bool exists = false;
  int64_t files = 0;
  int64_t bytes = 0;
  bool truncated = false;  // the walk stopped at the entry cap
};

// Expands "~", "$VAR" and "${VAR}" (unset variables expand to ""; a path
// whose variable is unset and has no fallback is dropped by the caller).
std::string ExpandPath(const std::string& pattern, bool* all_vars_set = nullptr);

class CacheDirWatcher {
 public:
  struct Dir {
    std::string name;
    std::string path;  // unexpanded pattern
  };
  CacheDirWatcher(std::vector<Dir> dirs, Clock* clock, double every_seconds = 5.0, int64_t max_entries = 50000);
  // Re-walks the directories when every_seconds have passed since the last
  // walk, and returns the latest states.
  const std::vector<CacheDirState>& Poll();

 private:
  std::vector<CacheDirState> states_;
  Clock* clock_;
  double every_;
  int64_t max_entries_;
  double last_ = -1e18;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_CACHE_H_
