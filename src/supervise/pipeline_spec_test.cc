#include "supervise/pipeline_spec.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace faultline::supervise {
namespace {

TEST(PipelineSpecTest, TheSeedPipelineExampleParses) {
  auto p = LoadPipelineFile(std::string(FAULTLINE_SOURCE_DIR) + "/examples/seed-pipeline/pipeline.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->services.size(), 2u);
  const ServiceSpec& server = p->services[0];
  const ServiceSpec& trainer = p->services[1];
  EXPECT_EQ(server.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(server.is_job);
  EXPECT_EQ(server.ready.kind, ReadySpec::Kind::kHttp);
  EXPECT_EQ(trainer.gpus, (std::vector<int>{2, 3}));
  EXPECT_TRUE(trainer.is_job);
  ASSERT_EQ(trainer.depends_on.size(), 1u);
  EXPECT_EQ(trainer.depends_on[0].condition, Dependency::Condition::kReady);
}

TEST(PipelineSpecTest, ComposeFormsAndDefaults) {
  auto p = ParsePipeline(R"(
processes:
  db:
    command: ["python3", "-m", "http.server", "9000"]
    ready: {tcp: "127.0.0.1:9000", timeout: 30s}
  prep:
    command: echo prep
    environment: ["A=1", "B=two"]
  work:
    command: echo work
    depends_on:
      db: {condition: service_healthy}
      prep: {condition: process_completed_successfully}
)",
                         "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->name, "p");
  EXPECT_EQ(p->services[0].ready.timeout, 30);
  EXPECT_EQ(p->services[1].argv, (std::vector<std::string>{"/bin/sh", "-c", "echo prep"}));
  EXPECT_EQ(p->services[1].env.at("B"), "two");
  EXPECT_TRUE(p->services[1].is_job);
  EXPECT_EQ(p->services[2].depends_on[1].condition, Dependency::Condition::kCompleted);
}

std::string ErrorOf(const std::string& yaml) {
  auto p = ParsePipeline(yaml, "p.yaml");
  return p.ok() ? "" : p.status().message();
}

TEST(PipelineSpecTest, MistakesAreCaughtBeforeAnythingRuns) {
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, gpus: [0,1]}\n  b: {command: "
                    "y, gpus: '1,2'}\n")
                .find("GPU 1 is given to both a and b"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, depends_on: [b]}\n").find("unknown 'b'"), std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, depends_on: [b]}\n  b: "
                    "{command: y, depends_on: [a]}\n")
                .find("dependency cycle"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, kind: service}\n  b: "
                    "{command: y, depends_on: {a: {condition: "
                    "ready}}}\n")
                .find("has no ready: probe"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, comand: y}\n").find("unknown key 'comand'"), std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, ready: {http: 'https://h/'}}\n").find("only http://"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, gpus: [0], environment: "
                    "{CUDA_VISIBLE_DEVICES: '1'}}\n")
                .find("not both"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services: [\n").find("p.yaml:"), std::string::npos);
}

// Compose users' files (issue 14, point 6).

// docker compose's depends_on: [server] means "started"; it must not wait
// for a probe-less server to complete (it never does: a deadlock).
TEST(ComposeSemanticsTest, BareDependsOnAServiceWithoutProbeMeansStarted) {
  auto p = ParsePipeline(
      "services:\n  server: {command: sleep 100}\n  client: "
      "{command: echo hi, depends_on: [server]}\n",
      "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->services[1].depends_on.size(), 1u);
  EXPECT_EQ(p->services[1].depends_on[0].condition, Dependency::Condition::kStarted);
  ASSERT_EQ(p->notes.size(), 1u);
  EXPECT_NE(p->notes[0].find("client starts once server has started"), std::string::npos) << p->notes[0];
  // With a probe it waits for ready; on a declared job, for completion.
  p = ParsePipeline(
      "services:\n  server: {command: x, ready: {tcp: "
      "'127.0.0.1:1'}}\n  prep: {command: y, kind: job}\n"
      "  client: {command: z, depends_on: [server, prep]}\n",
      "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->services[2].depends_on[0].condition, Dependency::Condition::kReady);
  EXPECT_EQ(p->services[2].depends_on[1].condition, Dependency::Condition::kCompleted);
  EXPECT_TRUE(p->notes.empty());
}

class PipelineDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/faultline-pipeline-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(PipelineDirTest, PathsResolveAgainstThePipelineFilesDirectory) {
  Write("conf/app.env", "# comment\nexport A=1\nB=\"two words\"\nC=3 # trailing\n\n");
  std::string file = Write("pipeline.yaml",
                           "services:\n  a:\n    command: ./run.sh\n    env_file: conf/app.env\n"
                           "    environment: {C: override}\n  b:\n    command: x\n    working_dir: "
                           "sub\n");
  auto p = LoadPipelineFile(file);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->services[0].working_dir,
            dir_);  // the default: the file's directory, as compose's project dir
  EXPECT_EQ(p->services[1].working_dir, dir_ + "/sub");
  EXPECT_EQ(p->services[0].env.at("A"), "1");
  EXPECT_EQ(p->services[0].env.at("B"), "two words");
  EXPECT_EQ(p->services[0].env.at("C"),
            "override");  // environment wins over env_file
  // A missing env_file is named with where it was looked for.
  std::string bad = Write("bad.yaml", "services:\n  a: {command: x, env_file: nope.env}\n");
  auto e = LoadPipelineFile(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find(dir_ + "/nope.env"), std::string::npos) << e.status().message();
}

TEST(ComposeSemanticsTest, ExtensionKeysAnchorsAndMergeKeys) {
  auto p = ParsePipeline(R"(
x-defaults: &defaults
  environment: {HF_HOME: /cache, LEVEL: info}
  stall_after: 10m
services:
  server:
    <<: *defaults
    command: serve
    x-note: ours
  worker:
    <<: *defaults
    command: work
    stall_after: 1m
)",
                         "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->services.size(), 2u);
  EXPECT_EQ(p->services[0].env.at("HF_HOME"), "/cache");
  EXPECT_EQ(p->services[0].stall_after, 600);
  EXPECT_EQ(p->services[1].stall_after,
            60);  // the map's own key wins over the merged one
  EXPECT_EQ(p->services[1].env.at("LEVEL"), "info");
}

TEST(ComposeSemanticsTest, VariableDefaultsAndRequiredVariables) {
  setenv("FL_SET", "yes", 1);
  setenv("FL_EMPTY", "", 1);
  unsetenv("FL_UNSET");
  auto p = ParsePipeline(R"(
# ${FL_UNSET:?not read: comments are not interpolated}
services:
  a:
    command: echo
    environment:
      A: ${FL_SET}
      B: ${FL_UNSET:-fallback}
      C: ${FL_EMPTY:-empty-too}
      D: ${FL_EMPTY-kept-empty}
      E: $FL_SET/x
      F: $$FL_SET
)",
                         "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const auto& env = p->services[0].env;
  EXPECT_EQ(env.at("A"), "yes");
  EXPECT_EQ(env.at("B"), "fallback");
  EXPECT_EQ(env.at("C"), "empty-too");
  EXPECT_EQ(env.at("D"), "");
  EXPECT_EQ(env.at("E"), "yes/x");
  EXPECT_EQ(env.at("F"), "$FL_SET");
  std::string err = ErrorOf(
      "services:\n  a:\n    command: serve "
      "${FL_UNSET:?set FL_UNSET to the model}\n");
  EXPECT_NE(err.find("p.yaml:3: FL_UNSET is required: set FL_UNSET to the model"), std::string::npos) << err;
}

TEST(ComposeSemanticsTest, ExecProbeWithRetriesAndStartPeriod) {
  auto p = ParsePipeline(R"(
services:
  server:
    command: serve
    ready:
      exec: ["curl", "-fs", "http://127.0.0.1:8000/health"]
      interval: 5s
      retries: 3
      start_period: 1m
)",
                         "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const ReadySpec& r = p->services[0].ready;
  EXPECT_EQ(r.kind, ReadySpec::Kind::kExec);
  EXPECT_EQ(r.target, "'curl' '-fs' 'http://127.0.0.1:8000/health'");
  EXPECT_EQ(r.timeout,
            60 + 3 * 5);  // start_period, then retries failures interval apart
  EXPECT_FALSE(p->services[0].is_job);
  // The probe itself: a command's exit status, killed at its timeout.
  EXPECT_TRUE(ExecReady("exit 0", "/", 5));
  EXPECT_FALSE(ExecReady("exit 3", "/", 5));
  EXPECT_FALSE(ExecReady("sleep 5", "/", 0.2));
  EXPECT_TRUE(ExecReady("test \"$(pwd)\" = /tmp", "/tmp", 5));
}

TEST(ComposeSemanticsTest, GpusAllCountAndIndexesAreUnambiguous) {
  auto p = ParsePipeline(
      "services:\n  a: {command: x, gpus: [0, 1]}\n  b: {command: y, gpus: "
      "{count: 2}}\n  c: {command: z, gpus: '4,5'}\n",
      "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->services[1].gpus, (std::vector<int>{2, 3}));  // the lowest ones nobody named
  EXPECT_TRUE(p->services[1].gpus_set);
  p = ParsePipeline("services:\n  a: {command: x, gpus: all}\n", "p.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p->services[0].gpus_all);
  EXPECT_FALSE(p->services[0].gpus_set);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, gpus: 2}\n")
                .find("gpus: 2 is ambiguous: write gpus: [2] for GPU 2, "
                      "or gpus: {count: 2}"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, gpus: all}\n  b: {command: "
                    "y, gpus: [0]}\n")
                .find("a has gpus: all"),
            std::string::npos);
  // Checked against the node when it is known.
  p = ParsePipeline(
      "services:\n  a: {command: x, gpus: [0, 1]}\n  b: "
      "{command: y, gpus: [7]}\n",
      "p.yaml");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(CheckGpusOnNode(*p, 8).ok());
  Status st = CheckGpusOnNode(*p, 2);
  EXPECT_NE(st.message().find("b: GPU 7 does not exist: this node has 2 GPU(s)"), std::string::npos) << st.message();
}

TEST(ComposeSemanticsTest, EveryErrorOfTheFileIsReportedAtOnce) {
  std::string err = ErrorOf(R"(
services:
  a:
    command: x
    comand: typo
    gpus: 3
  b:
    depends_on: [nope]
)");
  EXPECT_NE(err.find("unknown key 'comand'"), std::string::npos) << err;
  EXPECT_NE(err.find("gpus: 3 is ambiguous"), std::string::npos) << err;
  EXPECT_NE(err.find("b: no command"), std::string::npos) << err;
  EXPECT_NE(err.find("b depends on unknown 'nope'"), std::string::npos) << err;
  // One mistake per line.
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 3) << err;
}

TEST(PipelineSpecTest, SingleCommandIsNamedAfterTheScript) {
  EXPECT_EQ(SingleCommandPipeline({"python3", "train/train_dflash.py", "--lr", "1"}, 300, 10).name, "train_dflash");
  EXPECT_EQ(SingleCommandPipeline({"/usr/bin/vllm", "serve", "m"}, 300, 10).name, "vllm");
}

}  // namespace
}  // namespace faultline::supervise
