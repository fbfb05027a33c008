#include "supervise/log_phase.h"

#include <gtest/gtest.h>

namespace faultline::supervise {
namespace {

LogPhase Builtin() { return LogPhase(LogPhase::BuiltinPhaseRules(), BuiltinStallRules()->phase_markers); }

// Lines printed by a real PyTorch job on the H200 (tests/fixtures/gpu and the
// device run of the session's closing note): a counter that triage's generic
// progress rule reads as training.
TEST(LogPhaseTest, AGenericStepCounterIsTrainingOnceItRises) {
  LogPhase phases = Builtin();
  EXPECT_EQ(phases.PhaseOf({"step 0 loss -0.0189"}), "");
  EXPECT_EQ(phases.PhaseOf({"step 0 loss -0.0189", "step 1 loss -0.0189", "step 2 loss -0.0189"}), "training");
}

TEST(LogPhaseTest, TheLastMarkedLineWins) {
  LogPhase phases = Builtin();
  std::deque<std::string> tail = {
      "(EngineCore_DP0 pid=164) INFO 01-23 15:48:47 [gpu_model_runner.py:2634] Loading model from scratch...",
      "(Worker_TP0 pid=371) Loading safetensors checkpoint shards:   0% Completed | 0/17 [00:00<?, ?it/s]",
      "some unrelated line"};
  EXPECT_EQ(phases.PhaseOf(tail), "weight-loading");
  tail.push_back("(APIServer pid=1) INFO:     Application startup complete.");
  EXPECT_EQ(phases.PhaseOf(tail), "ready");
}

// A triage phase rule that stall.yaml's live markers never had.
TEST(LogPhaseTest, TriagePhaseRulesCountLive) {
  LogPhase phases = Builtin();
  EXPECT_EQ(phases.PhaseOf({"Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2"}), "distributed-init");
  LogPhase live_only({}, BuiltinStallRules()->phase_markers);
  EXPECT_EQ(live_only.PhaseOf({"Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2"}), "");
}

TEST(LogPhaseTest, NoMarkerNoPhase) {
  LogPhase phases = Builtin();
  EXPECT_EQ(phases.PhaseOf({}), "");
  EXPECT_EQ(phases.PhaseOf({"hello", "world"}), "");
}

}  // namespace
}  // namespace faultline::supervise
