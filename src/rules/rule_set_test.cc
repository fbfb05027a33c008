#include "rules/rule_set.h"

#include <gtest/gtest.h>

#include "rules/rule_loader.h"

namespace faultline::rules {
namespace {

std::vector<Rule> TestRules() {
  auto rules = ParseRuleFile(R"(
rules:
  - id: t.rank
    pattern: 'local rank (?P<rank>\d+) is out of bounds'
    explanation: 'rank {rank} needs {tp*dp} GPUs'
    fix: fix
    samples: {match: ['local rank 3 is out of bounds']}
  - id: t.tp
    kind: fact
    pattern: 'tensor_parallel_size=(?P<tp>\d+)'
    samples: {match: ['tensor_parallel_size=2']}
  - id: t.token
    kind: redact
    pattern: 'hf_[A-Za-z0-9]{20,}'
    replacement: 'hf_***'
    samples: {match: ['HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz']}
)", "t.yaml");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return *rules;
}

TEST(RuleSetTest, ScanFindsHitsInABlockAndConfirmCaptures) {
  auto set = RuleSet::Build(TestRules(), {{kStructuralBase, "Traceback \\(most recent call last\\)"}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  std::string block =
      "INFO tensor_parallel_size=2, data_parallel_size=2\n"
      "Traceback (most recent call last):\n"
      "AssertionError: DP adjusted local rank 3 is out of bounds.\n";
  std::vector<PatternHit> hits;
  (*set)->matcher().Scan(block, &hits);
  std::vector<unsigned> ids;
  for (auto& h : hits) ids.push_back(h.id);
  EXPECT_NE(std::find(ids.begin(), ids.end(), 0u), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), 1u), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), kStructuralBase), ids.end());
  Captures caps;
  ASSERT_TRUE((*set)->Confirm(0, "AssertionError: DP adjusted local rank 3 is out of bounds.", &caps));
  ASSERT_EQ(caps.size(), 1u);
  EXPECT_EQ(caps[0], (std::pair<std::string, std::string>{"rank", "3"}));
  EXPECT_FALSE((*set)->Confirm(0, "nothing here", nullptr));
}

TEST(RuleSetTest, RenderUsesCapturesFactsAndProducts) {
  Captures caps = {{"rank", "3"}};
  Captures facts = {{"tp", "1"}, {"tp", "2"}, {"dp", "2"}};
  EXPECT_EQ(RenderTemplateWith("rank {rank} needs {tp*dp} GPUs", caps, facts), "rank 3 needs 4 GPUs");
  EXPECT_EQ(RenderTemplateWith("rank {rank} failed. {missing} and {tp*missing}", caps, facts), "rank 3 failed.");
}

TEST(RuleSetTest, MissingValueDropsItsClauseNeverPrintsAPlaceholder) {
  Captures caps = {{"requested", "16.00 GiB"}, {"total", "80 GiB"}};
  const char* tmpl = "asked for {requested} more[ on GPU {gpu}][, which has {total} in total]. Free it.";
  EXPECT_EQ(RenderTemplateWith(tmpl, caps, {}), "asked for 16.00 GiB more, which has 80 GiB in total. Free it.");
  caps.emplace_back("gpu", "0");
  EXPECT_EQ(RenderTemplateWith(tmpl, caps, {}),
            "asked for 16.00 GiB more on GPU 0, which has 80 GiB in total. Free it.");
  // Outside brackets the clause (between ", " / ". " boundaries) goes; the sentence keeps its end.
  EXPECT_EQ(RenderTemplateWith("rank {rank} died, on node {node}. Check it.", {{"rank", "3"}}, {}),
            "rank 3 died. Check it.");
  EXPECT_EQ(RenderTemplateWith("needs {tp*dp} GPUs, has {n}", {{"tp", "2"}, {"n", "1"}}, {}), "has 1");
  // Brackets without a placeholder are text.
  EXPECT_EQ(RenderTemplateWith("a label outside [0, num_classes) for rank {rank}", {{"rank", "1"}}, {}),
            "a label outside [0, num_classes) for rank 1");
  EXPECT_EQ(RenderTemplateWith("{nothing}", {}, {}).find('?'), std::string::npos);
}

TEST(RuleSetTest, RedactsSecrets) {
  auto set = RuleSet::Build(TestRules());
  ASSERT_TRUE(set.ok());
  EXPECT_EQ((*set)->Redact("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234 && run"),
            "export HF_TOKEN=hf_*** && run");
}

TEST(PatternMatcherTest, NamedGroupsAreRewrittenForHyperscan) {
  EXPECT_EQ(ToHyperscanPattern("a (?P<x>\\d+) \\(b\\)"), "a (\\d+) \\(b\\)");
}

}  // namespace
}  // namespace faultline::rules
