#include "probe/live_clock.h"

#include <time.h>

namespace faultline::probe {
namespace {

class RealClockImpl : public Clock {
 public:
  double MonotonicSeconds() override {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  int64_t WallMillis() override {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
  }
};

}  // namespace

Clock* RealClock() {
  static RealClockImpl* clock = new RealClockImpl();
  return clock;
}

}  // namespace faultline::probe
