// RunPreflight end to end on planned GPUs and on a fake inventory.
#include "preflight/preflight.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preflight/units.h"
#include "probe/gpu_fake.h"

namespace faultline::preflight {
namespace {

std::string ModelConfig(const std::string& name) {
  return std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/" + name + "/config.json";
}

const Finding* FindCheck(const PreflightReport& r, const std::string& check) {
  for (const Finding& f : r.findings) {
    if (f.check == check) return &f;
  }
  return nullptr;
}

PreflightRequest Plan(std::vector<std::string> cmd, int gpus, const std::string& memory, const std::string& model) {
  PreflightRequest req;
  req.command = std::move(cmd);
  req.plan_gpus = gpus;
  req.plan_gpu_memory = *ParseByteSize(memory);
  if (!model.empty()) req.model_config = ModelConfig(model);
  return req;
}

TEST(PreflightTest, SeedCaseIsBlockingWithTheNumbersAndTheFix) {
  PreflightRequest req =
      Plan({"vllm", "serve", "Qwen/Qwen3.6-27B", "--tensor-parallel-size", "2", "--data-parallel-size", "2"}, 8,
           "48GiB", "qwen3.5-35b-a3b");
  req.env = {{"CUDA_VISIBLE_DEVICES", "0,1"}};
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->blocking());
  const Finding* f = FindCheck(*r, "gpu-count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_EQ(f->numbers.at("gpus_needed"), 4);
  EXPECT_EQ(f->numbers.at("gpus_visible"), 2);
  EXPECT_NE(f->message.find("needs 4 GPUs on this node (TP 2 x PP 1 x DP 2), 2 visible (CUDA_VISIBLE_DEVICES=0,1)"),
            std::string::npos)
      << f->message;
  EXPECT_EQ(f->tool_error, "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_EQ(f->fix, "CUDA_VISIBLE_DEVICES=0,1,2,3, or --data-parallel-size 1");
  EXPECT_EQ(r->estimates.gpus_needed, 4);
  EXPECT_EQ(r->estimates.gpus_visible, 2);
  EXPECT_EQ(r->estimates.max_model_len, 262144);
  ASSERT_TRUE(r->estimates.kv_cache_tokens.has_value());
}

TEST(PreflightTest, SeedCaseWithFourVisibleGpusPassesTheTopologyCheck) {
  PreflightRequest req =
      Plan({"vllm", "serve", "Qwen/Qwen3.6-27B", "--tensor-parallel-size", "2", "--data-parallel-size", "2"}, 8,
           "48GiB", "qwen3.5-35b-a3b");
  req.env = {{"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "gpu-count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kOk);
  EXPECT_FALSE(r->blocking());
}

TEST(PreflightTest, TensorParallelBeyondTheGpusUsesTheWorldSizeError) {
  PreflightRequest req = Plan({"vllm", "serve", "m", "-tp", "4"}, 2, "80GiB", "qwen3-8b");
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "gpu-count");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->tool_error.find("World size (4) is larger than the number of available GPUs (2)"), std::string::npos);
}

TEST(PreflightTest, AnotherProcessHoldingMemoryBlocks) {
  probe::GpuInventory inv;
  inv.source = "fake";
  for (int i = 0; i < 2; ++i) {
    probe::GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.uuid = "GPU-" + std::to_string(i);
    g.memory_total_bytes = 81559ULL << 20;
    g.memory_reserved_bytes = 479ULL << 20;  // NVML v2: CUDA sees 81080 MiB = 79.18 GiB, as vLLM prints
    inv.gpus.push_back(g);
  }
  inv.gpus[1].memory_used_bytes = 30ULL << 30;
  inv.gpus[1].processes.push_back({4242, 30ULL << 30, "python3"});
  std::unique_ptr<probe::GpuInventorySource> src = probe::NewFixedSource(inv);
  PreflightRequest req;
  req.command = {"vllm", "serve", "m", "-tp", "2"};
  req.model_config = ModelConfig("qwen3-8b");
  req.gpu_source = src.get();
  req.check_port = false;
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Finding* f = FindCheck(*r, "gpu-busy");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->message.find("pid 4242 python3"), std::string::npos) << f->message;
  EXPECT_NE(f->tool_error.find("Free memory on device cuda:1 (49.18/79.18 GiB) on startup is less than desired GPU "
                               "memory utilization (0.9, 71.26 GiB)"),
            std::string::npos)
      << f->tool_error;
}

TEST(PreflightTest, HeadsNotDivisibleByTp) {
  Result<PreflightReport> r =
      RunPreflight(Plan({"vllm", "serve", "m", "-tp", "3"}, 4, "80GiB", "llama-3.1-70b-instruct"));
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "divisibility");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_EQ(f->tool_error,
            "ValueError: Total number of attention heads (64) must be divisible by tensor parallel size (3).");
}

TEST(PreflightTest, KvCacheTooSmallForTheDefaultLength) {
  Result<PreflightReport> r = RunPreflight(
      Plan({"vllm", "serve", "meta-llama/Llama-3.1-70B-Instruct", "-tp", "4"}, 4, "48GiB", "llama-3.1-70b-instruct"));
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "kv-cache");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->tool_error.find("To serve at least one request with the model's max seq len (131072)"),
            std::string::npos);
  EXPECT_NE(f->message.find("(model default)"), std::string::npos);
  EXPECT_LT(f->numbers.at("estimated_max_len"), 131072);
  // The suggested length does fit.
  Result<PreflightReport> fixed = RunPreflight(
      Plan({"vllm", "serve", "m", "-tp", "4", "--max-model-len", "32768"}, 4, "48GiB", "llama-3.1-70b-instruct"));
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(FindCheck(*fixed, "kv-cache")->severity, Severity::kOk);
}

TEST(PreflightTest, WeightsThatCannotFit) {
  Result<PreflightReport> r =
      RunPreflight(Plan({"vllm", "serve", "deepseek-ai/DeepSeek-R1", "-tp", "8"}, 8, "80GiB", "deepseek-r1"));
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "weights-fit");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  // On H200s it fits.
  PreflightRequest h200 = Plan({"vllm", "serve", "deepseek-ai/DeepSeek-R1", "-tp", "8"}, 8, "1GiB", "deepseek-r1");
  h200.plan_gpu_memory.reset();
  h200.plan_gpu_type = "H200";
  Result<PreflightReport> ok = RunPreflight(h200);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(FindCheck(*ok, "weights-fit")->severity, Severity::kOk);
}

TEST(PreflightTest, MaxModelLenBeyondTheModel) {
  Result<PreflightReport> r =
      RunPreflight(Plan({"vllm", "serve", "m", "--max-model-len", "65536"}, 1, "80GiB", "qwen3-8b"));
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "max-model-len");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->tool_error.find("User-specified max_model_len (65536) is greater than the derived max_model_len "
                               "(max_position_embeddings=40960"),
            std::string::npos);
}

TEST(PreflightTest, MissingModelDirectoryBlocks) {
  PreflightRequest req = Plan({"vllm", "serve", "/nonexistent/models/foo"}, 1, "80GiB", "");
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "model-files");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
}

TEST(PreflightTest, PortInUseBlocks) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  probe::GpuInventory inv;
  probe::GpuInfo g;
  g.name = "NVIDIA L4";
  g.memory_total_bytes = 23034ULL << 20;
  inv.gpus.push_back(g);
  std::unique_ptr<probe::GpuInventorySource> src = probe::NewFixedSource(inv);
  PreflightRequest req;
  req.command = {"vllm", "serve", "m", "--port", std::to_string(port)};
  req.gpu_source = src.get();
  Result<PreflightReport> r = RunPreflight(req);
  close(fd);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "port");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->tool_error.find("address already in use"), std::string::npos);
}

TEST(PreflightTest, TorchrunMoreProcessesThanGpus) {
  PreflightRequest req = Plan({"torchrun", "--nproc-per-node", "8", "train.py"}, 4, "80GiB", "");
  req.env = {};
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "gpu-count");
  ASSERT_EQ(f->severity, Severity::kBlocking);
  EXPECT_EQ(f->fix, "this node has only 4 GPU(s): --nproc-per-node 4 (or more nodes)");
  // With enough GPUs on the node, the fix names the devices to expose.
  PreflightRequest narrow = Plan({"torchrun", "--nproc-per-node", "4", "train.py"}, 8, "80GiB", "");
  narrow.env = {{"CUDA_VISIBLE_DEVICES", "0,1"}};
  Result<PreflightReport> r2 = RunPreflight(narrow);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(FindCheck(*r2, "gpu-count")->fix, "expose 4 GPUs (CUDA_VISIBLE_DEVICES=0,1,2,3), or --nproc-per-node 2");
}

TEST(PreflightTest, SglangGpuIdsBeyondTheVisibleOnes) {
  Result<PreflightReport> r = RunPreflight(
      Plan({"python", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "2", "--base-gpu-id", "3"}, 4,
           "80GiB", "qwen3-8b"));
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "gpu-count");
  EXPECT_EQ(f->severity, Severity::kBlocking);
  EXPECT_NE(f->message.find("GPU ids run up to 4"), std::string::npos) << f->message;
}

TEST(PreflightTest, InputErrors) {
  PreflightRequest bad_type = Plan({"vllm", "serve", "m"}, 2, "1GiB", "");
  bad_type.plan_gpu_type = "potato-9000";
  bad_type.plan_gpu_memory.reset();
  EXPECT_EQ(RunPreflight(bad_type).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(RunPreflight(Plan({"bash", "x.sh"}, 2, "80GiB", "")).ok());
  PreflightRequest missing = Plan({"vllm", "serve", "m"}, 2, "80GiB", "");
  missing.model_config = "/nonexistent/config.json";
  EXPECT_EQ(RunPreflight(missing).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

int64_t Needed(const std::vector<std::string>& cmd, int gpus) {
  PreflightRequest req;
  req.command = cmd;
  req.plan_gpus = gpus;
  req.plan_gpu_memory = 80ULL << 30;
  req.model_config = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3-8b/config.json";
  Result<PreflightReport> r = RunPreflight(req);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r->estimates.gpus_needed : -1;
}

TEST(PreflightLayoutTest, MultiNodeAndLocalDataParallel) {
  // Head node of a 2-node DP 4 deployment: two local replicas of TP 2.
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "2", "-dp", "4", "-dpl", "2", "-dpa", "10.0.0.1"}, 8), 4);
  // The other node: headless, ranks 2..3.
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "2", "-dp", "4", "-dpl", "2", "-dpr", "2", "--headless"}, 8), 4);
  // External load balancing: one DP rank per process.
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "2", "-dp", "4", "--data-parallel-rank", "1"}, 8), 2);
  // TP 16 over two nodes with --nnodes: half the world on each.
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "16", "--nnodes", "2", "--node-rank", "1"}, 8), 8);
  // DP spread over nodes without -dpl: split evenly.
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "2", "-dp", "4", "--nnodes", "2"}, 8), 4);
  // SGLang: DP attention keeps DP inside TP.
  EXPECT_EQ(Needed({"python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", "--dp", "8",
                    "--enable-dp-attention"},
                   8),
            8);
  EXPECT_EQ(Needed({"python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2", "--dp", "2"}, 8), 4);
}

TEST(PreflightLayoutTest, MultiNodeWithoutAddressesWarns) {
  for (std::vector<std::string> cmd : std::vector<std::vector<std::string>>{
           {"vllm", "serve", "m", "-tp", "2", "-dp", "4", "-dpl", "2"},
           {"python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "16", "--nnodes", "2"},
           {"torchrun", "--nnodes", "2", "--nproc-per-node", "8", "train.py"}}) {
    PreflightRequest req;
    req.command = cmd;
    req.plan_gpus = 8;
    req.plan_gpu_memory = 80ULL << 30;
    req.model_config = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3-8b/config.json";
    if (cmd[0] == "torchrun") req.model_config.clear();
    Result<PreflightReport> r = RunPreflight(req);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const Finding* f = FindCheck(*r, "multi-node");
    ASSERT_NE(f, nullptr) << cmd[0];
    EXPECT_EQ(f->severity, Severity::kWarning);
  }
  EXPECT_EQ(Needed({"vllm", "serve", "m", "-tp", "2", "-dp", "4", "-dpl", "2", "-dpa", "10.0.0.1"}, 8), 4);
}

TEST(PreflightLayoutTest, SecretsOfUnknownFlagsAreRedacted) {
  PreflightRequest req;
  req.command = {"vllm", "serve", "m", "--my-auth-token", "hf_abcdefSECRET", "--frobnicate=3"};
  req.plan_gpus = 1;
  req.plan_gpu_memory = 80ULL << 30;
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "command-line");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->message.find("SECRET"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("--my-auth-token ***"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("--frobnicate=3"), std::string::npos) << f->message;
}

TEST(PreflightLayoutTest, UtilizationOutOfRangeAndSpeculativeNote) {
  PreflightRequest req;
  req.command = {"vllm",
                 "serve",
                 "m",
                 "--gpu-memory-utilization",
                 "1.5",
                 "--speculative-config",
                 "{\"model\": \"draft\", \"num_speculative_tokens\": 3}"};
  req.plan_gpus = 1;
  req.plan_gpu_memory = 80ULL << 30;
  req.model_config = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3-8b/config.json";
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->blocking());
  EXPECT_NE(FindCheck(*r, "command-line")->message.find("outside (0, 1]"), std::string::npos);
  bool noted = false;
  for (const std::string& n : r->notes) noted = noted || n.find("draft model") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PreflightLayoutTest, RayPlacesWorkersElsewhere) {
  PreflightRequest req;
  req.command = {"vllm", "serve", "m", "-tp", "4", "--distributed-executor-backend", "ray"};
  req.plan_gpus = 2;
  req.plan_gpu_memory = 80ULL << 30;
  req.model_config = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3-8b/config.json";
  Result<PreflightReport> r = RunPreflight(req);
  ASSERT_TRUE(r.ok());
  const Finding* f = FindCheck(*r, "gpu-count");
  EXPECT_EQ(f->severity, Severity::kWarning);
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

// Hostile input (issue 13 point 6): a parallel size that overflows, is
// negative or zero is an input error (exit 2), never silently TP 1.
TEST(PreflightHostileInputTest, ImpossibleParallelSizesAreInputErrors) {
  for (const char* tp : {"99999999999999999999", "-2", "0", "70000"}) {
    PreflightRequest req = Plan({"vllm", "serve", "m", "--tensor-parallel-size", tp}, 1, "80GiB", "qwen3-8b");
    Result<PreflightReport> r = RunPreflight(req);
    ASSERT_FALSE(r.ok()) << "--tensor-parallel-size " << tp << " was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--tensor-parallel-size"), std::string::npos) << r.status().message();
  }
  PreflightRequest dp = Plan({"vllm", "serve", "m", "--data-parallel-size=-1"}, 1, "80GiB", "qwen3-8b");
  EXPECT_FALSE(RunPreflight(dp).ok());
  PreflightRequest util = Plan({"vllm", "serve", "m", "--gpu-memory-utilization", "nan"}, 1, "80GiB", "qwen3-8b");
  EXPECT_FALSE(RunPreflight(util).ok());
}

// --gpu-memory-utilization 7 is blocking, with or without the model's facts.
TEST(PreflightHostileInputTest, UtilizationAboveOneIsBlocking) {
  for (const std::string& model : {std::string("qwen3-8b"), std::string()}) {
    PreflightRequest req =
        Plan({"vllm", "serve", "/nonexistent/m", "--gpu-memory-utilization", "7"}, 1, "80GiB", model);
    Result<PreflightReport> r = RunPreflight(req);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->blocking()) << "model config: " << model;
    const Finding* f = FindCheck(*r, "command-line");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::kBlocking);
    EXPECT_NE(f->message.find("--gpu-memory-utilization 7 is outside (0, 1]"), std::string::npos) << f->message;
  }
  PreflightRequest sg =
      Plan({"python", "-m", "sglang.launch_server", "--model-path", "/nonexistent/m", "--mem-fraction-static", "0"}, 1,
           "80GiB", "");
  Result<PreflightReport> r = RunPreflight(sg);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->blocking());
}

}  // namespace
}  // namespace faultline::preflight
