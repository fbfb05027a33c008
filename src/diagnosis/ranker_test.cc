#include "diagnosis/ranker.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "rules/rule_loader.h"

namespace faultline::diagnosis {
namespace {

using events::Event;
using events::EventKind;

std::unique_ptr<rules::RuleSet> TestRules() {
  auto rules = rules::ParseRuleFile(R"(
rules:
  - id: t.see-above
    kind: cascade
    pattern: 'See root cause above'
    reason: 'the parent reports a child failure'
    samples: {match: ['RuntimeError: Engine core initialization failed. See root cause above.']}
  - id: t.summary
    kind: cascade
    summary: true
    pattern: 'exitcode\s*:\s*(?P<code>-?\d+)'
    reason: 'launcher summary, exit {code}'
    samples: {match: ['  exitcode  : -9 (pid: 1)']}
  - id: t.dup
    pattern: 'Duplicate GPU detected'
    explanation: x
    fix: y
    samples: {match: ['NCCL WARN Duplicate GPU detected : rank 1']}
  - id: t.generic
    generic: true
    pattern: 'RayTaskError|unhandled system error'
    explanation: x
    fix: y
    samples: {match: ['ray.exceptions.RayTaskError(ValueError): ray::f()']}
  - id: t.ready
    kind: phase
    phase: ready
    pattern: 'Application startup complete'
    samples: {match: ['INFO: Application startup complete.']}
  - id: t.stop
    kind: stop
    pattern: 'KeyboardInterrupt'
    reason: 'Ctrl-C'
    samples: {match: ['KeyboardInterrupt']}
  - id: t.time-limit
    kind: stop
    fatal: true
    pattern: 'DUE TO TIME LIMIT'
    reason: 'time limit'
    samples: {match: ['*** JOB 1 ON n CANCELLED AT 2021-05-27T21:52:36 DUE TO TIME LIMIT ***']}
  - id: t.optional-import
    pattern: 'Failed to import from \S+ with ImportError'
    explains: 'has no attribute'
    explanation: x
    fix: y
    samples: {match: ['Failed to import from vllm._C with ImportError(libtorch_hip.so) at start']}
  - id: t.peer-gone
    kind: cascade
    summary: true
    pattern: 'Connection closed by peer'
    reason: 'a peer exited'
    samples: {match: ['RuntimeError: [/g/pair.cc:547] Connection closed by peer [127.0.0.1]:53142']}
  - id: t.oom-notice
    pattern: 'Detected \d+ oom_kill event'
    explains: '\bKilled\b'
    explanation: x
    fix: y
    samples: {match: ['slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch. Some tasks have been OOM Killed.']}
  - id: t.engine-dead
    kind: cascade
    dead: true
    pattern: 'Got fatal signal from worker processes'
    reason: 'the engine died'
    samples: {match: ['CRITICAL 04-08 04:00:01 [core_client.py:361] Got fatal signal from worker processes, shutting down.']}
  - id: t.exited
    kind: phase
    phase: training
    completes: true
    exit: true
    pattern: 'wandb: Synced \d+ W&B file'
    samples: {match: ['wandb: Synced 5 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)']}
  - id: t.succeeded
    kind: phase
    phase: training
    completes: true
    pattern: '^Successfully completed\.$'
    samples: {match: ['Successfully completed.']}
  - id: t.driver-too-old
    unrecoverable: true
    pattern: 'The NVIDIA driver on your system is too old'
    explanation: e
    fix: f
    samples: {match: ['RuntimeError: The NVIDIA driver on your system is too old (found version 12060).']}
  - id: t.store-retrying
    kind: stop
    hang: true
    tentative: true
    pattern: 'TCP client failed to connect/validate to host \S+ - retrying'
    reason: 'waiting for the store'
    samples: {match: ['[c10d] TCP client failed to connect/validate to host 10.0.0.1:29500 - retrying (try=0, timeout=600000ms)']}
  - id: t.validation
    generic: true
    pattern: '\d+ validation errors? for \w+'
    explanation: x
    fix: y
    samples: {match: ['pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings']}
)",
                                    "t.yaml");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return std::move(*rules::RuleSet::Build(std::move(*rules)));
}

Event Make(EventKind kind, int64_t line, const std::string& message, const std::string& process = "", int file = 0) {
  Event e;
  e.kind = kind;
  e.where = events::LineInfo{file, line, message};
  e.message = message;
  e.process.key = process;
  return e;
}

Event WithRule(Event e, size_t rule) {
  e.matches.push_back(events::RuleMatch{rule, {}, e.where.line});
  return e;
}

TEST(RankerTest, EarliestFatalErrorWinsAndLaterOnesAreCascade) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kPythonTraceback, 173, "RuntimeError: x. See root cause above.", ""));
  f.events.back() = WithRule(f.events.back(), 0);
  f.events.push_back(Make(EventKind::kPythonTraceback, 41, "AssertionError: rank 3 out of bounds", "Worker pid=7506"));
  f.events.push_back(Make(EventKind::kPythonTraceback, 58, "AssertionError: rank 2 out of bounds", "Worker pid=7505"));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 41);
  ASSERT_EQ(r.cascade.size(), 2u);
  EXPECT_EQ(f.events[r.cascade[0].event].where.line, 58);
  EXPECT_NE(r.cascade[0].reason.find("same error"), std::string::npos);
  EXPECT_EQ(r.cascade[1].reason, "the parent reports a child failure");
}

TEST(RankerTest, ATracebackPythonIgnoredIsNoRootCause) {
  // "Exception ignored in: <function X.__del__>": the unraisable hook swallowed it; a real error
  // later is the root cause, and alone the ignored one leaves no root cause at all.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kPythonTraceback, 9, "OSError: [Errno 9] Bad file descriptor"));
  f.events.back().ignored = true;
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  f.events.push_back(Make(EventKind::kPythonTraceback, 30, "ValueError: bad"));
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 30);
}

TEST(RankerTest, StrongBeatsEarlierWeakUnlessASignatureKnowsTheWeakOne) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kErrorLog, 5, "could not reach metrics server"));
  f.events.push_back(Make(EventKind::kExceptionLine, 9, "ValueError: bad"));
  Ranking r = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*r.root].where.line, 9);

  Findings g;
  g.events.push_back(WithRule(Make(EventKind::kNcclWarn, 42, "Duplicate GPU detected : rank 1"), 2));
  g.events.push_back(Make(EventKind::kPythonTraceback, 66, "torch.distributed.DistBackendError: NCCL error"));
  Ranking s = Rank(g, *rules, false);
  EXPECT_EQ(g.events[*s.root].where.line, 42);
}

TEST(RankerTest, LauncherSummaryIsTheRootOnlyWhenNothingElseFailed) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 30, "exitcode  : -9 (pid: 952)"), 1));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 30);
  f.events.push_back(Make(EventKind::kPythonTraceback, 10, "ValueError: real"));
  Ranking s = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*s.root].where.line, 10);
  ASSERT_EQ(s.cascade.size(), 1u);
  EXPECT_EQ(s.cascade[0].reason, "launcher summary");  // the missing {code} clause is dropped
}

TEST(RankerTest, ASummaryThatNamesASignalDeathBeatsAnEarlierPeersEcho) {
  auto rules = TestRules();
  const size_t peer = 8, summary = 1;  // t.peer-gone, t.summary
  ASSERT_EQ(rules->rules()[peer].id, "t.peer-gone");
  // The peer returned early (exit 0): the rank that saw it go is the evidence, before the launcher's
  // exit-1 line for that same rank.
  Findings f;
  f.events.push_back(WithRule(
      Make(EventKind::kPythonTraceback, 25, "RuntimeError: [/g/pair.cc:547] Connection closed by peer [127.0.0.1]:1"),
      peer));
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 55, "exitcode  : 1 (pid: 718)"), summary));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 25);
  // The peer was SIGKILLed: the launcher's line for it is the cause, the closed connection its echo.
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 60, "exitcode  : -9 (pid: 719)"), summary));
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 60);
}

TEST(RankerTest, AShellsReportOfAProcessThatOnlyEchoedAPeersFailureIsASummary) {
  // tests/real/slurm-2-node-task0-exits-rank1-nccl-remote-peer-closed-watchdog-abort: the job's .err (srun's
  // summaries, bash's job report) comes before the .out holding gpu-node2's NCCL lines.
  auto rules = TestRules();
  const size_t summary = 1, peer = 8;  // t.summary, t.peer-gone
  ASSERT_EQ(rules->rules()[peer].id, "t.peer-gone");
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 15, "exitcode  : 1 (pid: 11)"), summary));
  f.events.push_back(Make(EventKind::kSignal, 16,
                          "/app/slurm/run.sh: line 197: 2985003 Aborted                 (core dumped) \"${CMD[@]}\""));
  Event echo = WithRule(Make(EventKind::kPythonTraceback, 23, "RuntimeError: Connection closed by peer [10.0.0.1]:1",
                             "gpu-node2:2985003"),
                        peer);
  echo.process.pid = 2985003;
  f.events.push_back(echo);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 15);
  // When that process failed on its own (an error no cascade rule explains), the shell's report is its death.
  Event own = Make(EventKind::kPythonTraceback, 30, "ValueError: bad", "gpu-node2:2985003");
  own.process.pid = 2985003;
  f.events.push_back(own);
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 16);
}

TEST(RankerTest, ErrorFollowedByReadyInTheSameProcessIsRecovered) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kExceptionLine, 3, "ImportError: optional flash-attn missing", "api"));
  PhaseHit ready;
  ready.phase = "ready";
  ready.where = events::LineInfo{0, 50, "Application startup complete"};
  ready.process.key = "api";
  f.phases.push_back(ready);
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  EXPECT_EQ(r.recovered.size(), 1u);
}

TEST(RankerTest, AnErrorThatKilledTheEngineIsNotRecoveredByTheFrontEndsLaterTraffic) {
  // vLLM V1 unprefixed: the engine core's traceback, "Got fatal signal from worker processes", then the
  // API server goes on answering /health with 200 (a later ready mark of the same process).
  for (int64_t dead_line : {5, 400}) {
    auto rules = TestRules();
    Findings f;
    f.events.push_back(Make(EventKind::kExceptionLine, 3, "ModuleNotFoundError: No module named 'pyarrow'"));
    f.events.push_back(WithRule(Make(EventKind::kErrorLog, dead_line, "Got fatal signal from worker processes"), 10));
    PhaseHit ready;
    ready.phase = "ready";
    ready.where = events::LineInfo{0, 1, "Application startup complete"};
    ready.last = events::LineInfo{0, 500, "GET /health HTTP/1.1 200 OK"};
    f.phases.push_back(ready);
    Ranking r = Rank(f, *rules, false);
    if (dead_line == 5) {
      ASSERT_TRUE(r.root);
      EXPECT_EQ(*r.root, 0u);
    } else {  // far after the error: another failure's echo, the error was recovered from
      EXPECT_FALSE(r.root && *r.root == 0u);
    }
  }
}

StopHit Stop(int64_t line) {
  StopHit s;
  s.rule = 5;  // t.stop
  s.where = events::LineInfo{0, line, "KeyboardInterrupt"};
  return s;
}

TEST(RankerTest, StopMakesWhatFollowsItsConsequenceAndLeavesNoRoot) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kErrorLog, 10, "ERROR wandb: Network error, entering retry loop"));
  f.events.push_back(Make(EventKind::kPythonTraceback, 25, "KeyboardInterrupt"));
  f.events.push_back(Make(EventKind::kSignal, 30, "SignalException: Process 5 got signal: 2", "agent"));
  f.stops = {Stop(40), Stop(25)};
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root) << "a hang's warning and the stop's own traceback are no failure";
  ASSERT_TRUE(r.stop);
  EXPECT_EQ(f.stops[*r.stop].where.line, 25) << "the earliest stop";
  ASSERT_EQ(r.cascade.size(), 3u);
  EXPECT_EQ(r.cascade[0].reason, "logged before the stop at line 25 and did not end the job");
  EXPECT_EQ(r.cascade[1].reason, "after the stop at line 25: Ctrl-C");
  EXPECT_EQ(r.cascade[2].reason, "after the stop at line 25: Ctrl-C");
}

TEST(RankerTest, AnExceptionAsyncioReportsLateAfterTheStopCameBeforeIt) {
  // DistServe: the loop waited on a task that had died; Ctrl-C, then at exit asyncio printed the task's
  // exception ("Task exception was never retrieved"). It failed before the stop: it is the root cause.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kPythonTraceback, 25, "KeyboardInterrupt"));
  Event late = Make(EventKind::kPythonTraceback, 60, "RuntimeError: CUDA error: no kernel image is available");
  late.reported_late = true;
  f.events.push_back(late);
  f.events.push_back(Make(EventKind::kPythonTraceback, 70, "RuntimeError: raised while shutting down"));
  f.stops = {Stop(25)};
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(*r.root, 1u);
  ASSERT_TRUE(r.stop);

  f.events[1].reported_late = false;  // an ordinary traceback after the stop is its consequence
  Ranking s = Rank(f, *rules, false);
  EXPECT_FALSE(s.root);
}

TEST(RankerTest, FatalStopIsTheRootUnlessTheJobWasServing) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kErrorLog, 40, "error: *** JOB 1 ON n CANCELLED AT t DUE TO TIME LIMIT ***"));
  StopHit limit;
  limit.rule = 6;  // t.time-limit
  limit.where = events::LineInfo{0, 40, "error: *** JOB 1 ON n CANCELLED AT t DUE TO TIME LIMIT ***"};
  f.stops = {limit};
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root) << "a training job cut off by its time limit failed there";
  EXPECT_EQ(f.events[*r.root].where.line, 40);

  PhaseHit ready;
  ready.phase = "ready";
  ready.where = events::LineInfo{0, 5, "INFO: Application startup complete."};
  f.phases.push_back(ready);
  r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root) << "a server that served until its time limit ended normally";
  ASSERT_TRUE(r.stop);
}

TEST(RankerTest, ATentativeStopStandsOnlyWhenItsProcessEndedWaiting) {
  // tests/real/ray-serve-vllm-pp3-replica-tcpstore-connect-timeout-retrying: the store client retries
  // and the log ends there: hung in distributed-init. A retry that connected (a later phase mark) or
  // gave up with an exception (a later fatal error) of the same process is no stop.
  auto rules = TestRules();
  size_t retrying = 0;
  while (rules->rules()[retrying].id != "t.store-retrying") ++retrying;
  const std::string line = "[c10d] TCP client failed to connect/validate to host 10.0.0.1:29500 - retrying (try=0)";
  Findings f;
  f.events.push_back(Make(EventKind::kErrorLog, 4, "[c10d] The client socket has timed out after 600000ms", "rank1"));
  StopHit wait;
  wait.rule = retrying;
  wait.process.key = "rank1";
  wait.where = events::LineInfo{0, 5, line};
  f.stops = {wait};
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  ASSERT_TRUE(r.stop) << "the log ends in the wait";
  // A second retry of the same wait: still waiting.
  StopHit again = wait;
  again.where = events::LineInfo{0, 9, line};
  f.stops.push_back(again);
  PhaseHit init;
  init.phase = "distributed-init";
  init.rule = retrying;
  init.process.key = "rank1";
  init.where = wait.where;
  init.last = again.where;
  f.phases.push_back(init);
  ASSERT_TRUE(Rank(f, *rules, false).stop);
  // The job went on: a training mark of the same process after the retries.
  PhaseHit trained;
  trained.phase = "training";
  trained.rule = retrying;
  trained.process.key = "rank1";
  trained.where = events::LineInfo{0, 30, "step 1/100 loss 2.3"};
  f.phases.push_back(trained);
  f.events.push_back(Make(EventKind::kPythonTraceback, 60, "torch.OutOfMemoryError: CUDA out of memory.", "rank1"));
  Ranking went_on = Rank(f, *rules, false);
  EXPECT_FALSE(went_on.stop);
  ASSERT_TRUE(went_on.root) << "the crash after the wait ended is the root, not a consequence of a stop";
  EXPECT_EQ(f.events[*went_on.root].where.line, 60);
  // Another process's progress does not end this one's wait; its own fatal error does.
  f.phases.pop_back();
  f.events.back().process.key = "rank0";
  EXPECT_TRUE(Rank(f, *rules, false).stop);
  f.events.back().process.key = "rank1";
  f.events.back().message = "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms";
  Ranking gave_up = Rank(f, *rules, false);
  EXPECT_FALSE(gave_up.stop);
  ASSERT_TRUE(gave_up.root);
  EXPECT_EQ(f.events[*gave_up.root].where.line, 60);
}

TEST(RankerTest, FatalErrorBeforeAStopStaysTheRoot) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kPythonTraceback, 12, "ValueError: real"));
  f.events.push_back(Make(EventKind::kPythonTraceback, 25, "KeyboardInterrupt"));
  f.stops = {Stop(25)};
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 12);
  // A stop before the error: the error is what stopping the job caused.
  f.stops = {Stop(5)};
  EXPECT_FALSE(Rank(f, *rules, false).root);
}

TEST(RankerTest, AFatalErrorAfterAKnownWarningBeforeAStopStaysTheRoot) {
  // c10d's W-level "failed to bind ... Address already in use" (a known signature, only logged), then
  // torchrun's RuntimeError that ended it, then Slurm cancelling the step (a stop): the RuntimeError is
  // the root (tests/real/slurm-torchrun-static-rendezvous-port-29500-in-use-container-cgroup-warnings).
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kErrorLog, 9, "NCCL WARN Duplicate GPU detected : rank 1"), 2));
  f.events.push_back(Make(EventKind::kPythonTraceback, 41, "RuntimeError: The server socket has failed to listen"));
  f.stops = {Stop(86)};
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 41);
  // With only the known warning before the stop, the job was stopped: no root.
  f.events.pop_back();
  EXPECT_FALSE(Rank(f, *rules, false).root);
}

TEST(RankerTest, AStepTheLauncherCancelledAfterATaskFailedIsNoStopFromOutside) {
  // srun's "task 1: Exited with exit code 1" (a summary), "Terminating StepId=...", then slurmstepd's
  // "*** STEP ... CANCELLED AT ... ***" (a stop): srun cancelled the step because the task failed, so the
  // failure before it is the answer (tests/real/slurm-srun-2-node-barrier-nccl-socket-connect-refused-...:
  // rank 1's DistBackendError, itself a summary of a lost peer, is the earliest report of how it ended).
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kPythonTraceback, 23, "DistBackendError: remote process exited", "rank1"), 1));
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 28, "srun: error: g15: task 1: Exited with exit code 1"), 1));
  f.stops = {Stop(30)};
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 23);
  EXPECT_FALSE(r.stop);
  // A task that ended of the cancel ("task 0: Terminated") says nothing failed before it: a stop.
  f.events[1] = WithRule(Make(EventKind::kExitStatus, 28, "srun: error: g13: task 0: Terminated"), 1);
  r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  EXPECT_TRUE(r.stop);
  // Nor does a failed task reported after the stop, or long before it.
  f.events[1] = WithRule(Make(EventKind::kExitStatus, 31, "srun: error: g15: task 1: Exited with exit code 1"), 1);
  EXPECT_FALSE(Rank(f, *rules, false).root);
  f.events[1] = WithRule(Make(EventKind::kExitStatus, 12, "srun: error: g15: task 1: Exited with exit code 1"), 1);
  EXPECT_FALSE(Rank(f, *rules, false).root);
}

TEST(RankerTest, AConsequenceThatReportsAKnownErrorIsTheRootWhenNothingElseFailed) {
  // A paste that holds only the NCCL watchdog's terminate (tests/real/sglang-pg-watchdog-what-illegal-memory-
  // access-frames-partial-paste): "what():  [PG ID 2 ...] Process group watchdog thread terminated with
  // exception: CUDA error: an illegal memory access was encountered". Its cascade rule makes it bookkeeping of
  // the error it caught, and its line names that error (a signature): with nothing else, it is the root.
  auto rules = TestRules();
  Findings f;
  Event what = Make(EventKind::kCxxTerminate, 1, "[PG ID 2] watchdog terminated: Duplicate GPU detected. See root cause above.");
  what = WithRule(WithRule(what, 0), 2);  // t.see-above (cascade) and t.dup (a signature) on its own line
  f.events.push_back(what);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 1);
  // Any other error, even a weak one, is the root instead: the report stays a consequence.
  f.events.push_back(Make(EventKind::kErrorLog, 5, "ERROR something failed"));
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 5);
  f.events.pop_back();
  // A consequence with no signature, or only a generic one, names nothing: no root.
  f.events[0].matches.clear();
  f.events[0] = WithRule(f.events[0], 0);
  EXPECT_FALSE(Rank(f, *rules, false).root);
  f.events[0] = WithRule(f.events[0], 3);
  EXPECT_FALSE(Rank(f, *rules, false).root);
  // Nor does a report before a stop from outside (a hang's noise).
  f.events[0].matches.clear();
  f.events[0] = WithRule(WithRule(f.events[0], 0), 2);
  f.stops = {Stop(9)};
  EXPECT_FALSE(Rank(f, *rules, false).root);
}

TEST(RankerTest, AChainedTracebackWhoseLaterExceptionIsTheStopIsTheStopItself) {
  // vLLM's collective_rpc: the queue's bare "TimeoutError" (line 22) is re-raised as "TimeoutError: RPC
  // call to execute_model timed out." (line 47), the stop; the chain's first exception is no fatal error
  // before it.
  auto rules = TestRules();
  Findings f;
  Event chained = Make(EventKind::kPythonTraceback, 22, "TimeoutError", "core");
  chained.chain = {"TimeoutError", "TimeoutError: RPC call to execute_model timed out."};
  chained.context.push_back(events::LineInfo{0, 3, "Traceback (most recent call last):"});
  chained.context.push_back(events::LineInfo{0, 47, "TimeoutError: RPC call to execute_model timed out."});
  f.events.push_back(chained);
  f.stops = {Stop(47)};
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root) << "the timeout's own chain is the stop";
  ASSERT_TRUE(r.stop);
  // An unchained error before the stop still is the root.
  f.events[0].chain = {"TimeoutError"};
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 22);
}

TEST(RankerTest, TimestampsOrderEventsAcrossFiles) {
  auto rules = TestRules();
  Findings f;
  Event late = Make(EventKind::kPythonTraceback, 2, "RuntimeError: peer closed", "rank0", 0);
  late.time = parse::Timestamp{true, 2025, 5, 9, 15, 15, 30, 0};
  Event early = Make(EventKind::kPythonTraceback, 90, "ZeroDivisionError", "rank1", 1);
  early.time = parse::Timestamp{true, 2025, 5, 9, 15, 15, 10, 0};
  f.events = {late, early};
  EXPECT_EQ(f.events[*Rank(f, *rules, true).root].where.line, 90);
  EXPECT_EQ(f.events[*Rank(f, *rules, false).root].where.line, 2) << "one file: line order";
}

TEST(RankerTest, AGenericWrapperYieldsToTheSpecificErrorPrintedBelowItInTheSameProcess) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(
      Make(EventKind::kPythonTraceback, 20, "ray.exceptions.RayTaskError(ValueError): ray::f()", "driver"), 3));
  f.events.push_back(Make(EventKind::kPythonTraceback, 31, "ValueError: no such data source", "driver"));
  f.events.push_back(Make(EventKind::kPythonTraceback, 40, "KeyError: other", "worker"));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 31);
  bool explained = false;
  for (const auto& w : r.why) explained = explained || w.find("generic wrapper") != std::string::npos;
  EXPECT_TRUE(explained);
  ASSERT_FALSE(r.cascade.empty());
  EXPECT_EQ(f.events[r.cascade[0].event].where.line, 20);
  EXPECT_NE(r.cascade[0].reason.find("generic wrapper"), std::string::npos);
}

TEST(RankerTest, AGenericWrapperDoesNotYieldToTheDeathOfItsProcessBelowIt) {
  // SGLang under docker compose (tests/real, wrap-real): the scheduler's wrapper exception, then the
  // shell's "Killed" of the same service: the death is how the process ended, not what failed in it.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(
      Make(EventKind::kPythonTraceback, 20, "ray.exceptions.RayTaskError(ValueError): ray::f()", "worker-1"), 3));
  f.events.push_back(Make(EventKind::kSignal, 60, "Killed", "worker-1"));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 20);
  // A specific exception below it still wins.
  f.events.push_back(Make(EventKind::kPythonTraceback, 40, "ValueError: no such data source", "worker-1"));
  std::sort(f.events.begin(), f.events.end(),
            [](const Event& a, const Event& b) { return a.where.line < b.where.line; });
  Ranking s = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*s.root].where.line, 40);
}

TEST(RankerTest, AGenericWrapperYieldsToAnEarlierWeakErrorOfItsProcess) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kNcclWarn, 12, "NET/Socket : no socket interface found", "rank0"));
  f.events.push_back(Make(EventKind::kNcclWarn, 13, "unrelated warning elsewhere", "rank1"));
  f.events.push_back(
      WithRule(Make(EventKind::kPythonTraceback, 30, "RuntimeError: NCCL error: unhandled system error", "rank0"), 3));
  Ranking r = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*r.root].where.line, 12);
  // Without a specific error nearby the generic one stays the root.
  Findings g;
  g.events.push_back(
      WithRule(Make(EventKind::kPythonTraceback, 30, "RuntimeError: NCCL error: unhandled system error", "rank0"), 3));
  Ranking s = Rank(g, *rules, false);
  EXPECT_EQ(g.events[*s.root].where.line, 30);
}

TEST(RankerTest, AGenericWrapperWithNothingOfItsOwnYieldsToAPeerWorkersKnownErrorPrintedWithIt) {
  // vLLM's multiproc workers: one reports NCCL's generic "unhandled cuda error", the peer printed with it
  // names the CUDA error (an illegal memory access) that the collective echoes.
  auto rules = TestRules();
  auto worker = [](Event e, int pid) {
    e.process.pid = pid;
    return e;
  };
  Findings f;
  f.events.push_back(worker(
      WithRule(Make(EventKind::kPythonTraceback, 72, "RuntimeError: NCCL error: unhandled system error", "w350"), 3),
      350));
  f.events.push_back(WithRule(Make(EventKind::kSignal, 80, "Killed", ""), 2));  // unprefixed: no peer
  f.events.push_back(
      worker(WithRule(Make(EventKind::kErrorLog, 102, "CUDA error: Duplicate GPU detected : rank 1", "w351"), 2), 351));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 102);
  bool peer = false;
  for (const auto& w : r.why) peer = peer || w.find("of a peer printed with it") != std::string::npos;
  EXPECT_TRUE(peer);
  // A peer's error far below it (past the window) does not explain it.
  Findings g;
  g.events.push_back(f.events[0]);
  g.events.push_back(f.events[2]);
  g.events[1].where.line = 400;
  Ranking s = Rank(g, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(g.events[*s.root].where.line, 72);
}

TEST(RankerTest, AGenericWrapperYieldsToTheFirstErrorOfTheCompilerRunBeforeIt) {
  // A build step's failure (generic) after a compiler's output: the run's first error is the cause, even
  // when the run (with the IR it dumps) reaches back further than the window; what follows it ("more
  // errors", "ninja: build stopped") is not. An old error far before the run stays out.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kCompilerError, 10, "old.cc:1:1: error: an unrelated earlier build"));
  f.events.push_back(Make(EventKind::kCompilerError, 800, "LLVM ERROR: Unsupported rounding mode for conversion."));
  f.events.push_back(Make(EventKind::kCompilerError, 1150, "k.py:16:0: error: Failures have been detected"));
  f.events.push_back(Make(EventKind::kCompilerError, 1400, "ninja: build stopped: subcommand failed."));
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 1500, "unhandled system error: exit code: 1"), 3));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 800);
}

TEST(RankerTest, AnExceptionThatReRaisesTheGenericErrorIsNotMoreSpecific) {
  // torch's "InductorError: RuntimeError: PassManager::run failed" after the generic error it wraps: the
  // compiler's diagnostic before them says what failed.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kCompilerError, 40, "k.py:16:0: error: Failures have been detected", "rank0"));
  f.events.push_back(
      WithRule(Make(EventKind::kPythonTraceback, 60, "RuntimeError: NCCL error: unhandled system error", "rank0"), 3));
  // Its first rule is a specific (non-generic) signature, as torch.inductor-error is; the generic one
  // matches the same line too.
  f.events.push_back(WithRule(
      WithRule(Make(EventKind::kPythonTraceback, 90, "InductorError: RuntimeError: unhandled system error", "rank0"),
               2),
      3));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 40);
}

TEST(RankerTest, TheBuildOutputBetweenAWrapperAndItsChainedReRaiseHoldsTheCause) {
  // flashinfer's JIT under SGLang: CalledProcessError (generic), then "RuntimeError: Ninja build failed.
  // Ninja output:" whose message is ninja's log (nvcc's error in it), then, under "During handling of the
  // above exception", SGLang's "Capture cuda graph failed" re-raise (a known signature). The re-raise is
  // chained onto the wrapper, so the compiler's first error inside the chain is the cause.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(
      Make(EventKind::kPythonTraceback, 62, "subprocess.CalledProcessError: unhandled system error", "TP0"), 3));
  f.events.push_back(Make(EventKind::kCompilerError, 99, "vec_dtypes.cuh(117): error: no suitable conversion", "TP0"));
  f.events.push_back(Make(EventKind::kCompilerError, 116, "ninja: build stopped: subcommand failed.", "TP0"));
  Event reraise = WithRule(Make(EventKind::kPythonTraceback, 147, "Exception: Capture cuda graph failed", "TP0"), 2);
  reraise.chained = true;
  f.events.push_back(reraise);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 99);

  // Not chained (a later, separate failure): the known error below the wrapper is what failed.
  f.events.back().chained = false;
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 147);
}

TEST(RankerTest, ALineWithOnlyTheOuterWrappersIdentityIsTheRawStderrBesideTheProcess) {
  // docker compose gives every line the service's name: the LLVM ERROR that the compiler wrote to the raw
  // stderr carries only "worker-1", the engine's lines "worker-1/EngineCore_DP0 pid=7".
  auto rules = TestRules();
  Findings f;
  Event llvm = Make(EventKind::kCompilerError, 41, "LLVM ERROR: Unsupported rounding mode for conversion.", "worker-1");
  f.events.push_back(llvm);
  Event engine = WithRule(
      Make(EventKind::kPythonTraceback, 437, "RuntimeError: unhandled system error", "worker-1/EngineCore_DP0 pid=7"),
      3);
  engine.process.parent = "worker-1";
  engine.process.role = "EngineCore_DP0";
  engine.process.pid = 7;
  f.events.push_back(engine);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 41);

  // Another service's line is another process's output.
  f.events[0].process.key = "worker-2";
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 437);
}

TEST(RankerTest, ALineWithOnlyTheSlurmTasksIdentityAndRankIsTheRawStderrBesideThatRank) {
  // srun --label gives every line its task, and the task is the rank: the compiler's raw stderr line carries
  // "task 0" and rank 0, the engine's traceback "task 0/rank0" under it.
  auto rules = TestRules();
  Findings f;
  Event llvm = Make(EventKind::kCompilerError, 41, "LLVM ERROR: Unsupported rounding mode for conversion.", "task 0");
  llvm.process.rank = 0;
  f.events.push_back(llvm);
  Event engine =
      WithRule(Make(EventKind::kPythonTraceback, 437, "RuntimeError: unhandled system error", "task 0/rank0"), 3);
  engine.process.parent = "task 0";
  engine.process.rank = 0;
  f.events.push_back(engine);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 41);

  // Another task's rank is another process.
  f.events[0].process.key = "task 1";
  f.events[0].process.rank = 1;
  r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 437);
}

TEST(RankerTest, AnExceptionWhoseOwnLineCarriesAGenericErrorIsGeneric) {
  // torch's "InductorError: CalledProcessError: Command '[gcc, ...]' returned non-zero exit status 1" with
  // no CalledProcessError of its own before it: its first rule is specific, but its line also carries the
  // generic one, so the compiler's diagnostic above says what failed.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kCompilerError, 6, "stdlib.h:31:10: fatal error: stddef.h: No such file"));
  f.events.push_back(WithRule(
      WithRule(Make(EventKind::kPythonTraceback, 126, "InductorError: CalledProcessError: unhandled system error"), 2),
      3));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 6);
  bool named = false;
  for (const auto& w : r.why) named = named || w.find("generic wrapper error (t.generic)") != std::string::npos;
  EXPECT_TRUE(named);
  // The same exception with only its specific rule stays the root.
  Findings g;
  g.events.push_back(Make(EventKind::kCompilerError, 6, "stdlib.h:31:10: fatal error: stddef.h: No such file"));
  g.events.push_back(WithRule(Make(EventKind::kPythonTraceback, 126, "InductorError: Duplicate GPU detected"), 2));
  Ranking s = Rank(g, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(g.events[*s.root].where.line, 126);
}

TEST(RankerTest, ALoggedFailedImportExplainsTheFatalErrorItLeavesBehind) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(
      WithRule(Make(EventKind::kErrorLog, 1, "Failed to import from vllm._C with ImportError('libtorch_hip.so')"), 7));
  f.events.push_back(Make(EventKind::kPythonTraceback, 23, "AttributeError: '_C' object has no attribute 'rms_norm'"));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 1);
  ASSERT_EQ(r.cascade.size(), 1u);
  EXPECT_NE(r.cascade[0].reason.find("explains"), std::string::npos);
  // A fatal error it does not explain stays the root, and the logged import failure alone ranks below it.
  Findings g;
  g.events.push_back(
      WithRule(Make(EventKind::kErrorLog, 1, "Failed to import from vllm._C with ImportError('libcuda.so.1')"), 7));
  g.events.push_back(Make(EventKind::kPythonTraceback, 30, "KeyError: 'layers.5.self_attn.qkv_proj.v_proj.weight'"));
  Ranking s = Rank(g, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(g.events[*s.root].where.line, 30);
}

TEST(RankerTest, ANoticeJustAfterAFatalLineThatNamesWhatEndedItExplainsIt) {
  auto rules = TestRules();
  const std::string oom =
      "slurmstepd: error: Detected 1 oom_kill event in StepId=1.batch. Some tasks have been OOM Killed.";
  Findings f;
  f.events.push_back(Make(EventKind::kSignal, 18, "slurm_script: line 46: 2113061 Killed   python3 train.py"));
  f.events.push_back(WithRule(Make(EventKind::kSignal, 19, oom), 9));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 19);
  ASSERT_EQ(r.cascade.size(), 1u);
  EXPECT_NE(r.cascade[0].reason.find("explains"), std::string::npos);
  // Too far after the fatal line, with another error between them, it is another event: the fatal line
  // stays the root.
  Findings g;
  g.events.push_back(Make(EventKind::kSignal, 18, "slurm_script: line 46: 2113061 Killed   python3 train.py"));
  g.events.push_back(Make(EventKind::kErrorLog, 50, "ERROR: cleanup failed"));
  g.events.push_back(WithRule(Make(EventKind::kSignal, 90, oom), 9));
  Ranking s = Rank(g, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(g.events[*s.root].where.line, 18);
  // Further on with nothing between them (a scheduler's report appended after the job's output, with the
  // job script echoed in between), the notice still names what ended the job.
  Findings k;
  k.events.push_back(Make(EventKind::kSignal, 1, "/zhome/.lsbatch/1.shell: line 12:   872 Killed   python main.py"));
  k.events.push_back(WithRule(Make(EventKind::kSignal, 35, oom), 9));
  Ranking u = Rank(k, *rules, false);
  ASSERT_TRUE(u.root);
  EXPECT_EQ(k.events[*u.root].where.line, 35);
  // A second copy of the notice does not explain the first one (its own "OOM Killed" is no kill it reports).
  Findings h;
  h.events.push_back(WithRule(Make(EventKind::kSignal, 5, oom), 9));
  h.events.push_back(
      WithRule(Make(EventKind::kSignal, 8, "srun: error: Detected 3 oom_kill event in task 1: Killed"), 9));
  Ranking t = Rank(h, *rules, false);
  ASSERT_TRUE(t.root);
  EXPECT_EQ(h.events[*t.root].where.line, 5);
}

TEST(RankerTest, ATracebackCutOffBeforeItsExceptionNeverOutranksAConcreteError) {
  auto rules = TestRules();
  Findings f;
  Event cut = Make(EventKind::kPythonTraceback, 5, "Traceback (cut off before its exception line)");
  cut.cut_off = true;
  f.events.push_back(cut);
  f.events.push_back(Make(EventKind::kErrorLog, 9, "failed writing file data/1661"));
  Ranking r = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*r.root].where.line, 9);
}

TEST(RankerTest, OfALaunchersSummaryTheLineSayingHowTheRankEndedWins) {
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kErrorLog, 1, "exitcode  : see below"), 1));
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 11, "exitcode  : -9 (pid: 79468)"), 1));
  Ranking r = Rank(f, *rules, false);
  EXPECT_EQ(f.events[*r.root].where.line, 11);
}

}  // namespace
}  // namespace faultline::diagnosis

namespace faultline::diagnosis {
namespace {

TEST(RankerTest, AnExitLineAfterACrashDoesNotRecoverItButASuccessReportDoes) {
  // W&B's exit footer (exit_only) follows a crash too: the ImportError above it stays the root.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kExceptionLine, 44, "ImportError: Using `device_map` requires Accelerate"));
  PhaseHit exited;
  exited.phase = "training";
  exited.completes = true;
  exited.rule = 11;
  exited.where = events::LineInfo{0, 47, "wandb: Synced 5 W&B file(s), 0 media file(s)"};
  f.phases.push_back(exited);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 44);
  EXPECT_TRUE(r.recovered.empty());
  // The scheduler's report that the job exited 0 says the logged error did not end it.
  PhaseHit succeeded = exited;
  succeeded.rule = 12;
  succeeded.where = events::LineInfo{0, 80, "Successfully completed."};
  f.phases.push_back(succeeded);
  Ranking s = Rank(f, *rules, false);
  EXPECT_FALSE(s.root);
  EXPECT_EQ(s.recovered.size(), 1u);
}

TEST(RankerTest, ALaunchersSummaryBeforeTheJobsCompletionOfAnotherProcessIsRecovered) {
  // srun's "task 0: Exited with exit code 1" of a setup step in the batch script's stream, then the
  // training step (srun --label "0: ") reports its own end: the job went on past that step.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kErrorLog, 6, "  exitcode  : 1 (pid: 7)"), 1));  // t.summary
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);  // alone it is the root
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;  // t.succeeded
  done.where = events::LineInfo{0, 747, "Successfully completed."};
  done.process.key = "0";
  f.phases.push_back(done);
  Ranking s = Rank(f, *rules, false);
  EXPECT_FALSE(s.root);
  EXPECT_EQ(s.recovered.size(), 1u);
  // A summary after the completion is not undone by it (the teardown rules decide that one).
  f.events.push_back(WithRule(Make(EventKind::kErrorLog, 900, "  exitcode  : 1 (pid: 8)"), 1));
  Ranking t = Rank(f, *rules, false);
  ASSERT_TRUE(t.root);
  EXPECT_EQ(f.events[*t.root].where.line, 900);
}

TEST(RankerTest, AnExitReportNamingSigtermAfterTheCompletionIsTheTeardown) {
  // verl's "Final validation metrics" (the run's completion), then Ray's raylet reports a worker the shutdown
  // terminated: set aside. An exit report after the completion that names no SIGTERM stays the root.
  auto rules = TestRules();
  Findings f;
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;  // t.succeeded
  done.where = events::LineInfo{0, 9, "(TaskRunner pid=267532) (\"Final validation metrics: {...}\")"};
  f.phases.push_back(done);
  f.events.push_back(Make(EventKind::kExitStatus, 21,
                          "A worker died or was killed while executing a task by an unexpected system error. Worker exit "
                          "type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly by a signal. SystemExit is "
                          "raised (sys.exit is called). Exit code: 1. The process receives a SIGTERM.",
                          "raylet"));
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  EXPECT_EQ(r.recovered.size(), 1u);
  f.events[0].message = "A worker died or was killed while executing a task by an unexpected system error. Worker exits "
                        "with an exit code 1.";
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 21);
}

TEST(RankerTest, AGenericWrapperOverAnotherGenericErrorYieldsToTheInnerOne) {
  // Ray's bare RayTaskError (a cause it could not subclass) over the remote traceback's pydantic
  // ValidationError, both generic wrappers of their own kind: the inner one is nearer the cause.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kPythonTraceback, 19, "ray.exceptions.RayTaskError: ray::TaskRunner.run() (pid=1)"), 3));
  f.events.push_back(WithRule(
      Make(EventKind::kPythonTraceback, 48, "pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings"),
      15));
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 48);
  // The same wrapper printed again below (a re-raise, its own rule again) is no inner error.
  f.events[1] = WithRule(Make(EventKind::kPythonTraceback, 48, "ray.exceptions.RayTaskError: ray::WorkerDict.f() (pid=2)"), 3);
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 19);
}

TEST(RankerTest, AnNcclWarnBeforeTheJobsCompletionOfAnotherProcessIsRecovered) {
  // NCCL's own host:pid:tid prefix never matches the process's unprefixed progress: a CollNet (SHARP)
  // init WARN that fell back, then the job's completion marker (unprefixed).
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kNcclWarn, 4705, "NET/IB :SHARP coll init error: Cannot create SHArP job(-11)",
                          "ip-0A230408:54866"));
  ASSERT_TRUE(Rank(f, *rules, false).root);
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;  // t.succeeded
  done.where = events::LineInfo{0, 9000, "Successfully completed."};
  f.phases.push_back(done);
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  EXPECT_EQ(r.recovered.size(), 1u);
}

TEST(RankerTest, WeakErrorsAfterTheJobsCompletionAreTeardownNoiseButAPythonExceptionIsNot) {
  // NCCL's proxy "[Service thread] Accept failed" (NCCL WARN) on every rank after the run's end, or a
  // logged NCCL error of a peer already gone: set aside. A traceback after the marker stays a failure.
  auto rules = TestRules();
  Findings f;
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;  // t.succeeded
  done.where = events::LineInfo{0, 100, "Successfully completed."};
  done.process.key = "0";
  f.phases.push_back(done);
  f.events.push_back(Make(EventKind::kNcclWarn, 110, "proxy.cc:1458 NCCL WARN [Service thread] Accept failed", "0"));
  f.events.push_back(Make(EventKind::kErrorLog, 112, "[E511 ProcessGroupNCCL.cpp:541] found async exception", "3"));
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  f.events.push_back(Make(EventKind::kPythonTraceback, 120, "OSError: [Errno 28] No space left on device", "0"));
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
}

TEST(RankerTest, TrainingLinesAfterATracebackThatEndedItsProcessDoNotRecoverIt) {
  // tests/real/mpirun-mpi4py-rank1-shard-indexerror-rank0-left-in-allreduce-timeout: rank 1's uncaught
  // IndexError (stderr, unbuffered) comes before the ranks' step lines (stdout, flushed later) in
  // mpirun's merged, unprefixed stream; the job then stalls.
  auto rules = TestRules();
  Findings f;
  Event e = Make(EventKind::kPythonTraceback, 5, "IndexError: list index out of range");
  e.context = {events::LineInfo{0, 1, "Traceback (most recent call last):"},
               events::LineInfo{0, 2, "  File \"/work/s9_mpi.py\", line 8, in <module>"}};
  f.events.push_back(e);
  PhaseHit steps;
  steps.phase = "training";
  steps.rule = 3;
  steps.where = events::LineInfo{0, 6, "rank 0 step 1 total 19900"};
  steps.last = events::LineInfo{0, 11, "rank 1 step 3 total 19900"};
  f.phases.push_back(steps);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 5);
  // A traceback caught and logged inside a function (its outermost frame is not the top level) is
  // followed by training that went on: recovered, as before.
  f.events[0].context[1].text = "  File \"/work/train.py\", line 80, in train_step";
  Ranking s = Rank(f, *rules, false);
  EXPECT_FALSE(s.root);
  EXPECT_EQ(s.recovered.size(), 1u);
  // A completion after the dead process's traceback (a relaunch that finished) still recovers it.
  f.events[0].context[1].text = "  File \"/work/s9_mpi.py\", line 8, in <module>";
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;
  done.where = events::LineInfo{0, 20, "Successfully completed."};
  f.phases.push_back(done);
  Ranking u = Rank(f, *rules, false);
  EXPECT_FALSE(u.root);
}

TEST(RankerTest, AServerThatCameUpWithoutItsGpuDidNotRecover) {
  // tests/real/nemo-asr-server-preload-model-instantiation-failed-nvidia-driver-too-old: the engine's
  // load fails on the driver, the app catches it and uvicorn comes up serving no engine.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(WithRule(Make(EventKind::kPythonTraceback, 36,
                                   "RuntimeError: The NVIDIA driver on your system is too old (found version 12060)."),
                              13));
  PhaseHit up;
  up.phase = "ready";
  up.rule = 4;
  up.where = events::LineInfo{0, 62, "INFO:     Application startup complete."};
  f.phases.push_back(up);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 36);
  // Another error before ready is one the server survived, as before.
  f.events[0].matches.clear();
  Ranking s = Rank(f, *rules, false);
  EXPECT_FALSE(s.root);
}

TEST(RankerTest, ANativeDeathAfterTheJobCompletedIsTeardownNoise) {
  // tests/real/torchtitan-torchrun-60m-training-completed-then-sigabrt-at-process-group-destroy-healthy:
  // "Training completed", then an abort with no Python frame at exit and torchrun's summary of it.
  auto rules = TestRules();
  Findings f;
  PhaseHit done;
  done.phase = "training";
  done.completes = true;
  done.rule = 12;
  done.process.key = "rank0";
  done.where = events::LineInfo{0, 5, "Successfully completed."};
  f.phases.push_back(done);
  f.events.push_back(Make(EventKind::kCxxTerminate, 6, "terminate called without an active exception", "rank0"));
  f.events.push_back(Make(EventKind::kSignal, 7, "Fatal Python error: Aborted", "rank0"));
  f.events.push_back(WithRule(Make(EventKind::kExitStatus, 47, "  exitcode  : -6 (pid: 3016739)"), 1));
  Ranking r = Rank(f, *rules, false);
  EXPECT_FALSE(r.root);
  EXPECT_EQ(r.recovered.size(), 3u);
  // A Python exception after the marker (a final save that failed) is a failure as before, and so
  // is the abort beside it.
  f.events.push_back(Make(EventKind::kPythonTraceback, 8, "OSError: [Errno 28] No space left on device", "rank0"));
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 6);
  // A stage begun after the marker (a server the same pipeline started) that then dies natively is
  // not the finished job's teardown.
  Event failed_save = f.events.back();
  f.events.pop_back();
  f.events[0].where.line = 7;
  f.events[1].where.line = 8;
  PhaseHit next_stage;
  next_stage.phase = "weight-loading";
  next_stage.rule = 3;
  next_stage.process.key = "rank0";
  next_stage.where = events::LineInfo{0, 6, "Loading safetensors checkpoint shards:   0% Completed | 0/4"};
  f.phases.push_back(next_stage);
  Ranking u = Rank(f, *rules, false);
  ASSERT_TRUE(u.root);
  EXPECT_EQ(f.events[*u.root].where.line, 7);
  f.phases.pop_back();
  f.events.push_back(failed_save);
  // A launcher's summary alone after the marker: a rank failed without a word, still a failure.
  f.events.erase(f.events.begin(), f.events.begin() + 2);
  f.events.pop_back();
  Ranking t = Rank(f, *rules, false);
  ASSERT_TRUE(t.root);
  EXPECT_EQ(f.events[*t.root].where.line, 47);
}

TEST(RankerTest, ATracebackWhoseExceptionLineIsAnotherCopysFrameYieldsToTheWholeCopy) {
  // tests/real/torchrun-tacc-interleaved-ranks-missing-config: four ranks print one traceback at once,
  // character by character; the first copy "ends" on a garbled frame line, a later copy is whole.
  auto rules = TestRules();
  Findings f;
  f.events.push_back(Make(EventKind::kPythonTraceback, 27, "^^^^  File \"/w/train.py\", line 3544, in <module>"));
  Event whole = Make(EventKind::kPythonTraceback, 52, "FileNotFoundError: [Errno 2] No such file or directory: 'c.yaml'");
  whole.exception = "FileNotFoundError";
  f.events.push_back(whole);
  Ranking r = Rank(f, *rules, false);
  ASSERT_TRUE(r.root);
  EXPECT_EQ(f.events[*r.root].where.line, 52);
  // A well-formed exception line stays the root; so does a garbled one with no whole copy after it.
  f.events[0].message = "RuntimeError: bad config";
  f.events[0].exception = "RuntimeError";
  Ranking s = Rank(f, *rules, false);
  ASSERT_TRUE(s.root);
  EXPECT_EQ(f.events[*s.root].where.line, 27);
  f.events[0].message = "^^^^  File \"/w/train.py\", line 3544, in <module>";
  f.events[0].exception.clear();
  f.events[1].where.line = 300;
  Ranking t = Rank(f, *rules, false);
  ASSERT_TRUE(t.root);
  EXPECT_EQ(f.events[*t.root].where.line, 27);
}

}  // namespace
}  // namespace faultline::diagnosis
