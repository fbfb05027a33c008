#include "input/newest_first.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "input/reshape_test_util.h"

namespace faultline::input {
namespace {

// The log through OldestFirst, as triage opens a file.
std::string Reordered(const std::string& log, size_t max_bytes, NewestFirst* how) {
  auto src = OpenByteSource(TempFile("newest_first", log));
  EXPECT_TRUE(src.ok());
  if (!src.ok()) return {};
  auto reordered = OldestFirst(std::move(*src), max_bytes, how);
  EXPECT_TRUE(reordered.ok());
  return reordered.ok() ? Drain(**reordered) : std::string();
}

const char kCloudLogging[] = "sglang-gke-cloud-logging-newest-first-dev-shm-nccl/sglang.log";

TEST(NewestFirstTest, CloudLoggingPasteRunsBackwards) {
  // Google Cloud Logging's newest-first order, verbatim from an issue paste.
  EXPECT_TRUE(LooksNewestFirst(Real(kCloudLogging)));
}

TEST(NewestFirstTest, OrdinaryLogsRunForwards) {
  for (const char* rel : {"vllm-0102-served-then-shutdown-port-in-use-warning/vllm.log",
                          "tgi-oom-loading-70b-2xL40S/tgi.log", "ollama-served-with-generate-500-timeouts/ollama.log",
                          "megatron-deepspeed-176b-hang-at-eval-pulse/train.log"}) {
    std::string log = Real(rel);
    ASSERT_FALSE(log.empty()) << rel;
    EXPECT_FALSE(LooksNewestFirst(log)) << rel;
  }
}

TEST(NewestFirstTest, ReversedFileIsForwards) {
  // The same paste put back in the job's order reads forwards.
  std::string log = Real(kCloudLogging);
  std::vector<std::string> lines = Lines(log);
  std::string forwards;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) forwards += *it + "\n";
  EXPECT_FALSE(LooksNewestFirst(forwards));
}

TEST(NewestFirstTest, TooFewTimesDecideNothing) {
  std::vector<std::string> lines = Lines(Real(kCloudLogging));
  std::string head;
  for (size_t i = 0; i < 6; ++i) head += lines[i] + "\n";
  EXPECT_FALSE(LooksNewestFirst(head));
}

TEST(NewestFirstTest, OldestFirstYieldsTheLinesLastToFirst) {
  std::string log = Real(kCloudLogging);
  NewestFirst how;
  std::vector<std::string> in = Lines(log), out = Lines(Reordered(log, 1 << 20, &how));
  EXPECT_TRUE(how.reversed);
  ASSERT_EQ(in.size(), out.size());
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], in[in.size() - 1 - i]);
}

TEST(NewestFirstTest, OtherLogsPassUnchanged) {
  std::string log = Real("tgi-oom-loading-70b-2xL40S/tgi.log");
  NewestFirst how;
  EXPECT_EQ(Reordered(log, 1 << 20, &how), log);
  EXPECT_FALSE(how.reversed);
}

TEST(NewestFirstTest, OverTheLimitIsReadAsItIs) {
  std::string log = Real(kCloudLogging);
  NewestFirst how;
  EXPECT_EQ(Reordered(log, 1024, &how), log);
  EXPECT_FALSE(how.reversed);
  EXPECT_TRUE(how.too_large);
}

}  // namespace
}  // namespace faultline::input
