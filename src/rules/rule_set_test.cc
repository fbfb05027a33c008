#include "rules/rule_set.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

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
)",
                             "t.yaml");
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

// A progress counter is found by its literals (any case), a signature by
// its own pattern; a counter whose every line could match (no literal) is
// not gated; literals beside which others are needed are left out.
TEST(RuleSetTest, ProgressRulesAreGatedByTheirLiterals) {
  auto rules = ParseRuleFile(R"(
rules:
  - id: t.step
    kind: phase
    phase: training
    progress: true
    pattern: '(?:[Ss]tep|STEP) (?P<step>\d+)/(?P<total>\d+)'
    samples: {match: ['Step 5/10']}
  - id: t.bar
    kind: phase
    phase: training
    progress: true
    pattern: '(?P<step>\d+)/\d+'
    samples: {match: ['3/45']}
  - id: t.oom
    pattern: 'CUDA out of memory'
    explanation: e
    fix: f
    samples: {match: ['CUDA out of memory']}
  - id: t.epoch
    kind: phase
    phase: training
    progress: true
    pattern: 'Epoch (?P<step>\d+) (?:train|eval|test)'
    samples: {match: ['Epoch 3 eval']}
)",
                             "t.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(RuleSet::GateLiterals((*rules)[0]), std::vector<std::string>{"step "});
  EXPECT_TRUE(RuleSet::GateLiterals((*rules)[1]).empty());
  EXPECT_TRUE(RuleSet::GateLiterals((*rules)[2]).empty());
  EXPECT_EQ(RuleSet::GateLiterals((*rules)[3]), std::vector<std::string>{"epoch "}) << "the alternation is left out";
  auto set = RuleSet::Build(*rules);
  ASSERT_TRUE(set.ok()) << set.status().message();
  std::vector<PatternHit> hits;
  (*set)->matcher().Scan("STEP 5/10 CUDA out of memory\nstepping\n", &hits);
  std::vector<unsigned> ids;
  for (auto& h : hits) ids.push_back(h.id);
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(ids, (std::vector<unsigned>{kGateBase + 0, 1, 2})) << "a literal, the ungated counter, the signature";
  auto ungated = RuleSet::Build(*rules, {}, nullptr, false);
  ASSERT_TRUE(ungated.ok());
  hits.clear();
  (*ungated)->matcher().Scan("STEP 5/10\n", &hits);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].id, 0u);
}

TEST(RuleSetTest, ConfirmFromSeveralThreadsGivesEveryThreadTheSameAnswer) {
  auto set = RuleSet::Build(TestRules());
  ASSERT_TRUE(set.ok());
  const RuleSet& rules = **set;
  std::vector<int> matched(4, 0);
  std::vector<std::string> ranks(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Captures caps;
        if (rules.Confirm(0, "local rank " + std::to_string(t) + " is out of bounds", &caps)) ++matched[t];
        if (!caps.empty()) ranks[t] = caps[0].second;
        if (rules.Confirm(0, "local rank x is out of bounds", nullptr)) --matched[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(matched[t], 200);
    EXPECT_EQ(ranks[t], std::to_string(t));
  }
}

TEST(RuleSetTest, ALaterRuleSetConfirmsWithItsOwnPatterns) {
  // A thread's RE2 copies belong to one rule set: a set built after another
  // (maybe at the same address) must not match with the first one's copies.
  auto rules_of = [](const char* word) {
    auto r = ParseRuleFile(fmt::format("rules:\n  - id: t.one\n    kind: fact\n    pattern: '(?P<v>{0})'\n"
                                       "    samples: {{match: ['{0}']}}\n",
                                       word),
                           "t.yaml");
    EXPECT_TRUE(r.ok()) << r.status().message();
    return *r;
  };

  {
    auto first = RuleSet::Build(rules_of("alpha"));
    ASSERT_TRUE(first.ok());
    EXPECT_TRUE((*first)->Confirm(0, "alpha", nullptr));
  }
  auto second = RuleSet::Build(rules_of("beta"));
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE((*second)->Confirm(0, "beta", nullptr));
  EXPECT_FALSE((*second)->Confirm(0, "alpha", nullptr));
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

// A pattern is digit-blind when no digit of its own (outside a repetition
// count, a [0-9] range or a group's name) can tell one digit from another.
TEST(RuleSetTest, DigitBlindPatterns) {
  EXPECT_TRUE(RuleSet::DigitBlindPattern(R"(step (?P<step>\d+)(?:/(?P<total>\d+))?)"));
  EXPECT_TRUE(RuleSet::DigitBlindPattern(R"(\bstep:(?P<step2>\d+) - \w)"));
  EXPECT_TRUE(RuleSet::DigitBlindPattern(R"([0-9]{2,3}x[^0-9]+[ -~]y[[:digit:]]z\d{4}a{1,})"));
  EXPECT_TRUE(RuleSet::DigitBlindPattern(R"(\{'loss': [\d.e+-]+)"));
  EXPECT_TRUE(RuleSet::DigitBlindPattern(R"([\]a-z]\.)"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern(R"(SeqNum=[1-9]\d+)"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern("exitcode: -9"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern("[0-5]"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern("[+-0]"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern(R"(\x31)"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern(R"(\Q1\E)"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern(R"(\p{Nd})"));
  EXPECT_FALSE(RuleSet::DigitBlindPattern("a{x1}"));  // a literal brace: its 1 is a literal digit
  EXPECT_FALSE(RuleSet::DigitBlindPattern("[0-9"));   // unclosed
}

// The shape cache gives what RE2 gives: the match, and groups at their
// places in the line asked about; a rule that tells digits apart is matched
// on every line.
TEST(RuleSetTest, ConfirmByLineShapeMatchesRe2) {
  auto rules = ParseRuleFile(R"(
rules:
  - id: t.step
    kind: phase
    phase: training
    progress: true
    pattern: 'step (?P<step>\d+)/(?P<total>\d+)(?: (?P<extra>x+))?'
    samples: {match: ['step 5/10']}
  - id: t.seq
    kind: phase
    phase: training
    pattern: 'SeqNum=[1-9]\d*'
    samples: {match: ['SeqNum=10']}
)",
                             "t.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  auto set = RuleSet::Build(*rules);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_TRUE((*set)->DigitBlind(0));
  EXPECT_FALSE((*set)->DigitBlind(1));
  for (int round = 0; round < 3; ++round) {
    for (int n : {12, 34, 99, 10, 7}) {
      std::string line = fmt::format("INFO step {}/50 loss 0.{}", n, n);
      Captures caps;
      ASSERT_TRUE((*set)->Confirm(0, line, round == 1 ? nullptr : &caps)) << line;
      if (round == 1) continue;
      ASSERT_EQ(caps.size(), 2u) << line;
      EXPECT_EQ(caps[0], (std::pair<std::string, std::string>{"step", std::to_string(n)}));
      EXPECT_EQ(caps[1], (std::pair<std::string, std::string>{"total", "50"}));
    }
    EXPECT_FALSE((*set)->Confirm(0, "INFO stop 12/50 loss 0.12", nullptr));
    Captures caps;
    EXPECT_TRUE((*set)->Confirm(0, "step 1/2 xx", &caps));
    ASSERT_EQ(caps.size(), 3u);
    EXPECT_EQ(caps[1].second, "1");
    EXPECT_EQ(caps[2].second, "2");
    EXPECT_EQ(caps[0].second, "xx");  // groups come in name order
    EXPECT_TRUE((*set)->Confirm(1, "SeqNum=12", nullptr));
    EXPECT_FALSE((*set)->Confirm(1, "SeqNum=02", nullptr));
  }
}

}  // namespace
}  // namespace faultline::rules
