// Monitor on a fake /proc and a fake clock: progress resets the stall timer,
// CPU time alone does not.
#include "supervise/monitor.h"

#include <gtest/gtest.h>

#include "probe/proc_fs_fake.h"

namespace faultline::supervise {
namespace {

std::string Stat(int64_t pid, char state, int64_t ppid, uint64_t utime) {
  return std::to_string(pid) + " (python3) " + state + " " + std::to_string(ppid) + " " + std::to_string(pid) +
         " 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " 0 0 0 20 0 1 0 5000 0 100 0\n";
}

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rules = BuiltinStallRules();
    ASSERT_TRUE(rules.ok());
    rules_ = *rules;
    SetProcess('R', 0, 0);
  }
  void SetProcess(char state, uint64_t utime, uint64_t read_bytes) {
    fs_.SetFile("/proc/42/stat", Stat(42, state, 1, utime));
    fs_.SetFile("/proc/42/status", "VmRSS:\t1000 kB\nThreads:\t1\n");
    fs_.SetFile("/proc/42/io", "rchar: 0\nwchar: 0\nread_bytes: " + std::to_string(read_bytes) + "\nwrite_bytes: 0\n");
    fs_.SetFile("/proc/42/cmdline", std::string("python3") + '\0' + "spin.py" + '\0');
  }
  StallRules rules_;
  probe::FakeProcFs fs_;
  probe::FakeClock clock_;
  probe::NoGpuSource gpu_;
};

TEST_F(MonitorTest, BusyLoopStallsAfterStallAfter) {
  MonitorOptions options;
  options.roots = {42};
  options.stall_after_seconds = 5;
  options.watch_caches = false;
  Monitor m(rules_, &fs_, &clock_, &gpu_, options);
  for (int i = 0; i < 5; ++i) {
    SetProcess('R', 100 * i, 0);  // 100% CPU (100 ticks per second)
    m.Tick();
    EXPECT_FALSE(m.Stalled()) << i;
    clock_.Advance(1);
  }
  SetProcess('R', 500, 0);
  m.Tick();
  EXPECT_TRUE(m.Stalled());
  EXPECT_EQ(m.CpuPercent().at(42), 100);
  StallDiagnosis d = m.DiagnoseStall();
  EXPECT_EQ(d.class_id, "busy-spin");
  EXPECT_DOUBLE_EQ(d.stalled_for_seconds, 5);
}

TEST_F(MonitorTest, ReadingResetsTheStallTimer) {
  MonitorOptions options;
  options.roots = {42};
  options.stall_after_seconds = 3;
  options.watch_caches = false;
  Monitor m(rules_, &fs_, &clock_, &gpu_, options);
  m.Tick();
  for (int i = 1; i < 10; ++i) {
    clock_.Advance(1);
    SetProcess('D', 0, static_cast<uint64_t>(i) * (16 << 20));  // 16 MiB/s from storage
    m.Tick();
    EXPECT_FALSE(m.Stalled()) << i;
    EXPECT_EQ(m.last_progress()[0], "read +16.0 MiB");
  }
}

TEST_F(MonitorTest, TheRootExitingCountsAsAChange) {
  MonitorOptions options;
  options.roots = {42};
  options.watch_caches = false;
  Monitor m(rules_, &fs_, &clock_, &gpu_, options);
  m.Tick();
  clock_.Advance(1);
  fs_.RemoveTree("/proc/42");
  m.Tick();
  EXPECT_TRUE(m.last().tree.processes.empty());
  EXPECT_EQ(m.last_progress()[0], "processes changed");
}

}  // namespace
}  // namespace faultline::supervise
