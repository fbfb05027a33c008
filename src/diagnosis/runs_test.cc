#include "diagnosis/runs.h"

#include <gtest/gtest.h>

#include "rules/rule_loader.h"

namespace faultline::diagnosis {
namespace {

std::unique_ptr<rules::RuleSet> TestRules() {
  auto rules = rules::ParseRuleFile(R"(
rules:
  - id: t.child-failed
    kind: cascade
    summary: true
    run_end: true
    pattern: 'failed \(exitcode: -?\d+\) local_rank: \d+'
    reason: 'a run of the worker group ended'
    samples: {match: ['E1202 02:56:20.446000 496 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) local_rank: 1 (pid: 549) of binary: /bin/python']}
  - id: t.init
    kind: phase
    phase: distributed-init
    pattern: 'Initializing TorchBackend'
    samples: {match: ['[INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl']}
  - id: t.stop
    kind: stop
    pattern: 'death signal'
    reason: 'SIGTERM'
    samples: {match: ['W1202 02:57:33.506000 496 torch/distributed/elastic/agent/server/api.py:739] Received 15 death signal, shutting down workers']}
)",
                                    "t.yaml");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return std::move(*rules::RuleSet::Build(std::move(*rules)));
}

events::LineInfo At(int64_t line, std::string text = "") { return events::LineInfo{0, line, std::move(text), -1}; }

events::Event RunEnd(int64_t line, const std::string& agent) {
  events::Event e;
  e.where = At(line, "E1202 02:56:20.446000 " + agent +
                         " torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) local_rank: 1 "
                         "(pid: 549) of binary: /bin/python");
  e.message = "failed (exitcode: 1) local_rank: 1 (pid: 549) of binary: /bin/python";
  e.process.pid = std::stoll(agent);  // what the parser reads from the glog header
  e.matches.push_back(events::RuleMatch{0, {}, line});
  return e;
}

events::Event Error(int64_t line, const std::string& message) {
  events::Event e;
  e.where = At(line, message);
  e.message = message;
  return e;
}

TEST(RunsTest, OneRunEndIsNoRelaunch) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Error(10, "IndexError: index 5 is out of bounds"));
  f.events.push_back(RunEnd(20, "496"));
  f.events.push_back(Error(30, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "));
  EXPECT_FALSE(LastRunStart(f, *rules));
  EXPECT_FALSE(KeepLastRun(*rules, &f));
  EXPECT_EQ(f.events.size(), 3u);
}

TEST(RunsTest, TheSameAgentEndingAgainMakesTheLastRunDecide) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Error(10, "IndexError: index 5 is out of bounds"));
  f.events.push_back(RunEnd(20, "496"));
  f.events.push_back(Error(25, "RuntimeError: Gloo connectFullMesh failed"));
  f.events.push_back(RunEnd(40, "496"));
  auto start = LastRunStart(f, *rules);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->line, 21);
  ASSERT_TRUE(KeepLastRun(*rules, &f));
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0].message, "RuntimeError: Gloo connectFullMesh failed");
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("line 21"), std::string::npos);
}

TEST(RunsTest, AnotherAgentEndingIsNoRelaunch) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(RunEnd(20, "496"));  // node 0's agent
  f.events.push_back(RunEnd(40, "811"));  // node 1's agent, same run
  EXPECT_FALSE(LastRunStart(f, *rules));
}

TEST(RunsTest, TheSameAgentStoppedLaterDropsTheEarlierRunsCrashAndStops) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Error(10, "RuntimeError: shape '[3, -1]' is invalid"));
  f.events.push_back(RunEnd(20, "496"));
  StopHit early;
  early.where = At(15, "W1202 02:56:19.000000 496 torch/distributed/elastic/agent/server/api.py:739] Received 2 death signal");
  early.process.pid = 496;
  f.stops.push_back(early);
  StopHit stop;
  stop.where = At(60, "W1202 02:57:33.506000 496 torch/distributed/elastic/agent/server/api.py:739] Received 15 death signal");
  stop.process.pid = 496;
  f.stops.push_back(stop);
  ProgressMark old;
  old.where = At(8, "[rank 0] step 5/50");
  f.last_progress["[rank0]"] = old;
  PhaseHit init;  // first reached in run 1, reached again in run 2
  init.phase = "distributed-init";
  init.rule = 1;
  init.where = At(3);
  init.last = At(45);
  f.phases.push_back(init);
  PhaseHit gone = init;  // only in run 1
  gone.phase = "weight-loading";
  gone.last = At(5);
  f.phases.push_back(gone);
  ASSERT_TRUE(KeepLastRun(*rules, &f));
  EXPECT_TRUE(f.events.empty());
  ASSERT_EQ(f.stops.size(), 1u);
  EXPECT_EQ(f.stops[0].where.line, 60);
  EXPECT_TRUE(f.last_progress.empty());
  ASSERT_EQ(f.phases.size(), 1u);
  EXPECT_EQ(f.phases[0].phase, "distributed-init");
  EXPECT_EQ(f.phases[0].where.line, 45);
}

TEST(RunsTest, APhaseReachedAgainAfterALaunchersEndIsARelaunch) {
  auto rules = TestRules();
  Findings f;
  events::Event end = Error(100, "[ERROR] [launch.py:325:sigkill_handler] [...] exits with return code = -6");
  end.matches.push_back(events::RuleMatch{0, {}, 100});
  f.events.push_back(Error(90, "Watchdog caught collective operation timeout"));
  f.events.push_back(end);
  PhaseHit init;
  init.phase = "distributed-init";
  init.rule = 1;
  init.where = At(40);
  init.last = At(200);
  f.phases.push_back(init);
  auto start = LastRunStart(f, *rules);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->line, 101);
  // The same phase marked only before the end is no second run.
  f.phases[0].last = At(60);
  EXPECT_FALSE(LastRunStart(f, *rules));
  // A generic counter's mark after it is no run of the launcher's own.
  f.phases[0].last = At(200);
  f.phases[0].generic = true;
  EXPECT_FALSE(LastRunStart(f, *rules));
}

}  // namespace
}  // namespace faultline::diagnosis
