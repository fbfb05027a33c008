#include "diagnosis/scan_inputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "diagnosis/block_pipeline.h"
#include "diagnosis/log_scanner.h"
#include "diagnosis/ranker.h"
#include "diagnosis/scan_patterns.h"
#include "diagnosis/triage.h"
#include "input/byte_source.h"
#include "input/line_cleaner.h"
#include "parse/line_parser.h"
#include "rules/rule_loader.h"
#include "rules/wrapper_loader.h"

namespace faultline::diagnosis {
namespace {

namespace fs = std::filesystem;

// Every golden log as one multi-file input: real logs with tracebacks,
// phases, facts and processes that repeat across files.
std::vector<input::InputFile> GoldenLogs() {
  std::vector<input::InputFile> files;
  for (const auto& dir : fs::directory_iterator(fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "golden")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().extension() == ".log") files.push_back({f.path().string(), f.path().string()});
    }
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return files;
}

// The binary loads the built-in rules from the copy precompile_rules
// serialised at build time: it must equal the YAML parsed now, every field
// (a field that Rule gains must be added to VisitRuleFields in rule_loader.cc).
TEST(BuiltinRulesTest, SerialisedCopyEqualsTheYaml) {
  ASSERT_TRUE(BuiltinRulesRegistered());
  ASSERT_TRUE(rules::HaveSerialisedBuiltinRules());
  auto loaded = rules::LoadBuiltinRules();
  auto parsed = rules::ParseBuiltinRuleFiles();
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(loaded->size(), parsed->size());
  for (size_t i = 0; i < parsed->size(); ++i) {
    EXPECT_TRUE((*loaded)[i] == (*parsed)[i]) << (*parsed)[i].id << " differs: add its new field to VisitRuleFields";
  }
  auto again = rules::DeserializeRules(rules::SerializeRules(*parsed));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *parsed);
  EXPECT_FALSE(rules::DeserializeRules("\x05ab").ok());
}

std::string Describe(const Findings& f) {
  std::string s = "lines " + std::to_string(f.total_lines) + " dropped " + std::to_string(f.events_dropped) + "\n";
  for (const auto& e : f.events) {
    s += "event " + std::to_string(e.where.file) + ":" + std::to_string(e.where.line) + " " + e.process.key + " " +
         e.message + " ctx " + std::to_string(e.context.size()) + " t " + std::to_string(e.time.OrderKey()) + "\n";
  }
  for (const auto& p : f.phases) {
    s += "phase " + p.phase + (p.fallback ? " (fallback)" : "") + " " + p.process.key + " " + std::to_string(p.where.file) + ":" +
         std::to_string(p.where.line) + "\n";
  }
  for (const auto& [k, v] : f.facts) s += "fact " + k + "=" + v + "\n";
  for (const auto& [k, st] : f.processes) {
    s += "proc " + k + " " + std::to_string(st.lines) + " " + std::to_string(st.errors) + " " +
         std::to_string(st.first_line.file) + ":" + std::to_string(st.first_line.line) + " " +
         std::to_string(st.last_line.file) + ":" + std::to_string(st.last_line.line) + "\n";
  }
  for (const auto& in : f.inputs) s += "input " + in.file + " " + std::to_string(in.lines) + "\n";
  for (const auto& w : f.warnings) s += "warning " + w + "\n";
  if (f.last_line) s += "last " + std::to_string(f.last_line->file) + ":" + std::to_string(f.last_line->line) + "\n";
  return s;
}

TEST(ScanInputsTest, ParallelScanEqualsSequentialScan) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  auto files = GoldenLogs();
  ASSERT_GT(files.size(), 20u);
  files.push_back({"/nonexistent/faultline-test.log", "missing.log"});  // a skipped input keeps its place
  std::rotate(files.begin() + static_cast<long>(files.size() / 2), files.end() - 1, files.end());

  Findings sequential;
  ASSERT_TRUE(ScanInputs(files, **rules, wrappers->get(), &sequential, 1).ok());
  ASSERT_FALSE(sequential.events.empty());
  ASSERT_FALSE(sequential.phases.empty());
  const std::string want = Describe(sequential);
  for (unsigned threads : {2u, 3u, 8u}) {
    Findings parallel;
    ASSERT_TRUE(ScanInputs(files, **rules, wrappers->get(), &parallel, threads).ok());
    EXPECT_EQ(Describe(parallel), want) << threads << " threads";
  }
}

// A pipeline takes the blocks the one before it left on its thread
// (block_pipeline.cc kept_blocks): a block that held another file's lines,
// wrappers, redraws and parses must scan a file as a fresh one does.
TEST(ScanInputsTest, ReusedBlocksScanAsFreshOnes) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  auto files = GoldenLogs();
  ASSERT_GT(files.size(), 20u);
  auto scan = [&](const input::InputFile& f) {
    Findings one;
    EXPECT_TRUE(ScanInputs({f}, **rules, wrappers->get(), &one, 1).ok());
    return Describe(one);
  };
  for (size_t i = 0; i < files.size(); ++i) {
    std::string fresh;
    std::thread([&] { fresh = scan(files[i]); }).join();  // a new thread keeps no blocks
    scan(files[(i + files.size() / 2) % files.size()]);   // this thread's blocks held another file last
    EXPECT_EQ(scan(files[i]), fresh) << files[i].path;
  }
}

// A traceback's frame inside Trainer._inner_training_loop marks the phase the
// error happened in; it is no later progress of the process (ranker: an error
// followed by progress was recovered). Two ranks' OOM tracebacks, unprefixed.
TEST(ScanInputsTest, TracebackFramesAreNoLaterPhaseMarks) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "deepspeed-lmflow-bf16-optimizer-flatten-oom" / "finetune.log";
  std::vector<input::InputFile> files = {{log.string(), log.string()}};
  Findings f;
  ASSERT_TRUE(ScanInputs(files, **rules, wrappers->get(), &f, 1).ok());
  std::vector<std::string> lines;
  {
    std::FILE* in = std::fopen(log.c_str(), "r");
    ASSERT_NE(in, nullptr);
    char buf[8192];
    while (std::fgets(buf, sizeof buf, in)) lines.emplace_back(buf);
    std::fclose(in);
  }
  bool training = false;
  for (const auto& ph : f.phases) {
    if (ph.phase == "training") training = true;
    if (ph.last.line <= 0) continue;
    ASSERT_LE(ph.last.line, static_cast<int64_t>(lines.size()));
    EXPECT_EQ(lines[ph.last.line - 1].find("File \""), std::string::npos) << "line " << ph.last.line;
  }
  EXPECT_TRUE(training);  // the first frame still says where the error happened
}

// A tqdm bar redrawn with '\r' inside one line (a compose prefix before it) rises from its first state to
// its last when it stopped below its total; a bar redrawn up to its total (a loader's) reaches no phase.
TEST(ScanInputsTest, ARedrawnBarBelowItsTotalRises) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  auto training = [&](const std::string& bar) {
    const fs::path log = fs::path(::testing::TempDir()) / "redrawn-bar.log";
    std::FILE* out = std::fopen(log.c_str(), "w");
    EXPECT_NE(out, nullptr);
    std::fputs("worker-1  | starting\nworker-1  | loading data\n", out);
    std::fputs(("worker-1  | " + bar + "\n").c_str(), out);
    std::fclose(out);
    std::vector<input::InputFile> files = {{log.string(), log.string()}};
    Findings f;
    EXPECT_TRUE(ScanInputs(files, **rules, wrappers->get(), &f, 1).ok());
    return std::any_of(f.phases.begin(), f.phases.end(), [](const PhaseHit& p) { return p.phase == "training"; });
  };
  EXPECT_TRUE(training("\rtrain:   0%|  | 0/1000 [00:00<?, ?it/s]\rtrain:  32%|# | 315/1000 [00:20<00:01, 578.75it/s]"));
  EXPECT_FALSE(training("\rtrain:  32%|# | 315/1000 [00:20<00:01, 578.75it/s]"));
  EXPECT_FALSE(training("\rParse files:   0%|  | 0/8 [00:00<?, ?it/s]\rParse files: 100%|##| 8/8 [00:00<00:00, 33.65it/s]"));
}

// A completion line that says only that the process ended (W&B's exit footer, exit: true) and the job's own
// completion after it (LSF's "Successfully completed.") of the same process are two marks: the second one keeps
// its own rule (and with it the power to recover an error between them), it is not merged into the first.
TEST(ScanInputsTest, AnExitOnlyCompletionAndALaterJobCompletionStayApart) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  const fs::path log = fs::path(::testing::TempDir()) / "exit-then-completed.log";
  std::FILE* out = std::fopen(log.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("wandb: Synced 5 W&B file(s), 0 media file(s), 0 artifact file(s) and 0 other file(s)\n", out);
  std::fputs("Traceback (most recent call last):\n  File \"/w/x.py\", line 1, in run\n", out);
  std::fputs("BrokenPipeError: [Errno 32] Broken pipe\n\nSuccessfully completed.\n", out);
  std::fclose(out);
  std::vector<input::InputFile> files = {{log.string(), log.string()}};
  Findings f;
  ASSERT_TRUE(ScanInputs(files, **rules, wrappers->get(), &f, 1).ok());
  int exit_only = 0, job = 0;
  for (const auto& ph : f.phases) {
    if (!ph.completes) continue;
    EXPECT_EQ(ph.exit_only, (*rules)->rules()[ph.rule].exit_only);
    if (ph.exit_only) {
      ++exit_only;
      EXPECT_EQ(ph.where.line, 1);
    } else {
      ++job;
      EXPECT_EQ(ph.where.line, 6);
    }
  }
  EXPECT_EQ(exit_only, 1);
  EXPECT_EQ(job, 1);
}

// Built-in rules end to end: scan one real log, rank it, return the root event (nullptr when none).
struct RankedLog {
  Findings findings;
  Ranking ranking;
  const events::Event* Root() const { return ranking.root ? &findings.events[*ranking.root] : nullptr; }
};
RankedLog ScanAndRank(const fs::path& log) {
  RankedLog out;
  auto builtin = rules::LoadBuiltinRules();
  EXPECT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  EXPECT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  EXPECT_TRUE(wrappers.ok());
  std::vector<input::InputFile> files = {{log.string(), log.string()}};
  EXPECT_TRUE(ScanInputs(files, **rules, wrappers->get(), &out.findings, 1).ok());
  out.ranking = Rank(out.findings, **rules, false);
  return out;
}

// Ray prints a dead actor's creation-task error as "ActorDiedError: The actor died because of an error
// raised in its creation task, ray::X.__init__() ...", then the constructor's traceback and its own exception
// (rules/common.yaml ray.actor-creation-task-error, generic): under the driver's RayTaskError(ActorDiedError)
// the constructor's RuntimeError is the root cause, both Ray lines its wrappers (tests/real, a verl run).
TEST(ScanInputsTest, ARayActorsCreationTaskErrorYieldsToTheConstructorsOwnException) {
  const RankedLog r = ScanAndRank(fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                                  "verl-fully-async-npu-param-sync-ray-collective-nccl-not-available" / "verl.log");
  ASSERT_NE(r.Root(), nullptr);
  EXPECT_EQ(r.Root()->message, "RuntimeError: NCCL is not available.");
  EXPECT_EQ(r.Root()->where.line, 28);
  std::vector<int64_t> cascade;
  for (const auto& c : r.ranking.cascade) cascade.push_back(r.findings.events[c.event].where.line);
  EXPECT_NE(std::find(cascade.begin(), cascade.end(), 14), cascade.end()) << "the driver's RayTaskError";
  EXPECT_NE(std::find(cascade.begin(), cascade.end(), 19), cascade.end()) << "the creation-task ActorDiedError";
}

// A batch prediction's closing write of its results file is the job's completion (a final one): LLaMA-Factory's
// predict run (tests/real) ends "Saving prediction results to .../generated_predictions.jsonl"; its earlier
// "Saving model checkpoint" style lines are none.
TEST(ScanInputsTest, APredictRunsClosingResultsFileIsItsCompletion) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  auto wrappers = rules::LoadWrappers({});
  ASSERT_TRUE(wrappers.ok());
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "llamafactory-predict-qwen25-3b-lora-500-examples-saving-prediction-results-healthy" /
                       "running_log.txt";
  std::vector<input::InputFile> files = {{log.string(), log.string()}};
  Findings f;
  ASSERT_TRUE(ScanInputs(files, **rules, wrappers->get(), &f, 1).ok());
  std::vector<int64_t> completions;
  for (const auto& ph : f.phases) {
    if (ph.completes) completions.push_back(ph.last.line > 0 ? ph.last.line : ph.where.line);
  }
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0], 190);
  EXPECT_EQ((*rules)->rules()[std::find_if(f.phases.begin(), f.phases.end(),
                                           [](const PhaseHit& p) { return p.completes; })->rule].id,
            "progress.complete.final-test-report");
}

// Lightning's subprocess launcher reports a rank's death as "[rank: 1] Child process with PID ... terminated
// with code 2. Forcefully terminating all other processes" (lightning.child-process-terminated, a summary); the
// interpreter's "can't open file ...: No such file or directory" above it (python.script-not-found, a paste
// that dropped the "[Errno 2] ") is why (tests/real, a 3-line paste). Without the interpreter's line the
// launcher's summary is the only report, and still a failure.
TEST(ScanInputsTest, ALightningChildProcessTerminatedIsTheSummaryOfTheRanksOwnError) {
  const fs::path dir = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "lightning-ddp-subprocess-launcher-rank1-cant-open-script-after-chdir-three-line-paste";
  const RankedLog r = ScanAndRank(dir / "full_run.log");
  ASSERT_NE(r.Root(), nullptr);
  EXPECT_EQ(r.Root()->where.line, 2);
  ASSERT_EQ(r.ranking.cascade.size(), 1u);
  EXPECT_EQ(r.findings.events[r.ranking.cascade[0].event].where.line, 3);
  const fs::path only = fs::path(::testing::TempDir()) / "lightning-child-only.log";
  std::FILE* out = std::fopen(only.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n", out);
  std::fputs("[rank: 1] Child process with PID 3410 terminated with code 1. Forcefully terminating all other "
             "processes to avoid zombies\n",
             out);
  std::fclose(out);
  const RankedLog s = ScanAndRank(only);
  ASSERT_NE(s.Root(), nullptr);
  EXPECT_EQ(s.Root()->where.line, 2);
}

// DeepSpeed's launcher logs "Killing subprocess PID" (sigkill_handler, INFO) when a rank died, before its
// "exits with return code = N": a paste that keeps only the former (tests/real/deepspeed-zero3-nvme-offload-
// sigkill-handler-two-line-paste) still reports a failure there; with the return-code line after it, that line
// (it says how the rank ended) is the root, and a rank's own error before both stays the root.
TEST(ScanInputsTest, DeepSpeedsKillingSubprocessIsTheLaunchersSummaryOfADeadRank) {
  const fs::path dir = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "deepspeed-zero3-nvme-offload-sigkill-handler-two-line-paste";
  const RankedLog r = ScanAndRank(dir / "deepspeed.log");
  ASSERT_NE(r.Root(), nullptr);
  EXPECT_EQ(r.Root()->where.line, 2);
  const fs::path more = fs::path(::testing::TempDir()) / "deepspeed-killing-then-exit.log";
  std::FILE* out = std::fopen(more.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("[2024-01-22 16:50:49,553] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1080504\n", out);
  std::fputs("[2024-01-22 16:50:49,560] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python3', '-u', "
             "'train.py', '--local_rank=0'] exits with return code = -9\n",
             out);
  std::fclose(out);
  const RankedLog s = ScanAndRank(more);
  ASSERT_NE(s.Root(), nullptr);
  EXPECT_EQ(s.Root()->where.line, 2);
  const fs::path own = fs::path(::testing::TempDir()) / "deepspeed-own-error-then-killing.log";
  out = std::fopen(own.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    main()\n", out);
  std::fputs("ValueError: bad batch size\n", out);
  std::fputs("[2024-01-22 16:50:49,553] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1080504\n", out);
  std::fclose(out);
  const RankedLog t = ScanAndRank(own);
  ASSERT_NE(t.Root(), nullptr);
  EXPECT_EQ(t.Root()->where.line, 4);
}

// pydantic's per-error line ("  Value error, MSG [type=value_error, input_value=..., input_type=...]") names the
// rejected value: a paste that keeps only it still has its root there; under the whole ValidationError
// (tests/real/vllm-serve-minicpm-v-modelconfig-validation-error-apiserver-prefix-mixed) the answer is unchanged,
// the ValidationError event (line 3; the report points at its detail line).
TEST(ScanInputsTest, APydanticErrorDetailLineAloneIsTheRoot) {
  const fs::path dir = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "vllm-serve-minicpm-v-modelconfig-validation-error-apiserver-prefix-mixed";
  const RankedLog whole = ScanAndRank(dir / "vllm.log");
  ASSERT_NE(whole.Root(), nullptr);
  EXPECT_EQ(whole.Root()->where.line, 3);
  EXPECT_NE(whole.Root()->message.find("validation error for ModelConfig"), std::string::npos);
  const fs::path only = fs::path(::testing::TempDir()) / "pydantic-detail-only.log";
  std::FILE* out = std::fopen(only.c_str(), "w");
  ASSERT_NE(out, nullptr);
  std::fputs("(APIServer pid=2994609)   Value error, Expecting value: line 1 column 1 (char 0) [type=value_error, "
             "input_value=ArgsKwargs((), {'model': ...rocessor_plugin': None}), input_type=ArgsKwargs]\n",
             out);
  std::fputs("(APIServer pid=2994609)     For further information visit "
             "https://errors.pydantic.dev/2.12/v/value_error\n",
             out);
  std::fclose(out);
  const RankedLog s = ScanAndRank(only);
  ASSERT_NE(s.Root(), nullptr);
  EXPECT_EQ(s.Root()->where.line, 1);
  EXPECT_NE(s.Root()->message.find("Expecting value: line 1 column 1"), std::string::npos);
}

// sglang.bench_one_batch (tests/real) prints "Total. latency: ..." after its warm-up run and after its measured
// run: the report is the run's end only when no "Benchmark ..." (batch work) of its process follows it. The whole
// log is healthy; the same log cut after "Benchmark ..." (a hang in the measured run) is stalled at ready.
TEST(TriageTest, ABenchOneBatchReportEndsTheRunOnlyAfterItsMeasuredRun) {
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "sglang-bench-one-batch-lfm2-700m-glmasr-import-error-ignored-benchmark-total-latency-healthy" /
                       "bench_one_batch.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);

  std::vector<std::string> lines;
  {
    std::FILE* in = std::fopen(log.c_str(), "r");
    ASSERT_NE(in, nullptr);
    char buf[8192];
    while (std::fgets(buf, sizeof buf, in)) lines.emplace_back(buf);
    std::fclose(in);
  }
  const fs::path cut = fs::path(::testing::TempDir()) / "bench-one-batch-cut.log";
  std::FILE* out = std::fopen(cut.c_str(), "w");
  ASSERT_NE(out, nullptr);
  bool benchmark = false;
  for (const auto& l : lines) {
    std::fputs(l.c_str(), out);
    if (l.rfind("Benchmark ...", 0) == 0) benchmark = true;
    if (benchmark && l.rfind("Prefill.", 0) == 0) break;  // the measured run's first line, then nothing
  }
  std::fclose(out);
  ASSERT_TRUE(benchmark);
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto stalled = Triage(cut_options);
  ASSERT_TRUE(stalled.ok());
  EXPECT_EQ(stalled->verdict, report::Verdict::kStalled);
  EXPECT_EQ(stalled->last_phase.value_or(""), "ready");
}

// DeepSpeed-Chat style "***** Evaluating perplexity, Epoch N/M *****" after each epoch (tests/real, DeepSpeedExamples'
// random-LTD GPT-2 run): the header at its total (2/2), with no progress of its process after it, ends the run; the
// same log cut in epoch 2 (after "Epoch 1/2" and some of epoch 2's lines) is stalled at training.
TEST(TriageTest, AnEpochEvaluationAtItsTotalEndsTheRun) {
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "torch-distributed-launch-gpt2-ptb-random-ltd-2-of-2-epochs-perplexity-saving-model-healthy" /
                       "train_with_kernel.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);

  std::vector<std::string> lines;
  {
    std::FILE* in = std::fopen(log.c_str(), "r");
    ASSERT_NE(in, nullptr);
    char buf[8192];
    while (std::fgets(buf, sizeof buf, in)) lines.emplace_back(buf);
    std::fclose(in);
  }
  const fs::path cut = fs::path(::testing::TempDir()) / "epoch-evaluation-cut.log";
  std::FILE* out = std::fopen(cut.c_str(), "w");
  ASSERT_NE(out, nullptr);
  int after = -1;
  for (const auto& l : lines) {
    std::fputs(l.c_str(), out);
    if (l.find("Evaluating perplexity, Epoch 1/2") != std::string::npos) after = 0;
    if (after >= 0 && ++after > 200) break;  // well into epoch 2, before its evaluation
  }
  std::fclose(out);
  ASSERT_GT(after, 200);
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto stalled = Triage(cut_options);
  ASSERT_TRUE(stalled.ok());
  EXPECT_EQ(stalled->verdict, report::Verdict::kStalled);
  EXPECT_EQ(stalled->last_phase.value_or(""), "training");
}

// Writes the first lines of `log` to a temporary file, up to (not including) the first line that contains
// `stop`; returns that file's path, or an empty path when `stop` is not found.
static fs::path CutBefore(const fs::path& log, const std::string& stop, const std::string& name) {
  std::FILE* in = std::fopen(log.c_str(), "r");
  if (!in) return {};
  const fs::path cut = fs::path(::testing::TempDir()) / name;
  std::FILE* out = std::fopen(cut.c_str(), "w");
  bool found = false;
  char buf[65536];
  while (out && std::fgets(buf, sizeof buf, in)) {
    if (std::string(buf).find(stop) != std::string::npos) {
      found = true;
      break;
    }
    std::fputs(buf, out);
  }
  std::fclose(in);
  if (out) std::fclose(out);
  return found ? cut : fs::path();
}

TEST(TriageTest, ACounterFirstSeenAtItsTotalWhereAnotherCounterStandsEndsTheRun) {
  // modded-nanogpt: readouts "trail_delta step:2850 ..." (a step counter without a total) at the last step,
  // then the final "step:2850/2850 val_loss:..." (another rule's counter, first seen, at its total) at the
  // same step: the run reached its declared total.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "torchrun-modded-nanogpt-track3-final-val-step-at-total-after-same-step-readout-lines-healthy" /
                       "tail_phase_readout_2850_seed9.txt";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);

  const fs::path cut = CutBefore(log, "step:2850/2850 val_loss", "same-step-total-cut.log");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto stalled = Triage(cut_options);
  ASSERT_TRUE(stalled.ok());
  EXPECT_EQ(stalled->verdict, report::Verdict::kStalled);
  EXPECT_EQ(stalled->last_phase.value_or(""), "training");
}

TEST(TriageTest, ProcessGroupsDestroyedAtExitEndATrainingRun) {
  // torchtitan RL: steps 0-49 of 50, then each rank's "destroy_process_group() was not called before program
  // exit" (ProcessGroupNCCL's destructor at interpreter exit): the processes exited, the run ended.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "torchtitan-monarch-rl-ppo-qwen3-50-steps-cute-dsl-import-warnings-pg-not-destroyed-at-exit-healthy" /
                       "run.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);

  const fs::path cut = CutBefore(log, "destroy_process_group() was not called", "pg-destroyed-cut.log");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto stalled = Triage(cut_options);
  ASSERT_TRUE(stalled.ok());
  EXPECT_EQ(stalled->verdict, report::Verdict::kStalled);
  EXPECT_EQ(stalled->last_phase.value_or(""), "training");
}

TEST(TriageTest, ACliErrorOfAWrappersCleanUpAfterTheJobCompletedIsTeardown) {
  // SGLang's Ascend CI: the benchmark report and unittest's "OK", then the monitor's clean-up loop runs
  // kubectl with an empty job name: "error: resource(s) were provided, but no name was specified".
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "sglang-ascend-ci-pd-2p1d-32p-deepseek-r1-unittest-ok-then-kubectl-no-name-error-healthy" /
                       "test_ascend_deepseek_r1_w8a8_2p1d_32p_in6k_out1k6_15ms.py.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);
  // The same kind of line before any completion (kubectl's "error: the path ... does not exist" at the
  // start, the log cut right after it) is still the job's error.
  const fs::path cut = CutBefore(log, "No sglang job exist, start test case", "cli-error-before-completion.log");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto early = Triage(cut_options);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->verdict, report::Verdict::kFailure);
}

TEST(TriageTest, AUnittestOkEndsTheTestJob) {
  // SGLang's Ascend CI, a DeepEP test without a benchmark report: "Ran 1 test in 567.775s", "OK", then
  // kubectl's clean-up error. Without the "OK" line nothing says the job finished, and that error is the root.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "sglang-ascend-ci-deepep-fused-moe-deepseek-r1-unittest-ok-then-kubectl-no-name-error-healthy" /
                       "test_ascend_deepep_fused_deep_moe_deepseek_r1.py.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);

  // The same log without unittest's "OK" line: nothing says the test passed, and kubectl's error is the root.
  const fs::path no_ok = fs::path(::testing::TempDir()) / "unittest-no-ok.log";
  {
    std::FILE* in = std::fopen(log.c_str(), "r");
    ASSERT_NE(in, nullptr);
    std::FILE* out = std::fopen(no_ok.c_str(), "w");
    ASSERT_NE(out, nullptr);
    char buf[65536];
    int dropped = 0;
    while (std::fgets(buf, sizeof buf, in)) {
      if (std::string(buf) == "OK\n") {
        ++dropped;
        continue;
      }
      std::fputs(buf, out);
    }
    std::fclose(in);
    std::fclose(out);
    ASSERT_EQ(dropped, 1);
  }
  TriageOptions no_ok_options;
  no_ok_options.inputs = {no_ok.string()};
  auto without = Triage(no_ok_options);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->verdict, report::Verdict::kFailure);
}

TEST(TriageTest, AHangStopAfterAUnittestOkStillStallsTheJob) {
  // A PD prefill node's driver waits an hour, prints unittest's "OK", then its launcher thread reports
  // "Server failed to start within the timeout period" (a hang stop): the node stalled at distributed-init.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "sglang-hang-gloo-rank-not-connected-prefill" / "prefill-0.log";
  TriageOptions options;
  options.inputs = {log.string()};
  auto result = Triage(options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->verdict, report::Verdict::kStalled);
  EXPECT_EQ(result->last_phase.value_or(""), "distributed-init");
}

TEST(ScanInputsTest, EventCapKeepsTheEarliestAcrossFiles) {
  Findings into;
  for (int file = 0; file < 3; ++file) {
    Findings one;
    for (size_t i = 0; i < Findings::kMaxEvents / 2 + 1; ++i) {
      events::Event e;
      e.where.file = file;
      e.where.line = static_cast<int64_t>(i) + 1;
      one.events.push_back(std::move(e));
    }
    one.events_dropped = 5;
    MergeFindings(std::move(one), &into);
  }
  ASSERT_EQ(into.events.size(), Findings::kMaxEvents);
  EXPECT_EQ(into.events.back().where.file, 1);
  EXPECT_EQ(into.events_dropped,
            3 * (static_cast<int64_t>(Findings::kMaxEvents / 2) + 1) - static_cast<int64_t>(Findings::kMaxEvents) + 15);
}

// Blocks come out in input order, cleaned and scanned alike, whatever the
// number of scan threads.
TEST(BlockPipelineTest, ScanThreadsKeepInputOrder) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  auto rules = BuildScanRuleSet(std::move(*builtin));
  ASSERT_TRUE(rules.ok());
  const fs::path tmp = fs::temp_directory_path() / ("faultline-pipeline-" + std::to_string(::getpid()) + ".log");
  {
    std::FILE* out = std::fopen(tmp.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    for (int round = 0; round < 5; ++round) {
      for (const auto& f : GoldenLogs()) {  // real lines, \r rewrites and ANSI codes included
        std::FILE* in = std::fopen(f.path.c_str(), "rb");
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) std::fwrite(buf, 1, n, out);
        std::fclose(in);
      }
    }
    std::fclose(out);
  }
  auto collect = [&](int threads) {
    std::vector<std::string> seen;
    SetPipelineScanThreads(threads);
    auto source = input::OpenByteSource(tmp.string());
    EXPECT_TRUE(source.ok());
    input::LineReaderOptions options;
    options.block_bytes = 4096;  // hundreds of blocks
    input::LineReader reader(std::move(*source), options);
    BlockPipeline pipeline(&reader, (*rules)->matcher(), threads != 0);
    while (const ScannedBlock* b = pipeline.Next()) {
      std::string d = b->data;
      for (const auto& h : b->hits) d += " " + std::to_string(h.id) + "@" + std::to_string(h.end);
      seen.push_back(std::move(d));
    }
    SetPipelineScanThreads(-1);
    return seen;
  };
  const auto inline_blocks = collect(0);
  ASSERT_GT(inline_blocks.size(), 100u);
  for (int threads : {1, 3, 7}) EXPECT_EQ(collect(threads), inline_blocks) << threads << " scan threads";
  fs::remove(tmp);
}

// The time of a line without a clock is never parsed: every format the line
// parser reads a time from must hold "HH:MM:SS". Checked on every line of the
// real logs in tests/.
TEST(MayCarryTimeTest, EveryParsedTimeHasAClock) {
  size_t lines = 0, timed = 0;
  for (const char* dir : {"golden", "real"}) {
    for (const auto& f : fs::recursive_directory_iterator(fs::path(FAULTLINE_SOURCE_DIR) / "tests" / dir)) {
      if (!f.is_regular_file() || f.path().extension() == ".md" || f.path().extension() == ".json") continue;
      auto source = input::OpenByteSource(f.path().string());
      if (!source.ok()) continue;
      input::LineReader reader(std::move(*source));
      input::LineBlock block;
      std::string clean;
      while (reader.NextBlock(&block)) {
        std::string_view data = block.data;
        for (size_t pos = 0; pos < data.size();) {
          size_t nl = data.find('\n', pos);
          if (nl == std::string_view::npos) nl = data.size();
          clean.clear();
          input::CleanLineInto(data.substr(pos, nl - pos), &clean);
          ++lines;
          if (parse::ParseLine(clean).time.valid) {
            ++timed;
            EXPECT_TRUE(MayCarryTime(clean)) << f.path() << ": " << clean;
          }
          pos = nl + 1;
        }
      }
    }
  }
  EXPECT_GT(timed, 1000u) << lines << " lines";
  EXPECT_FALSE(MayCarryTime("step 2/20 loss 0.6900 lr 0.0500"));
  EXPECT_FALSE(MayCarryTime("gpu-node-0:5001:5001 [1] NCCL INFO Channel 29/37 : 8"));
  EXPECT_TRUE(MayCarryTime("INFO 05-09 15:14:59 [core.py:239] x"));
  EXPECT_TRUE(MayCarryTime("12:00:00"));
  EXPECT_FALSE(MayCarryTime("12:00:0"));
}

// The log without the lines that hold `drop` (a copy in the test's temp dir), or an empty path when none did.
static fs::path Without(const fs::path& log, const std::string& drop, const std::string& name) {
  std::FILE* in = std::fopen(log.c_str(), "r");
  if (!in) return {};
  const fs::path copy = fs::path(::testing::TempDir()) / name;
  std::FILE* out = std::fopen(copy.c_str(), "w");
  bool found = false;
  char buf[65536];
  while (out && std::fgets(buf, sizeof buf, in)) {
    if (std::string(buf).find(drop) != std::string::npos) {
      found = true;
      continue;
    }
    std::fputs(buf, out);
  }
  std::fclose(in);
  if (out) std::fclose(out);
  return found ? copy : fs::path();
}

static const char kMlperfRunStop[] = "\"key\": \"run_stop\"";

TEST(TriageTest, APeerRanksLoggedAsyncNcclErrorTextAfterTheJobCompletedIsTeardown) {
  // MLPerf Stable Diffusion on 32 ranks: rank 0's run_stop (status success), then rank 30's watchdog logs
  // "[E511 ...] ... found async exception when checking for NCCL errors: NCCL error: unhandled system error"
  // and the c10::Error's what() text under it ("ncclSystemError: System call ... failed ...", an exception
  // line of its own) while the communicators are torn down.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "mlperf-v50-hpe-xd670-h200-n4-stable-diffusion-run-stop-success-then-peer-rank-nccl-proxy-close-async-error-healthy" /
                       "result_1.txt";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);
  // Without the run's completion the same error is the job's.
  const fs::path cut = Without(log, kMlperfRunStop, "sd-no-run-stop.txt");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto failed = Triage(cut_options);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->verdict, report::Verdict::kFailure);
}

TEST(TriageTest, ASchedulersTimeLimitAfterTheJobCompletedEndsOnlyItsTeardown) {
  // MLPerf RetinaNet under Slurm: run_stop (status success), the final evaluation and every rank's exit
  // warning, then "slurmstepd: error: *** STEP ... CANCELLED AT ... DUE TO TIME LIMIT ***" for a process
  // of the step that lingered: the work was done before the limit.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "mlperf-v50-oracle-b200-retinanet-run-stop-success-then-slurm-step-time-limit-at-exit-healthy" /
                       "result_0.txt";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);
  // Without the completion the limit ended a job that was still at work: the limit is the root cause.
  const fs::path cut = Without(log, kMlperfRunStop, "retinanet-no-run-stop.txt");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto failed = Triage(cut_options);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->verdict, report::Verdict::kFailure);
  ASSERT_TRUE(failed->root_cause.has_value());
  EXPECT_NE(failed->root_cause->message.find("DUE TO TIME LIMIT"), std::string::npos);
}

TEST(TriageTest, AsyncioCallbackReportAtShutdownThenTheWandbFooterIsHealthy) {
  // An ART agent test on Unsloth's vLLM: "[TEST] agent finished.", asyncio's "Exception in callback ..."
  // report (the loop's handler caught a CancelledError in a done-callback) and W&B's footer ending "wandb: Find
  // logs at: ...". Without the footer nothing says the script ended; the report is still no failure.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "unsloth-art-langgraph-rollout-test-finished-asyncio-exception-in-callback-cancellederror-at-close-wandb-footer-healthy" /
                       "model_test.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy);
  const fs::path cut = CutBefore(log, "wandb: Find logs at:", "art-no-wandb-footer.log");
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto open = Triage(cut_options);
  ASSERT_TRUE(open.ok());
  EXPECT_NE(open->verdict, report::Verdict::kFailure);
}

TEST(TriageTest, ACutOffAwaitersTracebackTakesTheExceptionTheLoopsHandlerReportedAboveIt) {
  // LMDeploy's VL engine: asyncio's "Exception in callback _raise_exception_on_finish(...)" report (the loop's
  // handler caught it: swallowed) carries "ValueError: unsupported modality image_url"; the awaiter's
  // traceback under it ("outputs = await future") is cut off by the paste before its exception line.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "lmdeploy-vl-served-request-unsupported-modality-image-url" / "server.log";
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kFailure);
  ASSERT_TRUE(full->root_cause.has_value());
  EXPECT_NE(full->root_cause->message.find("unsupported modality image_url"), std::string::npos)
      << full->root_cause->message;
}


// Session 15 (healthy): framework lines that close a run, each found on a public log that was stalled blind.
static void ExpectHealthyWholeAndStalledCut(const char* dir, const char* file, const char* stop, const char* name,
                                            const char* cut_phase) {
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" / dir / file;
  TriageOptions whole;
  whole.inputs = {log.string()};
  auto full = Triage(whole);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->verdict, report::Verdict::kHealthy) << dir;

  const fs::path cut = CutBefore(log, stop, name);
  ASSERT_FALSE(cut.empty());
  TriageOptions cut_options;
  cut_options.inputs = {cut.string()};
  auto stalled = Triage(cut_options);
  ASSERT_TRUE(stalled.ok());
  EXPECT_EQ(stalled->verdict, report::Verdict::kStalled) << dir;
  EXPECT_EQ(stalled->last_phase.value_or(""), cut_phase) << dir;
}

TEST(TriageTest, NcclsCommunicatorDestroyedAtTheEndOfAScriptEndsTheRun) {
  // A Kubeflow PyTorchJob's rank 0: 50 epochs, the script's own (Korean) closing lines, then train.py's
  // dist.destroy_process_group(), which NCCL logs as "comm 0x... rank 0 nranks 2 ... - Destroy COMPLETE".
  ExpectHealthyWholeAndStalledCut(
      "kubeflow-pytorchjob-2-node-efa-mnist-ddp-50-epochs-korean-total-time-model-saved-nccl-destroy-healthy",
      "rank0.log", "- Destroy COMPLETE", "nccl-destroy-cut.log", "training");
}

TEST(TriageTest, ColbertsLauncherJoinedEveryRankEndsTheRun) {
  // ColBERT's Launcher prints "#> Joined..." after proc.join(), once every rank's return value arrived.
  ExpectHealthyWholeAndStalledCut("colbert-launcher-2gpu-train-nohup-checkpoint-saved-processes-joined-healthy",
                                  "train.out", "#> Joined...", "colbert-joined-cut.log", "process-start");
  // A second launch after the first one joined ("#> Starting..." again, then nothing): the job's work began
  // again and did not end, so the first "#> Joined..." is no end of the job.
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "colbert-launcher-2gpu-train-nohup-checkpoint-saved-processes-joined-healthy" / "train.out";
  const fs::path relaunched = fs::path(::testing::TempDir()) / "colbert-relaunched.log";
  {
    std::FILE* in = std::fopen(log.c_str(), "r");
    ASSERT_NE(in, nullptr);
    std::FILE* out = std::fopen(relaunched.c_str(), "w");
    ASSERT_NE(out, nullptr);
    char buf[65536];
    while (std::fgets(buf, sizeof buf, in)) std::fputs(buf, out);
    std::fputs("#> Starting...\n#> Starting...\n", out);
    std::fclose(in);
    std::fclose(out);
  }
  TriageOptions again;
  again.inputs = {relaunched.string()};
  auto second = Triage(again);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->verdict, report::Verdict::kStalled);
}


}  // namespace
}  // namespace faultline::diagnosis
