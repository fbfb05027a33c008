// ProcessTreeSampler: samples every process of one or more process trees from
// /proc, cheaply enough to run once a second beside a GPU job.
//
// Membership is sticky: a process seen in the tree stays in it while it lives,
// even after it is re-parented (to a subreaper or init) — so a worker whose
// launcher died is still watched. New children are found through
// /proc/PID/task/PID/children every sample and through a full /proc scan every
// few samples (children forked by other threads). Expensive reads (thread
// detail, /proc/PID/maps) are bounded and spaced out; see Options.
// Thread-safety: not thread-safe.
#ifndef FAULTLINE_PROBE_PROC_TREE_H_
#define FAULTLINE_PROBE_PROC_TREE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "probe/proc_fs.h"
#include "probe/proc_sample.h"

namespace faultline::probe {

class ProcessTreeSampler {
 public:
  struct Options {
    std::vector<std::string> weight_extensions = {".safetensors", ".bin", ".pt", ".pth", ".gguf"};
    int max_threads_detail = 64;  // per process, per sample
    int max_fds = 2048;           // per process, per sample
    int full_scan_every = 5;      // samples between full /proc scans
    int maps_every = 10;          // samples between /proc/PID/maps reads
    // Samples between detailed reads (every fd's target, thread states and
    // wait channels, TCP states). In between, those are carried over and only
    // the read offsets of the weight files already seen are re-read. A new
    // process always gets a detailed first read.
    int detail_every = 5;
  };

  ProcessTreeSampler(ProcFs* fs, Options options);
  explicit ProcessTreeSampler(ProcFs* fs) : ProcessTreeSampler(fs, Options()) {}

  // Adds a root; its descendants are found on the next Sample().
  void AddRoot(int64_t pid);
  // Samples every living member. Roots that are gone are left out.
  // detail: force a detailed read of every member (e.g. before classifying).
  TreeSample Sample(bool detail = false);
  // Members currently known (pid, start time) — for the stopper to kill.
  std::vector<std::pair<int64_t, uint64_t>> Members() const;

 private:
  struct Member {
    uint64_t start_time_ticks = 0;
    int depth = 0;
    std::string cmdline;  // read once
    int maps_countdown = 0;
    std::vector<WeightFile> mapped;  // from the last maps read
    bool detailed = false;           // had a detailed read
    uint64_t last_rchar = 0;
    // Carried over between detailed reads:
    std::vector<std::pair<std::string, WeightFile>> weight_fds;  // fd -> file
    std::map<std::string, char> fd_kinds;                        // fd -> 'w' weight file, 's' socket, 'o' other
    int sockets = 0, tcp_listening = 0, tcp_connecting = 0, tcp_established = 0;
    ThreadStates threads;
  };
  static Member NewMember(uint64_t start_time_ticks, int depth) {
    Member m;
    m.start_time_ticks = start_time_ticks;
    m.depth = depth;
    return m;
  }
  bool IsWeightFile(const std::string& path) const;
  void Discover(int64_t pid, int depth, std::vector<int64_t>* queue);
  void FullScan();
  bool SampleOne(int64_t pid, Member& m, bool detail, ProcessSample* out, std::vector<uint64_t>* socket_inodes);
  void ReadFds(int64_t pid, Member& m, ProcessSample* out, std::vector<uint64_t>* inodes);
  void ReadWeightOffsets(int64_t pid, Member& m, ProcessSample* out);
  char ReadFd(int64_t pid, const std::string& fd, Member& m, ProcessSample* out, std::vector<uint64_t>* inodes);
  void ReadThreads(int64_t pid, ProcessSample* out);
  void ReadMaps(int64_t pid, Member& m);
  int64_t CachedSize(const std::string& path);

  ProcFs* fs_;
  Options options_;
  std::set<int64_t> roots_;
  std::map<int64_t, Member> members_;
  std::map<std::string, int64_t> sizes_;
  int samples_ = 0;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_PROC_TREE_H_
