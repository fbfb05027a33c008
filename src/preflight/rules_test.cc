// The built-in rule files load, and their templates only use placeholders
// the checks fill.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "preflight/check_text.h"
#include "preflight/embedded_rules.h"
#include "preflight/flag_table.h"
#include "preflight/gpu_catalog.h"
#include "preflight/memory_estimate.h"

namespace faultline::preflight {
namespace {

TEST(RulesTest, GpuCatalogLoadsAndMatchesLoosely) {
  Result<GpuCatalog> cat = GpuCatalog::Load(EmbeddedGpuCatalog());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  EXPECT_GE(cat->gpus().size(), 20u);
  const CatalogGpu* h100 = cat->Find("H100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->memory_mib, 81559u);
  EXPECT_EQ(cat->Find("nvidia h200"), cat->Find("H200"));
  EXPECT_NE(cat->Find("NVIDIA L40S"), nullptr);
  EXPECT_NE(cat->Find("rtx_6000_ada"), nullptr);
  EXPECT_EQ(cat->Find("potato-9000"), nullptr);
}

TEST(RulesTest, FlagTablesLoadForEveryLauncher) {
  for (const char* launcher : {"vllm", "sglang", "torchrun"}) {
    Result<FlagTable> t = LoadFlagTable(EmbeddedFlagTables(), launcher);
    ASSERT_TRUE(t.ok()) << launcher << ": " << t.status().message();
    EXPECT_GT(t->flags.size(), 10u) << launcher;
  }
  const FlagTable& vllm = BuiltinFlagTable("vllm");
  ASSERT_NE(vllm.Find("-tp"), nullptr);
  EXPECT_EQ(vllm.Find("-tp")->key, "tensor_parallel_size");
  EXPECT_EQ(vllm.Find("--data-parallel"), nullptr);  // ambiguous prefix
}

TEST(RulesTest, MemoryModelLoads) {
  Result<MemoryModelParams> p = MemoryModelParams::Load(EmbeddedMemoryModel());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->default_utilization, 0.9);
  EXPECT_EQ(p->batched_tokens_large, 8192);
}

// Every {placeholder} in the check texts is one that some check fills.
TEST(RulesTest, CheckTemplatesUseKnownPlaceholders) {
  Result<CheckTexts> texts = CheckTexts::Load(EmbeddedCheckTexts());
  ASSERT_TRUE(texts.ok()) << texts.status().message();
  const std::set<std::string> filled = {"needed",
                                        "visible",
                                        "world_size",
                                        "max_local_rank",
                                        "first_bad_rank",
                                        "dp_fit",
                                        "suggested_devices",
                                        "cuda_index",
                                        "free_gib",
                                        "total_gib",
                                        "utilization",
                                        "requested_gib",
                                        "holders",
                                        "utilization_fit",
                                        "tp_fit",
                                        "max_model_len",
                                        "needed_gib",
                                        "available_gib",
                                        "estimated_max_len",
                                        "suggested_len",
                                        "derived",
                                        "derived_key",
                                        "heads",
                                        "tp",
                                        "tp_choices",
                                        "kv_heads",
                                        "experts",
                                        "ep",
                                        "gpu_name",
                                        "compute",
                                        "host",
                                        "port",
                                        "free_port",
                                        "model",
                                        "missing"};
  std::regex placeholder(R"(\{([a-z_]+)\})");
  int count = 0;
  for (const auto& [check, variants] : texts->all()) {
    for (const auto& [variant, text] : variants) {
      for (const std::string* s : {&text.tool_error, &text.fix}) {
        for (std::sregex_iterator it(s->begin(), s->end(), placeholder), end; it != end; ++it) {
          EXPECT_TRUE(filled.count((*it)[1])) << check << "/" << variant << ": {" << (*it)[1] << "}";
          ++count;
        }
      }
      EXPECT_FALSE(text.source.empty()) << check << "/" << variant << " names no source";
    }
  }
  EXPECT_GT(count, 20);
  CheckText t = texts->Render("gpu-count", "vllm-dp", {{"max_local_rank", "3"}});
  EXPECT_EQ(t.tool_error, "AssertionError: DP adjusted local rank 3 is out of bounds.");
}

}  // namespace
}  // namespace faultline::preflight
