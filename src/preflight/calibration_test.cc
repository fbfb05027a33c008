// The memory model against what vLLM itself reported at startup
// (tests/fixtures/calibration/vllm_startup.yaml): weights per GPU within 3%,
// KV-cache tokens within 15%. Prints the comparison table that
// docs/memory-model.md shows.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "preflight/memory_estimate.h"
#include "preflight/model_facts.h"
#include "preflight/units.h"

namespace faultline::preflight {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CalibrationTest, PredictionsMatchVllmStartupLogs) {
  const std::string root = FAULTLINE_SOURCE_DIR;
  YAML::Node doc = YAML::LoadFile(root + "/tests/fixtures/calibration/vllm_startup.yaml");
  int points = 0;
  double worst_weights = 0, worst_tokens = 0;
  std::string table =
      "| launch | vLLM | weights GiB reported / predicted (err) | KV GiB reported / predicted | KV tokens reported / "
      "predicted (err) |\n|---|---|---|---|---|\n";
  for (const YAML::Node& p : doc["points"]) {
    std::string model = p["model"].as<std::string>();
    std::string config = root + "/tests/fixtures/models/" + model + "/config.json";
    Result<ModelFacts> facts = ParseModelConfig(Read(config), config);
    ASSERT_TRUE(facts.ok()) << facts.status().message();
    MemoryInputs in;
    in.tp = p["tp"].as<int>();
    in.gpu_total_bytes = p["gpu_memory_mib"].as<uint64_t>() * 1024 * 1024;
    in.gpu_name = p["gpu_name"].as<std::string>();
    in.utilization = p["utilization"].as<double>();
    in.max_num_batched_tokens = p["max_num_batched_tokens"].as<int64_t>();
    MemoryEstimate e = EstimateMemory(*facts, in);
    int64_t len = p["max_model_len"].as<int64_t>();
    double w = e.weights_per_gpu / kGiB;
    double kv = e.kv_available_bytes / kGiB;
    int64_t tokens = e.TokenCapacity(len);
    double rw = p["reported"]["weights_gib"].as<double>();
    double rkv = p["reported"]["kv_cache_gib"].as<double>();
    int64_t rt = p["reported"]["kv_cache_tokens"].as<int64_t>();
    double ew = w / rw - 1, et = static_cast<double>(tokens) / rt - 1;
    worst_weights = std::max(worst_weights, std::abs(ew));
    worst_tokens = std::max(worst_tokens, std::abs(et));
    EXPECT_LE(std::abs(ew), 0.03) << p["name"].as<std::string>() << ": weights " << w << " vs " << rw;
    EXPECT_LE(std::abs(et), 0.15) << p["name"].as<std::string>() << ": tokens " << tokens << " vs " << rt;
    table += fmt::format("| {} | {} | {:.2f} / {:.2f} ({:+.1f}%) | {:.2f} / {:.2f} | {} / {} ({:+.1f}%) |\n",
                         p["name"].as<std::string>(), p["vllm"].as<std::string>(), rw, w, ew * 100, rkv, kv,
                         WithCommas(rt), WithCommas(tokens), et * 100);
    ++points;
  }
  EXPECT_GE(points, 8);
  std::printf("%s\nworst weights error %.1f%%, worst KV-token error %.1f%% over %d points\n", table.c_str(),
              worst_weights * 100, worst_tokens * 100, points);
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

// The hybrid (Gated DeltaNet + attention) KV formula against a vLLM 0.24.0
// startup log of Qwen3.6-35B-A3B (same architecture as the Qwen3.5-35B-A3B
// fixture) on an RTX 5090: --kv-cache-dtype fp8, --max-num-seqs 1,
// --max-num-batched-tokens 8192, --max-model-len 131072;
// "Available KV cache memory: 5.98 GiB", "GPU KV cache size: 567,978 tokens",
// "Maximum concurrency for 131,072 tokens per request: 4.33x"
// (github.com/noonghunna/club-3090 issue 612). The budget is taken from the
// log, so this checks the per-token and per-sequence terms alone.
TEST(CalibrationTest, HybridKvCapacityMatchesVllm) {
  std::string config = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/qwen3.5-35b-a3b/config.json";
  Result<ModelFacts> facts = ParseModelConfig(Read(config), config);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  EXPECT_EQ(facts->full_attention_layers, 10);
  EXPECT_EQ(facts->linear_layers, 30);
  MemoryInputs in;
  in.gpu_total_bytes = 32607ULL << 20;
  in.kv_cache_dtype = "fp8";
  in.max_num_seqs = 1;
  in.max_num_batched_tokens = 8192;
  in.kv_cache_memory_bytes = static_cast<int64_t>(5.98 * kGiB);
  MemoryEstimate e = EstimateMemory(*facts, in);
  EXPECT_DOUBLE_EQ(e.kv_bytes_per_token, 10.0 * 2 * 2 * 256 * 1);
  int64_t tokens = e.TokenCapacity(131072);
  double concurrency = e.kv_available_bytes / e.BytesForRequest(131072);
  std::printf("hybrid: predicted %lld tokens (%.2fx) vs vLLM 567,978 (4.33x)\n", static_cast<long long>(tokens),
              concurrency);
  EXPECT_NEAR(static_cast<double>(tokens) / 567978, 1.0, 0.15);
  EXPECT_NEAR(concurrency, 4.33, 4.33 * 0.15);
}

}  // namespace
}  // namespace faultline::preflight
