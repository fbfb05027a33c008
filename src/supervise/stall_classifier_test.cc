// Stall classes on windows of samples shaped like the situations they name,
// including the seed's (four workers at 100% CPU in R, 1.5 GB RSS each, GPU
// memory flat at 716 MiB, log frozen at 70 lines, empty compile caches).
#include "supervise/stall_classifier.h"

#include <gtest/gtest.h>

#include "supervise/feature_extractor.h"

namespace faultline::supervise {
namespace {

using probe::LiveSample;
using probe::ProcessSample;

constexpr int64_t kMiB = 1 << 20;

ProcessSample Proc(int64_t pid, int depth, char state, double cpu_seconds, int64_t rss = 1536 * kMiB) {
  ProcessSample p;
  p.pid = pid;
  p.start_time_ticks = 1000 + pid;
  p.depth = depth;
  p.comm = depth == 0 ? "vllm" : "VllmWorker";
  p.cmdline = depth == 0 ? "vllm serve /models/Qwen3.6-27B --tensor-parallel-size 2 --data-parallel-size 2" : "python3";
  p.state = state;
  p.cpu_seconds = cpu_seconds;
  p.rss_bytes = rss;
  p.io = probe::ProcIo{};
  p.thread_states.sampled = true;
  if (state == 'R') p.thread_states.running = 1;
  if (state == 'S') p.thread_states.sleeping = 1;
  if (state == 'D') p.thread_states.disk = 1;
  return p;
}

class ClassifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rules = BuiltinStallRules();
    ASSERT_TRUE(rules.ok()) << rules.status().message();
    rules_ = *rules;
  }

  // Ten samples, one per second; `make(i)` builds sample i's processes.
  template <typename F>
  StallDiagnosis Run(F make, const std::vector<std::string>& log_tail, probe::GpuUsage gpu = {},
                     std::vector<probe::CacheDirState> caches_first = {},
                     std::vector<probe::CacheDirState> caches_last = {}) {
    samples_.clear();
    for (int i = 0; i < 10; ++i) {
      LiveSample s;
      s.time = 100 + i;
      s.tree.processes = make(i);
      probe::LogState log;
      log.exists = true;
      log.lines = 70;
      log.tail.assign(log_tail.begin(), log_tail.end());
      log.last_line = log_tail.empty() ? "" : log_tail.back();
      log.last_output_time = 40;
      s.log = log;
      s.gpu = gpu;
      s.caches = i == 0 ? caches_first : caches_last;
      samples_.push_back(s);
    }
    std::vector<const LiveSample*> window;
    for (const auto& s : samples_) window.push_back(&s);
    FeatureExtractor extractor(rules_);
    extractor.set_py_spy(false);
    features_ = extractor.Compute(window, 110);
    return Classify(rules_, features_);
  }

  StallRules rules_;
  std::vector<LiveSample> samples_;
  FeatureSet features_;
};

const std::vector<std::string> kNcclTail = {
    "(EngineCore_DP0 pid=164) INFO 01-23 15:48:36 [core.py:644] Waiting for init message from front-end.",
    "[Gloo] Rank 0 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1"};

TEST_F(ClassifierTest, SeedBusySpinWithoutGpuData) {
  probe::GpuUsage none;
  none.note = "NVML not available";
  auto d = Run(
      [](int i) {
        return std::vector<ProcessSample>{Proc(10, 0, 'S', 5), Proc(11, 1, 'R', 100 + i), Proc(12, 1, 'R', 200 + i),
                                          Proc(13, 1, 'R', 300 + i), Proc(14, 1, 'R', 400 + i)};
      },
      kNcclTail, none);
  EXPECT_EQ(d.class_id, "busy-spin");
  EXPECT_EQ(features_.Number("busy_processes"), 4);
  EXPECT_EQ(features_.Number("max_cpu_percent"), 100);
  bool caveat = false, dp = false, eager = false, pyspy = false;
  for (const auto& e : d.evidence) caveat |= e.find("torch.cuda.synchronize()") != std::string::npos;
  for (const auto& s : d.suggestions) {
    dp |= s.find("--data-parallel-size 1") != std::string::npos;
    eager |= s.find("--enforce-eager") != std::string::npos;
    pyspy |= s.find("py-spy dump --pid 11") != std::string::npos;
  }
  EXPECT_TRUE(caveat);
  EXPECT_TRUE(dp);
  EXPECT_TRUE(eager);
  EXPECT_TRUE(pyspy);
  EXPECT_EQ(d.last_phase, "distributed-init");
}

TEST_F(ClassifierTest, SeedWithGpuIdleIsBusySpinAndWithGpuBusyIsNot) {
  probe::GpuUsage gpu;
  gpu.available = true;
  gpu.source = "fake";
  gpu.devices = {{0, 716 * kMiB, 49140 * kMiB, 0}, {1, 716 * kMiB, 49140 * kMiB, 0}};
  auto spin = [](int i) { return std::vector<ProcessSample>{Proc(10, 0, 'R', 100 + i)}; };
  EXPECT_EQ(Run(spin, kNcclTail, gpu).class_id, "busy-spin");
  gpu.devices[0].utilization_percent = 100;
  auto d = Run(spin, kNcclTail, gpu);
  EXPECT_EQ(d.class_id, "gpu-busy-no-progress");
  EXPECT_FALSE(d.matched.empty());
}

TEST_F(ClassifierTest, ASpinStarvedOfCpuOnALoadedHostIsStillBusySpin) {
  // State R in every sample, but only 40% of a core: the host is overloaded.
  auto d = Run([](int i) { return std::vector<ProcessSample>{Proc(10, 0, 'R', 100 + 0.4 * i)}; }, kNcclTail);
  EXPECT_EQ(d.class_id, "busy-spin");
  EXPECT_EQ(features_.Number("busy_processes"), 1);
}

TEST_F(ClassifierTest, SleepingInARendezvousIsDistributedInit) {
  auto d = Run(
      [](int i) {
        auto p = Proc(10, 0, 'S', 5);
        p.thread_states.wchan["futex_wait_queue"] = 3;
        p.thread_states.wchan["inet_csk_accept"] = 1;
        p.tcp_listening = 1;
        return std::vector<ProcessSample>{p};
      },
      {"(Worker pid=7506) INFO 05-09 15:15:02 [parallel_state.py:1165] world_size=4 rank=3 local_rank=3 "
       "distributed_init_method=tcp://127.0.0.1:45051 backend=nccl"});
  EXPECT_EQ(d.class_id, "distributed-init");
  EXPECT_EQ(features_.Number("socket_wait_threads"), 1);
  EXPECT_EQ(features_.Number("futex_wait_threads"), 3);
}

TEST_F(ClassifierTest, RanksAsleepInACollectiveAfterTrainingStartedIsCollectiveHang) {
  // As measured on the H200 under faultline run: rank 0 blocked in a gloo
  // all_reduce (threads in poll; the kernel names the wait channel with a
  // compiler clone suffix), rank 1 asleep in time.sleep, the launcher idle.
  auto d = Run(
      [](int i) {
        auto launcher = Proc(10, 0, 'S', 2);
        auto waiting = Proc(11, 1, 'S', 5);
        waiting.thread_states.wchan["poll_schedule_timeout.constprop.0"] = 3;
        auto behind = Proc(12, 1, 'S', 5);
        behind.thread_states.wchan["hrtimer_nanosleep"] = 1;
        return std::vector<ProcessSample>{launcher, waiting, behind};
      },
      {"rank 0: process group initialized (gloo, world size 2)", "step 3/100 loss 0.3333"});
  EXPECT_EQ(d.class_id, "collective-hang");
  EXPECT_EQ(features_.Number("poll_wait_threads"), 3);
  EXPECT_EQ(features_.Number("sleep_wait_threads"), 1);
}

TEST_F(ClassifierTest, SlowWeightReadIsWeightLoading) {
  auto d = Run(
      [](int i) {
        auto p = Proc(10, 0, 'S', 1 + 0.1 * i);
        p.weight_files.push_back(
            {"/models/m/model-00001-of-00004.safetensors", 64 * kMiB, (10 + i) * 100 * 1024, false});
        return std::vector<ProcessSample>{p};
      },
      {"(EngineCore_DP0 pid=164) INFO 01-23 15:48:47 [gpu_model_runner.py:2602] Starting to load model /models/m..."});
  EXPECT_EQ(d.class_id, "weight-loading");
  EXPECT_NEAR(features_.Number("weight_read_rate"), 100 * 1024, 1);
  EXPECT_NE(d.explanation.find("model-00001-of-00004.safetensors"), std::string::npos) << d.explanation;
}

TEST_F(ClassifierTest, StateDIsUninterruptibleIo) {
  auto d = Run([](int i) { return std::vector<ProcessSample>{Proc(10, 0, 'D', 1)}; }, {});
  EXPECT_EQ(d.class_id, "uninterruptible-io");
}

TEST_F(ClassifierTest, CompileWorkersOrGrowingCacheIsTorchCompile) {
  auto d = Run(
      [](int i) {
        auto w = Proc(20, 1, 'R', 10 + i);
        w.comm = "python3";
        w.cmdline = "/usr/bin/python3 -m torch._inductor.compile_worker --pickler=... --workers=32";
        return std::vector<ProcessSample>{Proc(10, 0, 'R', 10 + i), w};
      },
      {"(EngineCore_DP0 pid=164) INFO 01-23 15:49:11 [backends.py:559] Dynamo bytecode transform time: 3.29 s"});
  EXPECT_EQ(d.class_id, "torch-compile");
  EXPECT_EQ(features_.Number("compile_workers"), 1);
  probe::CacheDirState before{"inductor", "/tmp/torchinductor_root", true, 10, 1000, false};
  probe::CacheDirState after = before;
  after.bytes = 5000;
  d = Run([](int i) { return std::vector<ProcessSample>{Proc(10, 0, 'R', 10 + i)}; }, {}, {}, {before}, {after});
  EXPECT_EQ(d.class_id, "torch-compile");
}

TEST_F(ClassifierTest, QuietProcessWithNothingElseIsUnknown) {
  auto d = Run([](int i) { return std::vector<ProcessSample>{Proc(10, 0, 'S', 1)}; }, {"hello"});
  EXPECT_EQ(d.class_id, "unknown");
  EXPECT_FALSE(d.suggestions.empty());
}

}  // namespace
}  // namespace faultline::supervise
