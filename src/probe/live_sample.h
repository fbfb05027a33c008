// LiveSample: everything one tick of the live sampler saw — the process tree,
// the log, the compile caches and the GPUs — at one moment.
#ifndef FAULTLINE_PROBE_LIVE_SAMPLE_H_
#define FAULTLINE_PROBE_LIVE_SAMPLE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "probe/live_cache.h"
#include "probe/live_gpu.h"
#include "probe/live_log.h"
#include "probe/proc_sample.h"

namespace faultline::probe {

struct LiveSample {
  double time = 0;  // monotonic seconds
  int64_t wall_millis = 0;
  TreeSample tree;
  std::optional<LogState> log;
  std::vector<CacheDirState> caches;
  GpuUsage gpu;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_SAMPLE_H_
