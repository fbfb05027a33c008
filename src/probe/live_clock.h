// Clock: the time seam of the live sampler and supervisor. RealClock reads
// CLOCK_MONOTONIC (for intervals) and the wall clock (for records); FakeClock
// is advanced by tests.
#ifndef FAULTLINE_PROBE_LIVE_CLOCK_H_
#define FAULTLINE_PROBE_LIVE_CLOCK_H_

#include <cstdint>

namespace faultline::probe {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual double MonotonicSeconds() = 0;
  virtual int64_t WallMillis() = 0;  // since the Unix epoch
};

// Process-wide real clock; never null, never freed.
Clock* RealClock();

class FakeClock : public Clock {
 public:
  double MonotonicSeconds() override { return now_; }
  int64_t WallMillis() override { return 1'700'000'000'000 + static_cast<int64_t>(now_ * 1000); }
  void Advance(double seconds) { now_ += seconds; }

 private:
  double now_ = 1000.0;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_CLOCK_H_
