// LogFollower: follows a log file that another process is writing, like
// `tail -F`: new bytes are read with read() from where the last poll stopped,
// a rotated file (new inode at the path) is drained and then followed from its
// start, a truncated file is re-read from offset 0. Keeps only the last few
// lines and the partial line being written, so memory is bounded whatever the
// log's size. Both "\n" and "\r" end a line (tqdm progress bars rewrite one
// line with "\r"); only "\n" counts towards line numbers.
// Thread-safety: not thread-safe.
#ifndef FAULTLINE_PROBE_LIVE_LOG_H_
#define FAULTLINE_PROBE_LIVE_LOG_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "probe/live_clock.h"

namespace faultline::probe {

struct LogState {
  std::string path;
  bool exists = false;
  int64_t bytes = 0;                       // read so far, over every rotation
  int64_t lines = 0;                       // "\n"-terminated lines so far
  int rotations = 0;                       // rotations and truncations seen
  std::optional<double> last_output_time;  // monotonic time new bytes were last seen
  std::string last_line;                   // last non-empty complete line
  std::deque<std::string> tail;            // last complete lines, oldest first
};

class LogFollower {
 public:
  struct Options {
    size_t tail_lines = 40;
    size_t max_line_bytes = 64 * 1024;     // longer lines are cut
    size_t max_bytes_per_poll = 64 << 20;  // the rest is read next poll
  };

  LogFollower(std::string path, Clock* clock, Options options);
  LogFollower(std::string path, Clock* clock) : LogFollower(std::move(path), clock, Options()) {}
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  // Reads what is new; calls on_line (if set) for each complete line. Returns
  // the number of new bytes.
  int64_t Poll(const std::function<void(std::string_view)>& on_line = nullptr);
  const LogState& state() const { return state_; }

 private:
  int64_t Drain(const std::function<void(std::string_view)>& on_line);
  void Feed(std::string_view data, const std::function<void(std::string_view)>& on_line);
  void EndLine(bool newline, const std::function<void(std::string_view)>& on_line);

  Clock* clock_;
  Options options_;
  LogState state_;
  int fd_ = -1;
  uint64_t inode_ = 0;
  uint64_t dev_ = 0;
  int64_t offset_ = 0;
  std::string partial_;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_LOG_H_
