#include "supervise/condition.h"

#include <gtest/gtest.h>

namespace faultline::supervise {
namespace {

TEST(ConditionTest, NumbersUnitsAndText) {
  FeatureSet f;
  f.SetNumber("max_cpu_percent", 100);
  f.SetNumber("any_read_rate", 512 * 1024);
  f.SetText("log_last_phase", "distributed-init");
  f.SetText("root_cmdline", "vllm serve m --data-parallel-size 2");
  auto leaf = [](const std::string& s) {
    auto c = ParseLeaf(s);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return *c;
  };
  EXPECT_TRUE(Evaluate(leaf("max_cpu_percent >= 80"), f));
  EXPECT_FALSE(Evaluate(leaf("max_cpu_percent < 20"), f));
  EXPECT_TRUE(Evaluate(leaf("any_read_rate < 1 MiB"), f));
  EXPECT_FALSE(Evaluate(leaf("any_read_rate < 256 KiB"), f));
  EXPECT_TRUE(Evaluate(leaf("log_last_phase == distributed-init"), f));
  EXPECT_TRUE(Evaluate(leaf("root_cmdline !contains --enforce-eager"), f));
  EXPECT_TRUE(Evaluate(leaf("root_cmdline matches '--data-parallel-size[ =]*([2-9]|[1-9][0-9])'"), f));
  std::vector<std::string> matched;
  Condition any;
  any.kind = Condition::Kind::kAny;
  any.children = {leaf("max_cpu_percent < 20"), leaf("max_cpu_percent >= 90")};
  EXPECT_TRUE(Evaluate(any, f, &matched));
  ASSERT_EQ(matched.size(), 1u);
  EXPECT_EQ(matched[0], "max_cpu_percent >= 90 (100)");
}

TEST(ConditionTest, BadLeavesAreRejectedWithTheReason) {
  EXPECT_NE(ParseLeaf("no_such_feature > 1").status().message().find("unknown feature"), std::string::npos);
  EXPECT_NE(ParseLeaf("max_cpu_percent ~ 1").status().message().find("unknown operator"), std::string::npos);
  EXPECT_NE(ParseLeaf("max_cpu_percent > lots").status().message().find("needs a number"), std::string::npos);
  EXPECT_NE(ParseLeaf("any_read_rate > 1 PB").status().message().find("unknown unit"), std::string::npos);
  EXPECT_NE(ParseLeaf("root_cmdline matches '('").status().message().find("bad regex"), std::string::npos);
}

}  // namespace
}  // namespace faultline::supervise
