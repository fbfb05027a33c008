#include "rules/rule_loader.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::rules {
namespace {

TEST(RuleLoaderTest, ParsesASignature) {
  auto rules = ParseRuleFile(R"(
framework: vllm
rules:
  - id: vllm.test
    pattern: 'local rank (?P<rank>\d+) is out of bounds'
    category: gpu-visibility
    explanation: rank {rank}
    fix: expose more GPUs
    samples:
      match: ["AssertionError: DP adjusted local rank 3 is out of bounds."]
      no_match: ["local rank ok"]
)",
                             "t.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ((*rules)[0].framework, "vllm");
  EXPECT_EQ((*rules)[0].kind, RuleKind::kSignature);
  EXPECT_TRUE(CheckSamples(*rules).empty());
}

TEST(RuleLoaderTest, ErrorsNameFileAndLine) {
  auto rules = ParseRuleFile("rules:\n  - id: a\n    pattern: 'x'\n    kind: nonsense\n", "bad.yaml");
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.status().message().find("bad.yaml:2"), std::string::npos) << rules.status().message();
  EXPECT_NE(rules.status().message().find("unknown kind"), std::string::npos);
}

TEST(RuleLoaderTest, RejectsBadRegexUnknownFieldsAndMissingSamples) {
  EXPECT_FALSE(
      ParseRuleFile("rules:\n  - id: a\n    kind: benign\n    pattern: '(unclosed'\n    samples: {match: [x]}\n", "f")
          .ok());
  EXPECT_FALSE(
      ParseRuleFile(
          "rules:\n  - id: a\n    kind: benign\n    pattern: 'x'\n    colour: red\n    samples: {match: [x]}\n", "f")
          .ok());
  EXPECT_FALSE(ParseRuleFile("rules:\n  - id: a\n    kind: benign\n    pattern: 'x'\n", "f").ok());
  EXPECT_FALSE(
      ParseRuleFile(
          "rules:\n  - id: a\n    kind: phase\n    phase: lunch\n    pattern: 'x'\n    samples: {match: [x]}\n", "f")
          .ok());
  // explains: an RE2, on signatures only
  const char* sig = "rules:\n  - id: a\n    pattern: 'x'\n    explanation: e\n    fix: f\n    samples: {match: [x]}\n";
  auto ok = ParseRuleFile(std::string(sig) + "    explains: 'has no attribute'\n", "f");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].explains, "has no attribute");
  EXPECT_FALSE(ParseRuleFile(std::string(sig) + "    explains: '(unclosed'\n", "f").ok());
  EXPECT_FALSE(
      ParseRuleFile(
          "rules:\n  - id: a\n    kind: benign\n    pattern: 'x'\n    explains: 'y'\n    samples: {match: [x]}\n", "f")
          .ok());
  // dead: on cascades only
  EXPECT_FALSE(ParseRuleFile(std::string(sig) + "    dead: true\n", "f").ok());
  auto dead = ParseRuleFile(
      "rules:\n  - id: a\n    kind: cascade\n    reason: r\n    dead: true\n    pattern: 'x'\n    samples: {match: "
      "[x]}\n",
      "f");
  ASSERT_TRUE(dead.ok()) << dead.status().message();
  EXPECT_TRUE((*dead)[0].dead);
  // unrecoverable: on signatures only
  auto unrec = ParseRuleFile(std::string(sig) + "    unrecoverable: true\n", "f");
  ASSERT_TRUE(unrec.ok()) << unrec.status().message();
  EXPECT_TRUE((*unrec)[0].unrecoverable);
  EXPECT_FALSE(ParseRuleFile(
                   "rules:\n  - id: a\n    kind: cascade\n    reason: r\n    unrecoverable: true\n    pattern: 'x'\n"
                   "    samples: {match: [x]}\n",
                   "f")
                   .ok());
  // final: a completion marker only
  const char* phase = "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x'\n    final: true\n";
  auto final_rule = ParseRuleFile(std::string(phase) + "    completes: true\n    samples: {match: [x]}\n", "f");
  ASSERT_TRUE(final_rule.ok()) << final_rule.status().message();
  EXPECT_TRUE((*final_rule)[0].final_only);
  EXPECT_FALSE(ParseRuleFile(std::string(phase) + "    samples: {match: [x]}\n", "f").ok());
  // exit: a completion marker only (a line that says the process ended)
  const char* ended = "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x'\n    exit: true\n";
  auto exit_rule = ParseRuleFile(std::string(ended) + "    completes: true\n    samples: {match: [x]}\n", "f");
  ASSERT_TRUE(exit_rule.ok()) << exit_rule.status().message();
  EXPECT_TRUE((*exit_rule)[0].exit_only);
  EXPECT_FALSE(ParseRuleFile(std::string(ended) + "    samples: {match: [x]}\n", "f").ok());
  // ends_at_total: a progress counter only
  const char* counter =
      "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x (?P<step>\\d+)'\n    ends_at_total: "
      "true\n";
  auto run_counter = ParseRuleFile(std::string(counter) + "    progress: true\n    samples: {match: [x 1]}\n", "f");
  ASSERT_TRUE(run_counter.ok()) << run_counter.status().message();
  EXPECT_TRUE((*run_counter)[0].ends_at_total);
  EXPECT_FALSE(ParseRuleFile(std::string(counter) + "    samples: {match: [x 1]}\n", "f").ok());
  // counts_once: a progress counter only
  const char* once =
      "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x (?P<step>\\d+)/(?P<total>\\d+)'\n"
      "    counts_once: true\n";
  auto once_counter = ParseRuleFile(std::string(once) + "    progress: true\n    samples: {match: [x 1/2]}\n", "f");
  ASSERT_TRUE(once_counter.ok()) << once_counter.status().message();
  EXPECT_TRUE((*once_counter)[0].counts_once);
  EXPECT_FALSE(ParseRuleFile(std::string(once) + "    samples: {match: [x 1/2]}\n", "f").ok());
  // traffic: a specific phase mark only (not a generic counter, not a completion marker)
  const char* work = "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x'\n    traffic: true\n";
  auto traffic = ParseRuleFile(std::string(work) + "    samples: {match: [x]}\n", "f");
  ASSERT_TRUE(traffic.ok()) << traffic.status().message();
  EXPECT_TRUE((*traffic)[0].traffic);
  EXPECT_FALSE(ParseRuleFile(std::string(work) + "    progress: true\n    samples: {match: [x]}\n", "f").ok());
  EXPECT_FALSE(ParseRuleFile(std::string(work) + "    completes: true\n    samples: {match: [x]}\n", "f").ok());
  // at_total: a completion marker only
  const char* unit_end =
      "rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'end (?P<step>\\d+)'\n    at_total: "
      "true\n";
  auto last_unit = ParseRuleFile(std::string(unit_end) + "    completes: true\n    samples: {match: [end 3]}\n", "f");
  ASSERT_TRUE(last_unit.ok()) << last_unit.status().message();
  EXPECT_TRUE((*last_unit)[0].at_total);
  EXPECT_FALSE(ParseRuleFile(std::string(unit_end) + "    samples: {match: [end 3]}\n", "f").ok());
  // fallback: a plain phase mark between process-start and ready, or training
  auto worded = [](const std::string& phase, const std::string& more) {
    return ParseRuleFile("rules:\n  - id: a\n    kind: phase\n    phase: " + phase +
                             "\n    pattern: 'x'\n    fallback: true\n" + more + "    samples: {match: [x]}\n",
                         "f");
  };
  auto words = worded("weight-loading", "");
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_TRUE((*words)[0].fallback);
  EXPECT_TRUE(worded("training", "").ok());
  EXPECT_FALSE(worded("ready", "").ok());
  EXPECT_FALSE(worded("process-start", "").ok());
  EXPECT_FALSE(worded("training", "    completes: true\n").ok());
  EXPECT_FALSE(worded("training", "    progress: true\n").ok());
  // launcher: a process-start mark only
  auto start = ParseRuleFile(
      "rules:\n  - id: a\n    kind: phase\n    phase: process-start\n    pattern: 'x'\n    launcher: true\n"
      "    samples: {match: [x]}\n",
      "f");
  ASSERT_TRUE(start.ok()) << start.status().message();
  EXPECT_TRUE((*start)[0].launcher);
  EXPECT_FALSE(ParseRuleFile("rules:\n  - id: a\n    kind: phase\n    phase: training\n    pattern: 'x'\n"
                             "    launcher: true\n    samples: {match: [x]}\n",
                             "f")
                   .ok());
}

TEST(RuleLoaderTest, CheckSamplesReportsMismatch) {
  auto rules = ParseRuleFile(
      "rules:\n  - id: a\n    kind: benign\n    pattern: 'abc'\n    samples: {match: [xyz], no_match: [abc]}\n", "f");
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(CheckSamples(*rules).size(), 2u);
}

TEST(RuleLoaderTest, BuiltinRulesLoadAndPassTheirSamples) {
  auto rules = LoadBuiltinRules();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_GE(rules->size(), 40u);
  auto problems = CheckSamples(*rules);
  for (const auto& p : problems) ADD_FAILURE() << p;
}

}  // namespace
}  // namespace faultline::rules
