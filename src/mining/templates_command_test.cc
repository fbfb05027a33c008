// End-to-end: `faultline templates` on a real log (runs the built binary).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
};

CliRun Faultline(const std::string& args) {
  CliRun run;
  std::string cmd = std::string(FAULTLINE_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) run.out.append(buf, n);
  int status = pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

const std::string kLog = std::string(FAULTLINE_SOURCE_DIR) + "/tests/golden/torchrun-collective-timeout/train.log";

TEST(TemplatesCommand, PerLineCsvHasOneRowPerLine) {
  CliRun run = Faultline("templates --per-line --csv " + kLog);
  ASSERT_EQ(run.exit_code, 0);
  std::istringstream in(run.out);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "LineId,EventId,EventTemplate");
  std::vector<std::string> rows;
  for (std::string row; std::getline(in, row);) rows.push_back(row);
  ASSERT_EQ(rows.size(), 63u);  // the log has 63 lines
  std::map<std::string, int> ids;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].substr(0, rows[i].find(',')), std::to_string(i + 1));
  }
  // Lines 9-12 are "step N/20 loss X lr Y": one template.
  auto event = [&](size_t line) {
    const std::string& r = rows[line - 1];
    size_t a = r.find(',');
    return r.substr(a + 1, r.find(',', a + 1) - a - 1);
  };
  EXPECT_EQ(event(9), event(10));
  EXPECT_EQ(event(9), event(12));
  EXPECT_NE(rows[8].find("step <*> loss <*> lr <*>"), std::string::npos) << rows[8];
}

TEST(TemplatesCommand, JsonAndText) {
  CliRun json = Faultline("templates --json " + kLog);
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_NE(json.out.find("\"schema\": \"faultline.templates/1\""), std::string::npos);
  EXPECT_NE(json.out.find("\"lines\": 63"), std::string::npos);
  CliRun text = Faultline("templates " + kLog);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out.rfind("63 lines, ", 0), 0u) << text.out.substr(0, 80);
}

TEST(TemplatesCommand, MessagesModeKeepsTheHeader) {
  CliRun run = Faultline("templates --messages --per-line --csv " + kLog);
  ASSERT_EQ(run.exit_code, 0);
  // Without header stripping, the glog prefix (W1129 ...) stays in the template.
  EXPECT_NE(run.out.find(",W1129 "), std::string::npos);
  CliRun stripped = Faultline("templates --per-line --csv " + kLog);
  EXPECT_EQ(stripped.out.find(",W1129 "), std::string::npos);
}

TEST(TemplatesCommand, UsageErrors) {
  CliRun missing = Faultline("templates /nonexistent/file.log");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(missing.out.empty());
  CliRun profile = Faultline("templates --profile NoSuchProfile " + kLog);
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_TRUE(profile.out.empty());
}

}  // namespace
