// End-to-end: runs the built faultline binary (FAULTLINE_BINARY) the way a
// user would, in a clean environment, and checks exit codes, the text
// output, and that every --json output conforms to docs/preflight.schema.json.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "json_schema.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class PreflightE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / fmt::format("faultline-preflight-e2e-{}", getpid());
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  // Runs `faultline preflight ARGS` with only PATH, HOME (an empty temp dir)
  // and `env` set.
  RunResult Run(const std::vector<std::string>& env, const std::vector<std::string>& args) {
    std::string err_file = (home_ / "stderr.txt").string();
    std::string cmd = "env -i PATH=/usr/bin:/bin HOME=" + Quote(home_.string());
    for (const std::string& e : env) cmd += " " + Quote(e);
    cmd += " " + Quote(FAULTLINE_BINARY) + " preflight";
    for (const std::string& a : args) cmd += " " + Quote(a);
    cmd += " 2>" + Quote(err_file);
    RunResult r;
    FILE* p = popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream ef(err_file);
    std::ostringstream ss;
    ss << ef.rdbuf();
    r.err = ss.str();
    return r;
  }

  // Parses --json output and checks it against the schema.
  json Validated(const RunResult& r) {
    json doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out << r.err;
    if (doc.is_discarded()) return json::object();
    std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) + "/docs/preflight.schema.json");
    json schema = json::parse(in);
    for (const std::string& e : testing::ValidateSchema(schema, doc)) ADD_FAILURE() << "schema: " << e;
    EXPECT_EQ(doc["blocking"].get<bool>(), r.exit_code == 1) << "exit code must follow 'blocking'";
    return doc;
  }

  static std::string Fixture(const std::string& model) {
    return std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/" + model + "/config.json";
  }

  static const json* Finding(const json& doc, const std::string& check) {
    for (const json& f : doc["findings"]) {
      if (f["check"] == check) return &f;
    }
    return nullptr;
  }

  fs::path home_;
};

const std::vector<std::string> kSeedCommand = {
    "--", "vllm", "serve", "Qwen/Qwen3.6-27B", "--tensor-parallel-size", "2", "--data-parallel-size", "2"};

std::vector<std::string> SeedArgs(bool json) {
  std::vector<std::string> a = {"--gpus", "8", "--gpu-memory", "48GiB", "--model-config", "MODEL"};
  a[5] = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3.5-35b-a3b/config.json";
  if (json) a.push_back("--json");
  a.insert(a.end(), kSeedCommand.begin(), kSeedCommand.end());
  return a;
}

TEST_F(PreflightE2eTest, SeedCaseIsBlocking) {
  RunResult r = Run({"CUDA_VISIBLE_DEVICES=0,1"}, SeedArgs(true));
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  json doc = Validated(r);
  EXPECT_TRUE(doc["blocking"].get<bool>());
  EXPECT_EQ(doc["estimates"]["gpus_needed"], 4);
  EXPECT_EQ(doc["estimates"]["gpus_visible"], 2);
  EXPECT_EQ(doc["visible_devices"], "CUDA_VISIBLE_DEVICES=0,1");
  const json* f = Finding(doc, "gpu-count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ((*f)["severity"], "blocking");
  EXPECT_EQ((*f)["tool_error"], "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_EQ((*f)["fix"], "CUDA_VISIBLE_DEVICES=0,1,2,3, or --data-parallel-size 1");
  EXPECT_EQ(doc["estimates"]["max_model_len"], 262144);
}

TEST_F(PreflightE2eTest, SeedCaseText) {
  RunResult r = Run({"CUDA_VISIBLE_DEVICES=0,1"}, SeedArgs(false));
  ASSERT_EQ(r.exit_code, 1);
  EXPECT_NE(
      r.out.find("BLOCKING  needs 4 GPUs on this node (TP 2 x PP 1 x DP 2), 2 visible (CUDA_VISIBLE_DEVICES=0,1)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("vLLM would fail with: AssertionError: DP adjusted local rank 3 is out of bounds."),
            std::string::npos);
  EXPECT_NE(r.out.find("fix: CUDA_VISIBLE_DEVICES=0,1,2,3, or --data-parallel-size 1"), std::string::npos);
}

TEST_F(PreflightE2eTest, SeedCaseWithFourGpusPasses) {
  RunResult r = Run({"CUDA_VISIBLE_DEVICES=0,1,2,3"}, SeedArgs(true));
  json doc = Validated(r);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ((*Finding(doc, "gpu-count"))["severity"], "ok");
  EXPECT_EQ(doc["estimates"]["gpus_visible"], 4);
}

TEST_F(PreflightE2eTest, GpuTypeFromTheCatalog) {
  RunResult r =
      Run({}, {"--json", "--gpus", "4", "--gpu-type", "L40S", "--model-config", Fixture("llama-3.1-70b-instruct"), "--",
               "vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "4", "--max-model-len", "8192"});
  json doc = Validated(r);
  EXPECT_EQ(doc["gpus"][0]["name"], "NVIDIA L40S");
  EXPECT_NEAR(doc["estimates"]["gpu_memory_gib"].get<double>(), 44.99, 0.01);
  EXPECT_NEAR(doc["estimates"]["weights_gib_per_gpu"].get<double>(), 32.9, 0.3);
}

TEST_F(PreflightE2eTest, HuggingFaceCacheLayoutIsSearched) {
  fs::path repo = home_ / "hf" / "hub" / "models--Qwen--Qwen3-8B";
  fs::create_directories(repo / "snapshots" / "a1b2");
  fs::create_directories(repo / "refs");
  std::ofstream(repo / "refs" / "main") << "a1b2";
  fs::copy_file(Fixture("qwen3-8b"), repo / "snapshots" / "a1b2" / "config.json");
  std::ofstream(repo / "snapshots" / "a1b2" / "model.safetensors.index.json")
      << R"({"metadata": {"total_size": 16381470720}, "weight_map": {"lm_head.weight": "model-00001-of-00002.safetensors",
           "model.norm.weight": "model-00002-of-00002.safetensors"}})";
  std::ofstream(repo / "snapshots" / "a1b2" / "model-00001-of-00002.safetensors") << "x";
  RunResult r = Run({"HF_HOME=" + (home_ / "hf").string()},
                    {"--json", "--gpus", "1", "--gpu-memory", "80GiB", "--", "vllm", "serve", "Qwen/Qwen3-8B"});
  json doc = Validated(r);
  EXPECT_NE(doc["model_config"].get<std::string>().find("models--Qwen--Qwen3-8B/snapshots/a1b2/config.json"),
            std::string::npos);
  // The index says 16.4 GB of fp32 weights (config dtype float32): vLLM runs them in bf16;
  // plus the rotary cos/sin cache (40960 positions x 128 x 2 bytes).
  EXPECT_NEAR(doc["estimates"]["weights_gib_per_gpu"].get<double>(),
              (16381470720.0 / 2 + 40960.0 * 128 * 2) / (1 << 30), 0.01);
  const json* files = Finding(doc, "model-files");
  ASSERT_NE(files, nullptr);
  EXPECT_EQ((*files)["severity"], "blocking");  // shard 2 of 2 is missing
  EXPECT_EQ(r.exit_code, 1);
}

TEST_F(PreflightE2eTest, OfflineAndNotCachedBlocks) {
  RunResult r = Run({"HF_HUB_OFFLINE=1"},
                    {"--json", "--gpus", "1", "--gpu-memory", "80GiB", "--", "vllm", "serve", "org/not-downloaded"});
  json doc = Validated(r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ((*Finding(doc, "model-files"))["severity"], "blocking");
  EXPECT_TRUE(doc["estimates"]["weights_gib_per_gpu"].is_null());
}

TEST_F(PreflightE2eTest, SglangAndTorchrunCommandLines) {
  RunResult s = Run({"CUDA_VISIBLE_DEVICES=0,1"},
                    {"--json", "--gpus", "8", "--gpu-memory", "80GiB", "--model-config",
                     Fixture("mixtral-8x7b-instruct-v0.1"), "--", "python3", "-m", "sglang.launch_server",
                     "--model-path", "mistralai/Mixtral-8x7B-Instruct-v0.1", "--tp-size", "4"});
  json sdoc = Validated(s);
  EXPECT_EQ(sdoc["launcher"], "sglang");
  EXPECT_EQ((*Finding(sdoc, "gpu-count"))["tool_error"], "RuntimeError: CUDA error: invalid device ordinal");
  RunResult t = Run({}, {"--json", "--gpus", "2", "--gpu-memory", "24GiB", "--", "torchrun", "--standalone",
                         "--nproc_per_node=2", "train.py", "--epochs", "1"});
  json tdoc = Validated(t);
  EXPECT_EQ(tdoc["launcher"], "torchrun");
  EXPECT_EQ(tdoc["model"], "train.py");
  EXPECT_EQ(t.exit_code, 0) << t.out;
}

TEST_F(PreflightE2eTest, BadInputExitsTwoWithNothingOnStdout) {
  std::ofstream(home_ / "broken.json") << "{\"num_hidden_layers\": 32, ";
  std::ofstream(home_ / "foreign.json") << "{\"model_type\": \"resnet\", \"depths\": [3, 4, 6, 3]}";
  std::vector<std::vector<std::string>> cases = {
      {"--gpus", "2", "--gpu-memory", "80GiB", "--model-config", (home_ / "broken.json").string(), "--", "vllm",
       "serve", "m"},
      {"--gpus", "2", "--gpu-memory", "80GiB", "--model-config", (home_ / "foreign.json").string(), "--", "vllm",
       "serve", "m"},
      {"--gpus", "2", "--gpu-memory", "80GiB", "--model-config", (home_ / "absent.json").string(), "--", "vllm",
       "serve", "m"},
      {"--gpus", "2", "--gpu-type", "potato-9000", "--", "vllm", "serve", "m"},
      {"--gpus", "2", "--gpu-memory", "lots", "--", "vllm", "serve", "m"},
      {"--gpus", "2", "--gpu-memory", "80GiB", "--", "bash", "start.sh"},
      {"--gpus", "2", "--gpu-memory", "80GiB", "--", "vllm", "serve", "m", "--tensor-parallel-size", "two"},
      {"--gpus", "2", "--gpu-memory", "80GiB"},
  };
  for (const std::vector<std::string>& args : cases) {
    RunResult r = Run({}, args);
    EXPECT_EQ(r.exit_code, 2) << args[args.size() - 1] << ": " << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("faultline preflight"), std::string::npos) << r.err;
  }
}

TEST_F(PreflightE2eTest, NoGpuAndNoPlanIsAnInputError) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  RunResult r = Run({}, {"--", "vllm", "serve", "m"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus N"), std::string::npos) << r.err;
  RunResult list = Run({}, {"--list-gpus"});
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_TRUE(list.out.empty());
  EXPECT_NE(list.err.find("libnvidia-ml.so.1"), std::string::npos) << list.err;
}

}  // namespace
}  // namespace faultline
