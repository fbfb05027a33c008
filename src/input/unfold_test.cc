#include "input/unfold.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "input/reshape_test_util.h"

namespace faultline::input {
namespace {

namespace fs = std::filesystem;

// What `fold -w width` prints (by characters, as a terminal wraps).
std::string Folded(const std::string& text, int width) {
  std::string out;
  for (const std::string& line : Lines(text)) {
    std::string row;
    int cols = 0;
    for (size_t i = 0; i < line.size();) {
      size_t len = 1;
      const unsigned char c = static_cast<unsigned char>(line[i]);
      if (c >= 0xF0) len = 4;
      else if (c >= 0xE0) len = 3;
      else if (c >= 0xC0) len = 2;
      const std::string ch = line.substr(i, len);
      const int w = RowWidth(ch);
      if (cols + w > width) {
        out += row + "\n";
        row.clear();
        cols = 0;
      }
      row += ch;
      cols += w;
      i += len;
    }
    out += row + "\n";
  }
  return out;
}

std::vector<std::string> GoldenLogs() {
  std::vector<std::string> logs;
  for (const auto& dir : fs::directory_iterator(std::string(FAULTLINE_SOURCE_DIR) + "/tests/golden")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string name = f.path().filename().string();
      if (name == "README.md" || name == "expected.json" || name.ends_with(".gz") || name.ends_with(".zst")) continue;
      logs.push_back(f.path().string());
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

TEST(UnfoldTest, RowWidthCountsTerminalColumns) {
  EXPECT_EQ(RowWidth("abc"), 3);
  EXPECT_EQ(RowWidth("\x1b[31mERROR\x1b[0m x"), 16);  // as `fold` counts escapes
  EXPECT_EQ(RowWidth("a\tb"), 9);
  EXPECT_EQ(RowWidth("\xe8\xae\xad\xe7\xbb\x83 ok"), 7);  // two CJK characters are two columns each
  EXPECT_EQ(RowWidth("\xe2\x96\x88\xe2\x96\x88"), 2);     // block characters of a bar are one each
}

TEST(UnfoldTest, RealTerminalCopiesAreHardWrapped) {
  // A Megatron run's iteration lines cut at 218 columns mid-word ("load_bal" / "ancing_loss").
  FoldShape megatron = DetectFold(Real("megatron-moe-ctrl-c-after-iteration-5/train.log"), true);
  EXPECT_EQ(megatron.width, 218);
  EXPECT_FALSE(megatron.padded);
  // A screen copy: every row filled with blanks to 201 columns.
  FoldShape sglang = DetectFold(Real("sglang-tp8-watchdog-allgather-timeout-while-serving-wrapped/sglang.log"), true);
  EXPECT_EQ(sglang.width, 201);
  EXPECT_TRUE(sglang.padded);
}

TEST(UnfoldTest, LogsWhoseLongestLinesShareOneTemplateAreNotHardWrapped) {
  // Every one has 3 or more distinct rows of its widest width: checkpoint
  // lines of one length, an nccl-tests table, a repeated config warning,
  // watchdog lines; what follows each is a line that starts as lines do.
  for (const char* rel : {"torchtune-srun-label-tail-header-lora-70b-100pct-healthy/convert-checkpoint.out",
                          "nccl-tests-eks-mpijob-allreduce-healthy/launcher.log",
                          "hf-trainer-gpu-ragged-examples-default-collator-valueerror/train.log",
                          "torchrun-perlmutter-ace-allreduce-hang-epoch-3/train.log",
                          "script-grpo-rl-best-eval-acc-training-time-seconds-no-unit-healthy/rl_early_stop.log"}) {
    SCOPED_TRACE(rel);
    EXPECT_EQ(DetectFold(Real(rel), true).width, 0);
  }
}

TEST(UnfoldTest, NoGoldenLogIsHardWrapped) {
  for (const std::string& log : GoldenLogs()) {
    SCOPED_TRACE(log);
    EXPECT_EQ(DetectFold(ReadAll(log), true).width, 0);
  }
}

TEST(UnfoldTest, GoldenLogsFoldedAt100ReadBackAsTheyWere) {
  int eligible = 0, detected = 0;
  for (const std::string& log : GoldenLogs()) {
    const std::string text = ReadAll(log);
    int long_rows = 0;
    bool multiple = false;  // a line of exactly 100 or 200 columns is joined to the next: no round trip
    for (const std::string& row : Lines(text)) {
      const int w = RowWidth(row);
      long_rows += w > 100 ? 1 : 0;
      multiple |= w > 0 && w % 100 == 0;
    }
    if (long_rows < 5 || multiple || text.find('\r') != std::string::npos) continue;
    ++eligible;
    const std::string folded = Folded(text, 100);
    const FoldShape shape = DetectFold(folded, true);
    if (shape.width == 0) {
      ADD_FAILURE() << log << ": not recognised folded at 100";
      continue;
    }
    ++detected;
    EXPECT_EQ(shape.width, 100) << log;
    std::vector<std::pair<int64_t, int64_t>> joined;
    EXPECT_EQ(JoinRows(folded, shape, &joined), text) << log;
  }
  EXPECT_GE(eligible, 10);
}

TEST(UnfoldTest, JoinedLinesKeepTheirFileRows) {
  // Rows 1-2 are one line, row 3 one, rows 4-6 one, row 7 one.
  const std::string a(80, 'a'), b(80, 'b');
  const std::string text = a + "\nx1\nshort\n" + b + "\n" + b + "\ny2\nend\n";
  std::vector<std::pair<int64_t, int64_t>> joined;
  const std::string out = JoinRows(text, FoldShape{80, false}, &joined);
  EXPECT_EQ(out, a + "x1\nshort\n" + b + b + "y2\nend\n");
  Unfolding u;
  u.joined = joined;
  EXPECT_EQ(u.FileLine(1), 1);
  EXPECT_EQ(u.FileLine(2), 3);
  EXPECT_EQ(u.FileLine(3), 4);
  EXPECT_EQ(u.FileLine(4), 7);
  EXPECT_EQ(u.FileRows(4), 7);
  EXPECT_EQ(u.FileRows(2), 3);
}

TEST(UnfoldTest, APaddedCopyLosesItsPaddingAndARowOfBlanksStaysABlankLine) {
  const std::string w(30, ' ');
  std::string text = std::string(70, 'x') + "\n" + "tail" + std::string(66, ' ') + "\n" + std::string(70, ' ') + "\n" +
                     "next line" + std::string(61, ' ') + "\n";
  std::vector<std::pair<int64_t, int64_t>> joined;
  EXPECT_EQ(JoinRows(text, FoldShape{70, true}, &joined), std::string(70, 'x') + "tail\n\nnext line\n");
}

TEST(UnfoldTest, ThePaddedRealCopyGivesTheWatchdogLineWhole) {
  const std::string text = Real("sglang-tp8-watchdog-allgather-timeout-while-serving-wrapped/sglang.log");
  std::vector<std::pair<int64_t, int64_t>> joined;
  const std::vector<std::string> lines = Lines(JoinRows(text, DetectFold(text, true), &joined));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("Timeout(ms)=600000) ran for 600012 milliseconds before timing out."), std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[0].back(), '.');
}

TEST(UnfoldTest, UnfoldedSourceJoinsAFoldedFileAndPassesOthersOn) {
  const std::string text = Real("megatron-moe-ctrl-c-after-iteration-5/train.log");
  {
    auto src = OpenByteSource(TempFile("unfold", text));
    ASSERT_TRUE(src.ok());
    Unfolding how;
    auto unfolded = Unfolded(std::move(*src), size_t{64} << 20, &how);
    ASSERT_TRUE(unfolded.ok());
    const std::string out = Drain(**unfolded);
    EXPECT_EQ(how.shape.width, 218);
    EXPECT_FALSE(how.joined.empty());
    EXPECT_NE(out.find("load_balancing_loss"), std::string::npos);
    EXPECT_EQ(how.FileRows(static_cast<int64_t>(Lines(out).size())), static_cast<int64_t>(Lines(text).size()));
  }
  {
    auto src = OpenByteSource(TempFile("unfold", text));
    ASSERT_TRUE(src.ok());
    Unfolding how;
    auto unfolded = Unfolded(std::move(*src), 1000, &how);
    ASSERT_TRUE(unfolded.ok());
    EXPECT_EQ(Drain(**unfolded), text);
    EXPECT_TRUE(how.too_large);
    EXPECT_EQ(how.shape.width, 0);
  }
  const std::string plain = Real("torchtune-srun-label-tail-header-lora-70b-100pct-healthy/convert-checkpoint.out");
  auto src = OpenByteSource(TempFile("unfold", plain));
  ASSERT_TRUE(src.ok());
  Unfolding how;
  auto unfolded = Unfolded(std::move(*src), size_t{64} << 20, &how);
  ASSERT_TRUE(unfolded.ok());
  EXPECT_EQ(Drain(**unfolded), plain);
  EXPECT_EQ(how.shape.width, 0);
}

}  // namespace
}  // namespace faultline::input
