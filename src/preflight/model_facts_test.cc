#include "preflight/model_facts.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace faultline::preflight {
namespace {

ModelFacts Fixture(const std::string& name) {
  std::string path = std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/models/" + name + "/config.json";
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  Result<ModelFacts> m = ParseModelConfig(ss.str(), path);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelFacts{};
}

TEST(ModelFactsTest, Qwen35HybridKeepsKvInOneLayerOfFour) {
  ModelFacts m = Fixture("qwen3.5-0.8b");
  EXPECT_EQ(m.architecture, "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(m.num_layers, 24);
  EXPECT_EQ(m.full_attention_layers, 6);
  EXPECT_EQ(m.linear_layers, 18);
  EXPECT_EQ(m.hybrid_layout, "layer_types");
  EXPECT_EQ(m.num_heads, 8);
  EXPECT_EQ(m.num_kv_heads, 2);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.linear_num_value_heads, 16);
  EXPECT_EQ(m.linear_key_head_dim, 128);
  EXPECT_EQ(m.derived_max_len, 262144);
  EXPECT_EQ(m.checkpoint_dtype, "bfloat16");
  EXPECT_EQ(m.mtp_layers, 1);
  EXPECT_TRUE(m.has_vision);
  EXPECT_TRUE(m.IsHybrid());
  EXPECT_FALSE(m.IsMoe());
}

TEST(ModelFactsTest, DeepSeekMlaMoeFp8) {
  ModelFacts m = Fixture("deepseek-r1");
  EXPECT_TRUE(m.mla);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.num_experts, 256);
  EXPECT_EQ(m.experts_per_token, 8);
  EXPECT_EQ(m.moe_layers, 58);  // first_k_dense_replace = 3
  EXPECT_EQ(m.quant_method, "fp8");
  EXPECT_EQ(m.quant_bits, 8);
  EXPECT_EQ(m.derived_max_len, 163840);  // yarn: 4096 x 40
  EXPECT_EQ(m.mtp_layers, 1);
  // 671B total, of which ~654B in routed experts.
  EXPECT_NEAR(m.params_total / 1e9, 671, 10);
  EXPECT_GT(static_cast<double>(m.params_experts) / m.params_total, 0.95);
}

TEST(ModelFactsTest, LlamaGqaWithLlama3RopeKeepsItsLength) {
  ModelFacts m = Fixture("llama-3.1-70b-instruct");
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.full_attention_layers, 80);
  EXPECT_EQ(m.derived_max_len, 131072);
  EXPECT_NEAR(m.params_total / 1e9, 70.6, 0.5);
}

TEST(ModelFactsTest, MixtralExpertsUseTheFfnWidth) {
  ModelFacts m = Fixture("mixtral-8x7b-instruct-v0.1");
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.experts_per_token, 2);
  EXPECT_EQ(m.moe_intermediate_size, 14336);
  EXPECT_EQ(m.moe_layers, 32);
  EXPECT_EQ(m.sliding_layers, 0);  // sliding_window: null
  EXPECT_NEAR(m.params_total / 1e9, 46.7, 0.5);
}

TEST(ModelFactsTest, MiniMaxLightningHybrid) {
  ModelFacts m = Fixture("minimax-m1");
  EXPECT_EQ(m.full_attention_layers, 10);
  EXPECT_EQ(m.linear_layers, 70);
  EXPECT_EQ(m.hybrid_layout, "attn_type_list");
  EXPECT_EQ(m.num_experts, 32);
}

TEST(ModelFactsTest, Qwen3AllFullAttentionLayerTypesIsNotHybrid) {
  ModelFacts m = Fixture("qwen3-8b");
  EXPECT_EQ(m.full_attention_layers, 36);
  EXPECT_FALSE(m.IsHybrid());
  EXPECT_EQ(m.checkpoint_dtype, "float32");
  EXPECT_EQ(m.derived_max_len, 40960);
  EXPECT_NEAR(m.params_total / 1e9, 8.19, 0.1);
}

TEST(ModelFactsTest, MalformedAndForeignConfigsAreErrors) {
  Result<ModelFacts> bad = ParseModelConfig("{\"num_hidden_layers\": 2,", "x/config.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x/config.json: not valid JSON"), std::string::npos);
  Result<ModelFacts> foreign = ParseModelConfig("{\"model_type\": \"bert-ish\"}", "y/config.json");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("num_hidden_layers"), std::string::npos);
}

TEST(ModelFactsTest, SafetensorsIndexTotalAndShards) {
  Result<SafetensorsIndex> idx = ParseSafetensorsIndex(
      R"({"metadata": {"total_size": 16060522496}, "weight_map": {"a": "model-00001-of-00002.safetensors",
          "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})",
      "index");
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ(idx->total_size, 16060522496ULL);
  EXPECT_EQ(idx->shards.size(), 2u);
  EXPECT_FALSE(ParseSafetensorsIndex("{}", "index").ok());
}

}  // namespace
}  // namespace faultline::preflight

namespace faultline::preflight {
namespace {

// Hostile config.json numbers (issue 13 point 6): a float that no integer
// holds, or a count above 2^31, is an input error, not undefined behaviour
// or a silent truncation (4294967328 used to become 32).
TEST(ModelFactsHostileTest, OutOfRangeNumbersAreInputErrors) {
  const std::string base = R"("num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000)";
  for (const std::string& bad :
       {std::string(R"({"num_hidden_layers": 32, "hidden_size": 1e300, )") + base + "}",
        std::string(R"({"num_hidden_layers": 4294967328, "hidden_size": 4096, )") + base + "}",
        std::string(R"({"num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": -1e30, )") + base + "}",
        std::string(
            R"({"num_hidden_layers": 32, "hidden_size": 4096, "max_position_embeddings": 8192,
                        "rope_scaling": {"type": "linear", "factor": 1e300}, )") +
            base + "}",
        std::string(R"({"num_hidden_layers": 2000000, "hidden_size": 4096, )") + base + "}"}) {
    Result<ModelFacts> m = ParseModelConfig(bad, "config.json");
    ASSERT_FALSE(m.ok()) << bad;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(m.status().message().rfind("config.json: ", 0), 0u) << m.status().message();
  }
  Result<ModelFacts> big = ParseModelConfig(
      std::string(R"({"num_hidden_layers": 4294967328, "hidden_size": 4096, )") + base + "}", "config.json");
  EXPECT_NE(big.status().message().find("num_hidden_layers 4294967328 is out of range"), std::string::npos)
      << big.status().message();
  // A float that is a whole count still reads.
  Result<ModelFacts> ok =
      ParseModelConfig(std::string(R"({"num_hidden_layers": 32.0, "hidden_size": 4096, )") + base + "}", "c");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->num_layers, 32);
  // A malformed safetensors total_size is an error, not an exception.
  EXPECT_FALSE(ParseSafetensorsIndex(R"({"metadata": {"total_size": "lots"}})", "index").ok());
  EXPECT_FALSE(ParseSafetensorsIndex(R"({"metadata": {"total_size": -5}})", "index").ok());
}

}  // namespace
}  // namespace faultline::preflight
