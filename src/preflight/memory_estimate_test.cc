#include "preflight/memory_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "preflight/units.h"

namespace faultline::preflight {
namespace {

ModelFacts Fixture(const std::string& name) {
  std::string path = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/" + name + "/config.json";
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return *ParseModelConfig(ss.str(), path);
}

MemoryInputs H100(int tp) {
  MemoryInputs in;
  in.tp = tp;
  in.gpu_total_bytes = 81559ULL * 1024 * 1024;
  in.gpu_name = "NVIDIA H100 80GB HBM3";
  return in;
}

TEST(MemoryEstimateTest, GqaKvBytesPerTokenSplitByTp) {
  MemoryEstimate e = EstimateMemory(Fixture("llama-3.1-70b-instruct"), H100(4));
  // 80 layers x K,V x 8/4 heads x 128 x 2 bytes
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 80.0 * 2 * 2 * 128 * 2);
  EXPECT_EQ(e.state_bytes_per_seq, 0);
  EXPECT_EQ(e.batched_tokens, 8192);  // >= 70 GiB, not A100
  EXPECT_EQ(e.max_num_seqs, 1024);
  // bf16 weights from the parameter count, split over 4 GPUs.
  EXPECT_NEAR(e.weights_per_gpu / kGiB, 70.6e9 * 2 / 4 / kGiB, 0.5);
}

TEST(MemoryEstimateTest, KvHeadsAreReplicatedWhenTpExceedsThem) {
  MemoryEstimate e = EstimateMemory(Fixture("llama-3.1-70b-instruct"), H100(16));
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 80.0 * 2 * 1 * 128 * 2);
}

TEST(MemoryEstimateTest, MlaKeepsOneLatentPerTokenOnEveryRank) {
  MemoryInputs in = H100(8);
  in.gpu_total_bytes = 143771ULL * 1024 * 1024;
  MemoryEstimate e = EstimateMemory(Fixture("deepseek-r1"), in);
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 61.0 * (512 + 64) * 2);
  in.kv_cache_dtype = "fp8";
  EXPECT_DOUBLE_EQ(EstimateMemory(Fixture("deepseek-r1"), in).kv_bytes_per_token, 61.0 * (512 + 64));
}

TEST(MemoryEstimateTest, HybridStateIsPerSequenceAndPaddedToAttentionPages) {
  MemoryEstimate e = EstimateMemory(Fixture("qwen3.5-0.8b"), H100(1));
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 6.0 * 2 * 2 * 256 * 2);
  // GDN state per layer: conv (2*16*128 + 16*128) x 3 x 2 B + ssm 16 x 128 x
  // 128 x 4 B, rounded up to 16-token attention pages of 2048 B/token.
  double state = 6144.0 * 3 * 2 + 16.0 * 128 * 128 * 4;
  double page = 16 * 2048.0;
  EXPECT_DOUBLE_EQ(e.state_bytes_per_seq, std::ceil(state / page) * page * 18);
  // Capacity counts max_model_len-long requests: less than avail / per-token.
  int64_t cap = e.TokenCapacity(262144);
  EXPECT_GT(cap, 0);
  EXPECT_LT(cap, static_cast<int64_t>(e.kv_available_bytes / e.kv_bytes_per_token));
  EXPECT_LE(e.BytesForRequest(e.MaxFittingLen(1 << 30)), e.kv_available_bytes);
}

TEST(MemoryEstimateTest, IndexSizeWinsAndFp32CheckpointsRunInBf16) {
  ModelFacts m = Fixture("qwen3-8b");
  m.checkpoint_bytes = 32'762'357'760ULL;  // an fp32 checkpoint
  MemoryEstimate e = EstimateMemory(m, H100(2));
  EXPECT_EQ(e.runtime_dtype, "bfloat16");
  EXPECT_NEAR(e.weight_bytes_total, 32'762'357'760.0 / 2, 1);
  // Plus the rotary cos/sin cache on every GPU: 40960 positions x 128 x 2 bytes.
  EXPECT_NEAR(e.weights_per_gpu, 32'762'357'760.0 / 4 + 40960.0 * 128 * 2, 1);
}

TEST(MemoryEstimateTest, ExpertParallelSplitsExpertsOverDp) {
  MemoryInputs in = H100(2);
  in.dp = 4;
  MemoryEstimate without = EstimateMemory(Fixture("mixtral-8x7b-instruct-v0.1"), in);
  in.expert_parallel = true;
  MemoryEstimate with = EstimateMemory(Fixture("mixtral-8x7b-instruct-v0.1"), in);
  EXPECT_LT(with.weights_per_gpu, without.weights_per_gpu / 2);
}

TEST(MemoryEstimateTest, BudgetFollowsUtilization) {
  MemoryInputs in = H100(1);
  in.utilization = 0.5;
  MemoryEstimate e = EstimateMemory(Fixture("qwen3-8b"), in);
  EXPECT_DOUBLE_EQ(e.requested_bytes, 81559.0 * 1024 * 1024 * 0.5);
  EXPECT_NEAR(e.kv_available_bytes,
              e.requested_bytes - e.weights_per_gpu - e.activation_bytes - e.non_torch_bytes - e.cudagraph_bytes, 1);
}

VllmVersion V(const char* s) { return *VllmVersion::Parse(s); }

TEST(MemoryEstimateTest, VersionsParseAndCompare) {
  EXPECT_EQ(V("0.10.1.1").ToString(), "0.10.1");
  EXPECT_EQ(V("v0.11.0rc2").ToString(), "0.11.0");
  EXPECT_EQ(V("0.9").ToString(), "0.9.0");
  EXPECT_FALSE(VllmVersion::Parse("latest").has_value());
  EXPECT_FALSE(VllmVersion::Parse("").has_value());
  EXPECT_TRUE(V("0.21.0").AtLeast(V("0.21.0")));
  EXPECT_FALSE(V("0.10.2").AtLeast(V("0.11.0")));
  EXPECT_TRUE(VllmVersion().AtLeast(V("99.0.0")));  // unknown: the newest behaviour
}

// What each release reserves before the KV cache (rules/preflight_memory.yaml).
TEST(MemoryEstimateTest, ReservationFollowsTheRelease) {
  MemoryInputs in = H100(1);
  in.vllm_version = V("0.11.0");
  MemoryEstimate v011 = EstimateMemory(Fixture("llama-3.1-8b"), in);
  // 0.11: 1024 sequences of float32 logits through the sort-based sampler
  // (vLLM 0.11.0 on an H100 logs a 4.76 GiB peak); graphs come after the
  // budget.
  EXPECT_NEAR(v011.activation_bytes / kGiB, 4.76, 0.1);
  EXPECT_EQ(v011.cudagraph_bytes, 0);
  EXPECT_TRUE(v011.cudagraphs_after_budget);
  in.vllm_version = V("0.10.1");
  MemoryEstimate v010 = EstimateMemory(Fixture("llama-3.1-8b"), in);
  EXPECT_EQ(v010.max_num_seqs, 256);  // large-GPU defaults came with 0.11
  EXPECT_LT(v010.activation_bytes,
            v011.activation_bytes / 4);  // FlashInfer sampler, 256 rows
  in.flashinfer_sampler = false;
  EXPECT_GT(EstimateMemory(Fixture("llama-3.1-8b"), in).activation_bytes, v010.activation_bytes);
  in.flashinfer_sampler.reset();
  in.vllm_version = V("0.24.0");
  MemoryEstimate v024 = EstimateMemory(Fixture("llama-3.1-8b"), in);
  EXPECT_GT(v024.cudagraph_bytes,
            0);  // profiled CUDA graphs come out of the KV budget
  EXPECT_FALSE(v024.cudagraphs_after_budget);
  in.enforce_eager = true;
  MemoryEstimate eager = EstimateMemory(Fixture("llama-3.1-8b"), in);
  EXPECT_EQ(eager.cudagraph_bytes, 0);
  EXPECT_NEAR(eager.kv_available_bytes - v024.kv_available_bytes, v024.cudagraph_bytes, 1);
  in.enforce_eager = false;
  in.estimate_cudagraphs = false;  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0
  EXPECT_EQ(EstimateMemory(Fixture("llama-3.1-8b"), in).cudagraph_bytes, 0);
  // Unknown release: the reference release's accounting (0.11), with a note.
  MemoryInputs unknown = H100(1);
  MemoryEstimate u = EstimateMemory(Fixture("llama-3.1-8b"), unknown);
  EXPECT_DOUBLE_EQ(u.kv_available_bytes, v011.kv_available_bytes);
  ASSERT_FALSE(u.assumptions.empty());
  EXPECT_NE(u.assumptions.back().find("vLLM release unknown"), std::string::npos);
}

// gpt-oss (sliding + full attention): older releases print
// num_blocks // groups * block_size, i.e. the budget over all 36 layers.
TEST(MemoryEstimateTest, HybridTokenCountFollowsTheRelease) {
  MemoryInputs in = H100(4);
  in.kv_cache_memory_bytes = static_cast<int64_t>(45.32 * kGiB);
  in.vllm_version = V("0.10.1");
  MemoryEstimate old = EstimateMemory(Fixture("gpt-oss-120b"), in);
  // 2 KV heads per GPU x 64 x K,V x 2 bytes = 512 bytes per layer and token;
  // vLLM 0.10.1.1 printed 2,640,144 tokens for 45.32 GiB.
  EXPECT_NEAR(static_cast<double>(old.TokenCapacity(16384)), 2640144, 2640144 * 0.001);
  in.vllm_version = V("0.24.0");
  MemoryEstimate now = EstimateMemory(Fixture("gpt-oss-120b"), in);
  // Sliding layers hold at most window + batched tokens (128 + 8192) of each
  // 16,384-token request.
  EXPECT_GT(now.TokenCapacity(16384), old.TokenCapacity(16384) * 5 / 4);
}

// MXFP4 experts, 16-bit attention: gpt-oss-120b loads 64.38 GiB on one H100
// (vLLM 0.11.0).
TEST(MemoryEstimateTest, Mxfp4ExpertsOnly) {
  MemoryEstimate e = EstimateMemory(Fixture("gpt-oss-120b"), H100(1));
  EXPECT_NEAR(e.weights_per_gpu / kGiB, 64.38, 64.38 * 0.02);
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

// An AWQ checkpoint of the same shapes: the quantization_config block as
// AutoAWQ writes it (transformers' AWQ docs show this block for
// TheBloke/zephyr-7B-alpha-AWQ). Linear weights take 4 bits plus group
// scales, embeddings stay 16-bit.
TEST(MemoryEstimateTest, Awq4BitWeights) {
  std::string path = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen2-7b-instruct/config.json";
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str());
  j["quantization_config"] = {
      {"quant_method", "awq"}, {"zero_point", true}, {"group_size", 128}, {"bits", 4}, {"version", "gemm"}};
  Result<ModelFacts> m = ParseModelConfig(j.dump(), "awq");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->quant_method, "awq");
  EXPECT_EQ(m->quant_bits, 4);
  MemoryInputs h100;
  h100.gpu_total_bytes = 81559ULL << 20;
  MemoryEstimate e = EstimateMemory(*m, h100);
  double embed = 2.0 * 152064 * 3584 * 2;  // untied embeddings + LM head, 16-bit
  double linear = (static_cast<double>(m->params_total) - 2.0 * 152064 * 3584) * 0.5 * 1.03;
  double rotary = 32768.0 * 128 * 2;  // the rotary cos/sin cache
  EXPECT_NEAR(e.weights_per_gpu, embed + linear + rotary, 1e6);
  EXPECT_LT(e.weights_per_gpu / kGiB, 5.5);  // vs 14.2 GiB in bf16
}

}  // namespace
}  // namespace faultline::preflight
