// Golden tests: every tests/golden/<name>/ holds real log file(s), a README
// saying what happened, and expected.json, the reviewed output of
// `faultline triage --json` run in that folder. scripts/update-golden
// rewrites expected.json; a change shows up as a diff in review.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json_schema.h"
#include "test_util.h"

namespace faultline::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> GoldenDirs() {
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(std::string(FAULTLINE_SOURCE_DIR) + "/tests/golden")) {
    if (e.is_directory()) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string InputArgs(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name == "README.md" || name == "expected.json") continue;
    files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  std::string args;
  for (const auto& f : files) args += " " + ShellQuote(f);
  return args;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, TriageJsonMatchesExpected) {
  const std::string dir = GetParam();
  const std::string expected_path = dir + "/expected.json";
  ASSERT_TRUE(fs::exists(expected_path)) << "no expected.json in " << dir << " (run scripts/update-golden)";
  CommandResult r = RunShell(std::string(FAULTLINE_BINARY) + " triage --json" + InputArgs(dir), dir);
  ASSERT_TRUE(r.err.empty() || r.exit_code != 2) << r.err;
  json actual = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(actual.is_discarded()) << "not JSON: " << r.out.substr(0, 500) << r.err;
  json expected = json::parse(ReadFile(expected_path));
  EXPECT_EQ(r.exit_code, actual["verdict"] == "healthy" ? 0 : 1);

  static const json schema = json::parse(ReadFile(std::string(FAULTLINE_SOURCE_DIR) + "/docs/triage.schema.json"));
  for (const auto& problem : ValidateSchema(schema, actual)) ADD_FAILURE() << "schema: " << problem;

  // The fields a reader checks first, reported plainly before the full diff.
  EXPECT_EQ(actual["verdict"], expected["verdict"]);
  EXPECT_EQ(actual["last_phase"], expected["last_phase"]);
  if (expected["root_cause"].is_object()) {
    ASSERT_TRUE(actual["root_cause"].is_object());
    EXPECT_EQ(actual["root_cause"]["message"], expected["root_cause"]["message"]);
    EXPECT_EQ(actual["root_cause"]["line"], expected["root_cause"]["line"]);
    EXPECT_EQ(actual["root_cause"]["rule"], expected["root_cause"]["rule"]);
  }
  json patch = json::diff(expected, actual);
  if (!patch.empty()) {
    std::string shown;
    for (size_t i = 0; i < patch.size() && i < 15; ++i) shown += "  " + patch[i].dump().substr(0, 300) + "\n";
    ADD_FAILURE() << patch.size() << " difference(s) from expected.json (expected -> actual):\n" << shown;
  }
}

std::string Name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).filename().string();
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Logs, GoldenTest, ::testing::ValuesIn(GoldenDirs()), Name);

}  // namespace
}  // namespace faultline::testing
