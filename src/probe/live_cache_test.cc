#include "probe/live_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace faultline::probe {
namespace {

TEST(ExpandPathTest, HomeAndVariables) {
  setenv("HOME", "/home/u", 1);
  setenv("FL_TEST_USER", "alice", 1);
  unsetenv("FL_TEST_UNSET");
  EXPECT_EQ(ExpandPath("~/.cache/vllm"), "/home/u/.cache/vllm");
  EXPECT_EQ(ExpandPath("/tmp/torchinductor_$FL_TEST_USER"), "/tmp/torchinductor_alice");
  EXPECT_EQ(ExpandPath("${FL_TEST_USER}/x"), "alice/x");
  bool all_set = true;
  EXPECT_EQ(ExpandPath("$FL_TEST_UNSET/triton", &all_set), "/triton");
  EXPECT_FALSE(all_set);
}

TEST(CacheDirWatcherTest, MeasuresAndRemeasuresOnlyWhenDue) {
  auto dir = std::filesystem::temp_directory_path() / ("live_cache_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "a" / "b");
  { std::ofstream(dir / "a" / "b" / "kernel.so") << std::string(1000, 'x'); }
  FakeClock clock;
  CacheDirWatcher watcher({{"inductor", dir.string()}, {"missing", (dir / "nope").string()}}, &clock, 5.0);
  auto states = watcher.Poll();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_TRUE(states[0].exists);
  EXPECT_EQ(states[0].files, 1);
  EXPECT_EQ(states[0].bytes, 1000);
  EXPECT_FALSE(states[1].exists);
  { std::ofstream(dir / "a" / "more.py") << std::string(24, 'y'); }
  EXPECT_EQ(watcher.Poll()[0].bytes, 1000);  // not due yet
  clock.Advance(5);
  EXPECT_EQ(watcher.Poll()[0].bytes, 1024);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace faultline::probe
