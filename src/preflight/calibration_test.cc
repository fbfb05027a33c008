// The memory model against what vLLM itself reported at startup
// (tests/fixtures/calibration/vllm_startup.yaml): weights per GPU within 3%,
// KV-cache tokens within 15%. Prints the comparison table that
// docs/memory-model.md shows.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

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
