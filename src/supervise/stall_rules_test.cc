#include "supervise/stall_rules.h"

#include <gtest/gtest.h>

namespace faultline::supervise {
namespace {

TEST(StallRulesTest, BuiltinRulesLoad) {
  auto rules = BuiltinStallRules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  std::vector<std::string> ids;
  for (const auto& c : rules->classes) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"uninterruptible-io", "weight-loading", "torch-compile", "distributed-init",
                                           "collective-hang", "gpu-busy-no-progress", "busy-spin", "dataloader",
                                           "cuda-graph-capture", "unknown"}));
  EXPECT_GE(rules->stack_phases.size(), 6u);
  EXPECT_GE(rules->kernel_messages.size(), 3u);
  EXPECT_EQ(rules->progress.read_bytes, 8 << 20);
  EXPECT_FALSE(rules->phase_markers.empty());
  EXPECT_FALSE(rules->cache_dirs.empty());
  EXPECT_FALSE(rules->wait_channels.at("futex").empty());
}

TEST(StallRulesTest, TheFileInTheRepoIsTheEmbeddedOne) {
  auto from_file = LoadStallRulesFile(std::string(FAULTLINE_SOURCE_DIR) + "/rules/stall.yaml");
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  EXPECT_EQ(from_file->classes.size(), BuiltinStallRules()->classes.size());
}

TEST(StallRulesTest, ErrorsNameTheClass) {
  auto r = ParseStallRules("classes:\n  - id: bad\n    when: [\"nope >= 1\"]\n", "t.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t.yaml: class bad"), std::string::npos) << r.status().message();
  r = ParseStallRules("classes:\n  - id: bad\n    explanation: \"{nope}\"\n", "t.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown feature {nope}"), std::string::npos) << r.status().message();
  r = ParseStallRules("classes: [\n", "t.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t.yaml:"), std::string::npos);
}

}  // namespace
}  // namespace faultline::supervise
