// What one look at one process of a watched tree shows: the raw, cumulative
// counters (CPU time, bytes read) as read from /proc. Rates and progress are
// computed by whoever keeps two samples (supervise/progress.h).
#ifndef FAULTLINE_PROBE_PROC_SAMPLE_H_
#define FAULTLINE_PROBE_PROC_SAMPLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/proc_parse.h"

namespace faultline::probe {

// A weight file the process has open (fd) or mapped (mmap, as safetensors
// does). pos is the read offset of the fd, -1 when only mapped.
struct WeightFile {
  std::string path;
  int64_t size = 0;
  int64_t pos = -1;
  bool mapped = false;
};

// Where the process's threads are. wchan is what /proc/PID/task/TID/wchan
// says for sleeping threads; "0" (a running thread) is not counted, since it
// means nothing on its own.
struct ThreadStates {
  bool sampled = false;  // false when thread detail was not read this time
  int running = 0;
  int sleeping = 0;
  int disk = 0;  // state D, uninterruptible
  int other = 0;
  std::map<std::string, int> wchan;  // e.g. {"futex_wait_queue": 40, "do_epoll_wait": 2}
};

struct ProcessSample {
  int64_t pid = 0;
  int64_t ppid = 0;
  int64_t pgrp = 0;
  uint64_t start_time_ticks = 0;
  int depth = 0;  // 0 for a root of the tree
  std::string comm;
  std::string cmdline;
  char state = '?';
  double cpu_seconds = 0;  // user + system since start
  int64_t rss_bytes = 0;
  int64_t rss_file_bytes = 0;
  int64_t threads = 0;
  std::optional<ProcIo> io;  // absent when /proc/PID/io is not readable
  int open_fds = 0;
  std::vector<WeightFile> weight_files;
  int sockets = 0;
  int tcp_listening = 0;
  int tcp_connecting = 0;  // SYN_SENT: a rendezvous peer that is not there yet
  int tcp_established = 0;
  ThreadStates thread_states;
};

struct TreeSample {
  std::vector<ProcessSample> processes;  // roots first, then descendants
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_PROC_SAMPLE_H_
