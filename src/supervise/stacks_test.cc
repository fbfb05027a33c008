// Stack dumps as faulthandler and py-spy print them, read into frames, the
// phase of each process (rules/stall.yaml stack_phases) and the groups.
// The GPU fixtures (tests/fixtures/gpu/*/stacks/) are real faulthandler
// dumps of PyTorch jobs captured by `faultline run` on an H200.
#include "supervise/stacks.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "supervise/kernel_evidence.h"
#include "supervise/stall_rules.h"

namespace faultline::supervise {
namespace {

const char kFaulthandler[] = R"(faultline-stacks pid=41 argv=['job.py']
Thread 0x00007f2b1e7fc640 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Current thread 0x00007f2b2a6b8740 (most recent call first):
  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 4162 in barrier
  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/work/job.py", line 12 in main
  File "/work/job.py", line 20 in <module>
)";

const char kPySpy[] = R"(Process 77: python3 job.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 77 (idle): "MainThread"
    read (job.py:8)
    load (torch/serialization.py:1025)
    load_weights (job.py:14)
    <module> (job.py:30)
)";

TEST(StacksTest, ParsesFaulthandlerAndFindsTheMainThread) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  ProcessStacks p;
  p.pid = 41;
  p.rank = "3";
  p.threads = ParseStackDump(kFaulthandler);
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.threads[1].frames.size(), 4u);
  ReadProcessPhase(rules->stack_phases, &p);
  EXPECT_EQ(p.main_thread, 1);
  EXPECT_EQ(p.where, "barrier");
  EXPECT_EQ(p.innermost, "barrier (torch/distributed/distributed_c10d.py:4162)");
  EXPECT_EQ(p.phase, "distributed-init");
}

TEST(StacksTest, ParsesPySpyAndReadsWeightLoadingBelowTheUsersReader) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  ProcessStacks p;
  p.threads = ParseStackDump(kPySpy);
  ASSERT_EQ(p.threads.size(), 1u);
  ReadProcessPhase(rules->stack_phases, &p);
  EXPECT_EQ(p.where, "read");
  EXPECT_EQ(p.phase, "weight-loading");
  EXPECT_EQ(p.phase_frame, "load (serialization.py:1025)");
}

TEST(StacksTest, GroupsRanksAndNamesTheStragglersPhase) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  StackReport r;
  for (int rank = 0; rank < 4; ++rank) {
    ProcessStacks p;
    p.pid = 100 + rank;
    p.rank = std::to_string(rank);
    p.threads = ParseStackDump(rank == 3 ? kPySpy : kFaulthandler);
    ReadProcessPhase(rules->stack_phases, &p);
    r.processes.push_back(p);
  }
  SummarizeStacks(rules->stack_phases, &r);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].substr(0, 32), "ranks 0-2 (pids 100,101,102) in ");
  EXPECT_NE(r.groups[1].find("rank 3 (pid 103) in read()"), std::string::npos);
  // Rank 3 loads weights while the others wait for it in a barrier.
  EXPECT_EQ(r.phase, "weight-loading");
  EXPECT_EQ(r.class_id, "weight-loading");
  EXPECT_NE(StacksText(r).find("phase from the stacks: weight-loading"), std::string::npos);
}

TEST(StacksTest, NoFramesNoPhase) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  ProcessStacks p;
  p.threads = ParseStackDump("garbage\n  File nowhere\n");
  ReadProcessPhase(rules->stack_phases, &p);
  EXPECT_TRUE(p.threads.empty());
  EXPECT_EQ(p.phase, "");
}

// Every recorded GPU case: the phase read from its real stacks is the one
// the case was built to reach (the directory name says which).
TEST(StacksTest, GpuFixturesNameTheirPhase) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  std::string root = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/gpu";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no GPU fixtures";
  int cases = 0;
  for (const auto& dir : std::filesystem::directory_iterator(root)) {
    std::ifstream expect_file(dir.path() / "expected_phase");
    if (!expect_file) continue;
    std::string expected;
    expect_file >> expected;
    StackReport r;
    for (const auto& f : std::filesystem::directory_iterator(dir.path() / "stacks")) {
      std::ifstream in(f.path());
      std::stringstream ss;
      ss << in.rdbuf();
      ProcessStacks p;
      p.pid = std::atoll(f.path().stem().c_str());
      p.threads = ParseStackDump(ss.str());
      ReadProcessPhase(rules->stack_phases, &p);
      r.processes.push_back(p);
    }
    SummarizeStacks(rules->stack_phases, &r);
    EXPECT_EQ(r.phase, expected) << dir.path() << "\n" << StacksText(r);
    ++cases;
  }
  EXPECT_GE(cases, 1);
}

}  // namespace
}  // namespace faultline::supervise

namespace faultline::supervise {
namespace {

std::string Kmsg() {
  std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/kmsg/memcg-oom.kmsg");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(KernelLogTest, FindsTheOomKillOfThePid) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  KernelEvidence ev = MatchKernelLog(rules->kernel_messages, Kmsg(), 15360, 3000.0);
  EXPECT_EQ(ev.explain, "killed by the OOM killer");
  ASSERT_EQ(ev.lines.size(), 2u);
  EXPECT_NE(ev.lines[1].find("anon-rss:48896kB"), std::string::npos);
}

TEST(KernelLogTest, IgnoresOtherPidsAndOlderRecords) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(MatchKernelLog(rules->kernel_messages, Kmsg(), 1536, 3000.0).lines.empty());
  // Logged at 3090.08 s since boot: a job started later cannot be its victim.
  EXPECT_TRUE(MatchKernelLog(rules->kernel_messages, Kmsg(), 15360, 3100.0).lines.empty());
}

}  // namespace
}  // namespace faultline::supervise
