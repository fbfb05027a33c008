// Triage reports of a run's logs, computed on one background thread and kept
// until the log changes, so the HTTP threads never wait for a diagnosis: Get
// answers at once with the last report (or null while the first one runs).
// A log that keeps growing is re-triaged at most every `min_interval_s`.
#ifndef FAULTLINE_WEB_TRIAGE_CACHE_H_
#define FAULTLINE_WEB_TRIAGE_CACHE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace faultline::web {

class TriageCache {
 public:
  explicit TriageCache(double min_interval_s = 5.0);
  ~TriageCache();
  TriageCache(const TriageCache&) = delete;
  TriageCache& operator=(const TriageCache&) = delete;

  struct Entry {
    nlohmann::json report = nullptr;  // faultline.triage/1, or {"error": "..."} when it failed
    bool pending = false;             // a (re)computation is queued or running
    int64_t bytes = -1;               // log size the report is of
  };
  // The report for `log_path` at `bytes` (its current size); queues a new
  // triage when the cached one is older and none ran in the last interval.
  Entry Get(const std::string& log_path, int64_t bytes);
  // Blocks until nothing is queued or running (tests).
  void WaitIdle();
  uint64_t generation() const;  // bumped whenever a report is stored

 private:
  void Work();

  double min_interval_s_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, double> last_run_;  // monotonic seconds of the last start
  std::deque<std::pair<std::string, int64_t>> queue_;
  bool running_ = false;
  bool stop_ = false;
  uint64_t generation_ = 0;
  std::thread worker_;
};

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_TRIAGE_CACHE_H_
