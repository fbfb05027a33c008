#include "supervise/pipeline_spec.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, gpus: [0,1]}\n  b: {command: y, gpus: '1,2'}\n")
                .find("GPU 1 is given to both a and b"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, depends_on: [b]}\n").find("unknown 'b'"), std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, depends_on: [b]}\n  b: {command: y, depends_on: [a]}\n")
                .find("dependency cycle"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, kind: service}\n  b: {command: y, depends_on: [a]}\n")
                .find("has no ready: probe"),
            std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, comand: y}\n").find("unknown key 'comand'"), std::string::npos);
  EXPECT_NE(ErrorOf("services:\n  a: {command: x, ready: {http: 'https://h/'}}\n").find("only http://"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("services:\n  a: {command: x, gpus: [0], environment: {CUDA_VISIBLE_DEVICES: '1'}}\n").find("not both"),
      std::string::npos);
  EXPECT_NE(ErrorOf("services: [\n").find("p.yaml:"), std::string::npos);
}

TEST(PipelineSpecTest, SingleCommandIsNamedAfterTheScript) {
  EXPECT_EQ(SingleCommandPipeline({"python3", "train/train_dflash.py", "--lr", "1"}, 300, 10).name, "train_dflash");
  EXPECT_EQ(SingleCommandPipeline({"/usr/bin/vllm", "serve", "m"}, 300, 10).name, "vllm");
}

}  // namespace
}  // namespace faultline::supervise
