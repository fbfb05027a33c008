#include "probe/live_log.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace faultline::probe {
namespace {

class LogFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("live_log_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "vllm.log").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Append(const std::string& text) {
    std::ofstream f(path_, std::ios::app | std::ios::binary);
    f << text;
  }
  std::filesystem::path dir_;
  std::string path_;
  FakeClock clock_;
};

TEST_F(LogFollowerTest, MissingFileThenGrowth) {
  LogFollower log(path_, &clock_);
  EXPECT_EQ(log.Poll(), 0);
  EXPECT_FALSE(log.state().exists);
  Append("(EngineCore_DP0 pid=164) INFO 01-23 15:48:47 [gpu_model_runner.py:2602] Starting to load model x...\n");
  Append("partial");
  std::vector<std::string> lines;
  EXPECT_GT(log.Poll([&](std::string_view l) { lines.emplace_back(l); }), 0);
  EXPECT_TRUE(log.state().exists);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(log.state().lines, 1);
  EXPECT_EQ(log.state().last_output_time, clock_.MonotonicSeconds());
  Append(" line\n");
  clock_.Advance(5);
  lines.clear();
  log.Poll([&](std::string_view l) { lines.emplace_back(l); });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "partial line");
  EXPECT_EQ(log.state().last_line, "partial line");
  clock_.Advance(5);
  EXPECT_EQ(log.Poll(), 0);
  EXPECT_EQ(*log.state().last_output_time, clock_.MonotonicSeconds() - 5);
}

TEST_F(LogFollowerTest, CarriageReturnProgressBars) {
  LogFollower log(path_, &clock_);
  Append(
      "Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]\r"
      "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:09<00:09,  9.47s/it]\r");
  log.Poll();
  EXPECT_EQ(log.state().lines, 0);
  EXPECT_EQ(log.state().last_line,
            "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:09<00:09,  9.47s/it]");
}

TEST_F(LogFollowerTest, FollowsRotationAndTruncation) {
  LogFollower log(path_, &clock_);
  Append("one\ntwo\n");
  log.Poll();
  EXPECT_EQ(log.state().lines, 2);
  Append("three\n");
  std::filesystem::rename(path_, path_ + ".1");
  Append("four\n");
  std::vector<std::string> lines;
  log.Poll([&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"three", "four"}));
  EXPECT_EQ(log.state().rotations, 1);
  // Truncated in place (`> vllm.log`), then written again.
  { std::ofstream f(path_, std::ios::trunc); }
  log.Poll();
  Append("five\n");
  lines.clear();
  log.Poll([&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"five"}));
  EXPECT_EQ(log.state().rotations, 2);
  EXPECT_EQ(log.state().lines, 5);
}

TEST_F(LogFollowerTest, TailIsBounded) {
  LogFollower::Options options;
  options.tail_lines = 3;
  options.max_line_bytes = 8;
  LogFollower log(path_, &clock_, options);
  for (int i = 0; i < 10; ++i) Append("line number " + std::to_string(i) + "\n");
  log.Poll();
  ASSERT_EQ(log.state().tail.size(), 3u);
  EXPECT_EQ(log.state().tail.back(), "line num");
  EXPECT_EQ(log.state().lines, 10);
}

}  // namespace
}  // namespace faultline::probe
