// The memory model against what vLLM itself reported at startup
// (tests/fixtures/calibration/vllm_startup.yaml): KV-cache tokens and GiB
// within ±10% for at least 80% of the points, every observed fit / no-fit
// verdict right. Prints the table that docs/memory-model.md shows (also
// `faultline preflight --calibration
// tests/fixtures/calibration/vllm_startup.yaml`).
#include "preflight/calibration.h"

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
  Result<CalibrationSummary> cal =
      RunCalibration(root + "/tests/fixtures/calibration/vllm_startup.yaml", root + "/tests/fixtures/models");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  std::printf("%s", cal->Table().c_str());
  EXPECT_GE(cal->rows.size(), 25u);
  // KV-cache tokens and GiB within ±10% for at least 80% of the points that
  // report them.
  ASSERT_GE(cal->tokens_points, 10);
  EXPECT_GE(cal->tokens_within, (cal->tokens_points * 8 + 9) / 10) << cal->tokens_within << "/" << cal->tokens_points;
  EXPECT_GE(cal->kv_gib_within, (cal->kv_gib_points * 8 + 9) / 10) << cal->kv_gib_within << "/" << cal->kv_gib_points;
  EXPECT_GE(cal->weights_within, (cal->weights_points * 8 + 9) / 10);
  // Every fit / no-fit verdict the sources observed.
  ASSERT_GE(cal->verdict_points, 5);
  for (const CalibrationRow& r : cal->rows) {
    if (r.reported_fits) EXPECT_EQ(*r.reported_fits, r.estimated_fits) << r.name << " margin " << r.margin_gib;
  }
}

// The boundary pairs of the fixtures: the same model and GPU on both sides
// of "fits", in one setting each (TP, --max-model-len).
TEST(CalibrationTest, BoundaryPairsLandOnTheirSides) {
  const std::string root = FAULTLINE_SOURCE_DIR;
  Result<CalibrationSummary> cal =
      RunCalibration(root + "/tests/fixtures/calibration/vllm_startup.yaml", root + "/tests/fixtures/models");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  auto find = [&](const std::string& prefix) -> const CalibrationRow* {
    for (const CalibrationRow& r : cal->rows)
      if (r.name.rfind(prefix, 0) == 0) return &r;
    return nullptr;
  };
  const std::pair<const char*, const char*> pairs[] = {
      {"Qwen3-32B, 1x H100, TP 1, len 16000", "Qwen3-32B, 1x H100, TP 1, len 32000"},
      {"Qwen3-32B, RTX PRO 6000 Blackwell Server, TP 2", "Qwen3-32B, RTX PRO 6000 Blackwell Server, TP 1"},
      {"Llama-3.3-70B-Instruct-FP8-dynamic, 2x H100", "Llama-3.3-70B-Instruct-FP8-dynamic, 1x H100"},
  };
  for (const auto& [fits, fails] : pairs) {
    const CalibrationRow* a = find(fits);
    const CalibrationRow* b = find(fails);
    ASSERT_NE(a, nullptr) << fits;
    ASSERT_NE(b, nullptr) << fails;
    EXPECT_TRUE(a->estimated_fits) << fits << " margin " << a->margin_gib;
    EXPECT_FALSE(b->estimated_fits) << fails << " margin " << b->margin_gib;
  }
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
  in.vllm_version = *VllmVersion::Parse("0.24.0");
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
