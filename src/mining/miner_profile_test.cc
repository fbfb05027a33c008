#include "mining/miner_profile.h"

#include <gtest/gtest.h>

namespace faultline::mining {
namespace {

TEST(MinerProfile, BuiltinFileLoadsEveryProfile) {
  auto names = ProfileNames(BuiltinProfiles(), "mining.yaml");
  ASSERT_TRUE(names.ok()) << names.status().message();
  ASSERT_FALSE(names->empty());
  EXPECT_EQ(names->front(), "default");
  for (const std::string& name : *names) {
    auto options = LoadProfile(BuiltinProfiles(), "mining.yaml", name);
    ASSERT_TRUE(options.ok()) << name << ": " << options.status().message();
    // Every profile must also build a miner (its patterns compile).
    EXPECT_TRUE(TemplateMiner::Create(*options).ok()) << name;
  }
}

TEST(MinerProfile, StructDefaultsMatchTheDefaultProfile) {
  auto options = LoadProfile(BuiltinProfiles(), "mining.yaml", "default");
  ASSERT_TRUE(options.ok());
  MinerOptions plain;
  EXPECT_DOUBLE_EQ(options->similarity, plain.similarity);
  EXPECT_EQ(options->variant_values, plain.variant_values);
  EXPECT_EQ(options->prefix_tokens, plain.prefix_tokens);
  EXPECT_EQ(options->max_templates, plain.max_templates);
  auto miner = MakeMiner();
  ASSERT_TRUE(miner.ok());
  EXPECT_EQ(MakeMiner("NoSuchProfile").status().code(), StatusCode::kNotFound);
}

TEST(MinerProfile, ProfilesLayerOverDefault) {
  constexpr char kYaml[] = R"(profiles:
  default:
    similarity: 0.6
    max_templates: 10
  tight:
    similarity: 0.9
    variant_values: 3
    mask: [number, ip]
    patterns: ['blk_-?\d+', {match: 'bytes( \(.*?\))? sent', replace: 'bytes <*> sent'}]
    delimiters: "="
)";
  auto tight = LoadProfile(kYaml, "t.yaml", "tight");
  ASSERT_TRUE(tight.ok()) << tight.status().message();
  EXPECT_DOUBLE_EQ(tight->similarity, 0.9);
  EXPECT_EQ(tight->max_templates, 10u);
  EXPECT_EQ(tight->variant_values, 3u);
  EXPECT_TRUE(tight->mask.numbers);
  EXPECT_TRUE(tight->mask.ip);
  EXPECT_FALSE(tight->mask.path);
  ASSERT_EQ(tight->mask.patterns.size(), 2u);
  EXPECT_EQ(tight->mask.patterns[0].match, "blk_-?\\d+");
  EXPECT_EQ(tight->mask.patterns[0].replace, "<*>");
  EXPECT_EQ(tight->mask.patterns[1].replace, "bytes <*> sent");
  EXPECT_EQ(tight->mask.delimiters, "=");
  auto base = LoadProfile(kYaml, "t.yaml", "default");
  ASSERT_TRUE(base.ok());
  EXPECT_DOUBLE_EQ(base->similarity, 0.6);
  EXPECT_TRUE(base->mask.path);
}

TEST(MinerProfile, ErrorsNameFileAndLine) {
  constexpr char kUnknownKey[] = "profiles:\n  default:\n    similarity: 0.5\n    depth: 4\n";
  auto a = LoadProfile(kUnknownKey, "m.yaml", "default");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "m.yaml:4: unknown key 'depth'");

  constexpr char kBadClass[] = "profiles:\n  x:\n    mask: [number, email]\n";
  auto b = LoadProfile(kBadClass, "m.yaml", "x");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("m.yaml:3: unknown mask class 'email'"), std::string::npos);

  constexpr char kBadValue[] = "profiles:\n  x:\n    similarity: 1.5\n";
  EXPECT_FALSE(LoadProfile(kBadValue, "m.yaml", "x").ok());
  EXPECT_EQ(LoadProfile(kBadValue, "m.yaml", "nope").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(LoadProfile("profiles: [", "m.yaml", "x").ok());
}

}  // namespace
}  // namespace faultline::mining
