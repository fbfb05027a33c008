#include "preflight/launch_command.h"

#include <gtest/gtest.h>

#include <fstream>

namespace faultline::preflight {
namespace {

LaunchCommand MustParse(const std::vector<std::string>& argv) {
  Result<LaunchCommand> r = ParseLaunchCommand(argv);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : LaunchCommand{};
}

TEST(LaunchCommandTest, VllmServeWithLongShortAndEqualsForms) {
  LaunchCommand c = MustParse({"vllm", "serve", "Qwen/Qwen3.6-27B", "-tp=2", "--data_parallel_size", "2",
                               "--max-model-len=128K", "--gpu-memory-utilization", "0.85", "--enforce-eager",
                               "--no-enable-prefix-caching", "--served-model-name", "a", "b", "--port", "9000"});
  EXPECT_EQ(c.launcher, Launcher::kVllm);
  EXPECT_EQ(c.entry, "vllm serve");
  EXPECT_EQ(c.model, "Qwen/Qwen3.6-27B");
  EXPECT_EQ(c.Int("tensor_parallel_size", 1), 2);
  EXPECT_EQ(c.Int("data_parallel_size", 1), 2);
  EXPECT_EQ(c.Int("max_model_len", 0), 131072);  // human_readable_int: K is 1024
  EXPECT_DOUBLE_EQ(c.Float("gpu_memory_utilization", 0.9), 0.85);
  EXPECT_TRUE(c.Bool("enforce_eager"));
  EXPECT_EQ(c.Int("port", 8000), 9000);
  EXPECT_TRUE(c.unknown_flags.empty()) << c.unknown_flags.front();
}

TEST(LaunchCommandTest, VllmShortFormsForDataParallelAndExpertParallel) {
  LaunchCommand c = MustParse({"vllm", "serve", "deepseek-ai/DeepSeek-R1", "-tp", "8", "-dp", "2", "-dpl", "1", "-dpa",
                               "10.0.0.1", "-dpp", "13345", "--enable-expert-parallel"});
  EXPECT_EQ(c.Int("data_parallel_size_local", 0), 1);
  EXPECT_EQ(c.Str("data_parallel_address"), "10.0.0.1");
  EXPECT_TRUE(c.Bool("enable_expert_parallel"));
}

TEST(LaunchCommandTest, ApiServerModuleTakesModelFlagAndPrefixes) {
  LaunchCommand c = MustParse({"/usr/bin/python3", "-u", "-m", "vllm.entrypoints.openai.api_server", "--model",
                               "/models/llama", "--tensor-parallel", "4"});
  EXPECT_EQ(c.launcher, Launcher::kVllm);
  EXPECT_EQ(c.entry, "python -m vllm.entrypoints.openai.api_server");
  EXPECT_EQ(c.model, "/models/llama");
  EXPECT_EQ(c.Int("tensor_parallel_size", 1), 4);  // argparse unique prefix
}

TEST(LaunchCommandTest, SglangNamesAndEnvPrefix) {
  LaunchCommand c =
      MustParse({"CUDA_VISIBLE_DEVICES=2,3", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B",
                 "--tp", "2", "--mem-fraction-static", "0.8", "--context-length", "32768", "--port", "30001"});
  EXPECT_EQ(c.launcher, Launcher::kSglang);
  EXPECT_EQ(c.env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(c.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(c.Int("tensor_parallel_size", 1), 2);
  EXPECT_DOUBLE_EQ(c.Float("gpu_memory_utilization", 0), 0.8);
  EXPECT_EQ(c.Int("max_model_len", 0), 32768);
}

TEST(LaunchCommandTest, TorchrunStopsAtTheScript) {
  LaunchCommand c = MustParse({"torchrun", "--nproc_per_node=8", "--nnodes", "2", "--node-rank", "1", "--master-addr",
                               "10.1.1.1", "train.py", "--lr", "1e-4", "--nproc-per-node", "3"});
  EXPECT_EQ(c.launcher, Launcher::kTorchrun);
  EXPECT_EQ(c.Str("nproc_per_node"), "8");
  EXPECT_EQ(c.Str("nnodes_range"), "2");
  EXPECT_EQ(c.Int("node_rank", 0), 1);
  ASSERT_EQ(c.script_args.size(), 5u);
  EXPECT_EQ(c.script_args[0], "train.py");
}

TEST(LaunchCommandTest, UnknownFlagsAreReportedNotFatal) {
  LaunchCommand c = MustParse({"vllm", "serve", "m", "--frobnicate", "7", "--tensor-parallel-size", "2"});
  ASSERT_EQ(c.unknown_flags.size(), 1u);
  EXPECT_EQ(c.unknown_flags[0], "--frobnicate 7");
  EXPECT_EQ(c.Int("tensor_parallel_size", 1), 2);
}

TEST(LaunchCommandTest, BadInputIsAnError) {
  EXPECT_FALSE(ParseLaunchCommand({"bash", "run.sh"}).ok());
  EXPECT_FALSE(ParseLaunchCommand({"python", "-m", "http.server"}).ok());
  EXPECT_FALSE(ParseLaunchCommand({"vllm", "bench"}).ok());
  EXPECT_FALSE(ParseLaunchCommand({"vllm", "serve", "m", "--tensor-parallel-size", "two"}).ok());
  EXPECT_FALSE(ParseLaunchCommand({"vllm", "serve", "m", "--port"}).ok());
  EXPECT_FALSE(ParseLaunchCommand({}).ok());
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

TEST(LaunchCommandTest, VllmConfigFileFillsWhatTheCommandLineLeavesOut) {
  std::string path = ::testing::TempDir() + "/vllm-config.yaml";
  {
    std::ofstream out(path);
    out << "tensor-parallel-size: 4\nmax_model_len: 32768\nenforce-eager: true\ngpu-memory-utilization: 0.8\n";
  }
  Result<LaunchCommand> c =
      ParseLaunchCommand({"vllm", "serve", "m", "--config", path, "--gpu-memory-utilization", "0.95"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Int("tensor_parallel_size", 1), 4);
  EXPECT_EQ(c->Int("max_model_len", 0), 32768);
  EXPECT_TRUE(c->Bool("enforce_eager"));
  EXPECT_DOUBLE_EQ(c->Float("gpu_memory_utilization", 0), 0.95);  // the command line wins
  ASSERT_FALSE(c->notes.empty());
}

}  // namespace
}  // namespace faultline::preflight
