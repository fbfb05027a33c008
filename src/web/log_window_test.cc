#include "web/log_window.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace faultline::web {
namespace {

std::string WriteTemp(const std::string& content) {
  std::string path = ::testing::TempDir() + "/log_window_" + std::to_string(getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log";
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::vector<std::string> Texts(const LogWindow& w) {
  std::vector<std::string> out;
  for (const auto& l : w.lines) out.push_back(l.text);
  return out;
}

TEST(ClassifyLineTest, LevelsOfRealLogLines) {
  EXPECT_EQ(ClassifyLine("(Worker pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:800] WorkerProc failed to start."),
            LineLevel::kError);
  EXPECT_EQ(ClassifyLine("AssertionError: DP adjusted local rank 3 is out of bounds."), LineLevel::kError);
  EXPECT_EQ(ClassifyLine("Traceback (most recent call last):"), LineLevel::kError);
  EXPECT_EQ(ClassifyLine("WARNING 05-09 15:15:01 [__init__.py:1234] something"), LineLevel::kWarning);
  EXPECT_EQ(ClassifyLine("INFO 01-23 15:48:28 [__init__.py:216] Automatically detected platform cuda."), LineLevel::kInfo);
  EXPECT_EQ(ClassifyLine("E0509 15:15:10.123456 12345 ProcessGroupNCCL.cpp:1234] bad"), LineLevel::kError);
  EXPECT_EQ(ClassifyLine("DEBUG 05-09 x"), LineLevel::kDebug);
  EXPECT_EQ(ClassifyLine("step 1/20 loss 0.6990"), LineLevel::kOther);
  EXPECT_EQ(ClassifyLine("INFORMATION about ERRORS"), LineLevel::kOther);  // words, not prefixes
}

TEST(ReadBackwardTest, TailOfAFileWithAndWithoutFinalNewline) {
  std::string path = WriteTemp("one\ntwo\nthree\n");
  WindowLimits lim;
  lim.max_lines = 2;
  auto w = ReadBackward(path, -1, lim);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(Texts(*w), (std::vector<std::string>{"two", "three"}));
  EXPECT_EQ(w->lines[0].offset, 4);
  EXPECT_EQ(w->start, 4);
  EXPECT_FALSE(w->reached_start);
  EXPECT_FALSE(w->partial_last);
  auto before = ReadBackward(path, w->start, lim);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(Texts(*before), (std::vector<std::string>{"one"}));
  EXPECT_TRUE(before->reached_start);

  std::string partial = WriteTemp("a\nb\nc-no-newline");
  auto p = ReadBackward(partial, -1, WindowLimits{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Texts(*p), (std::vector<std::string>{"a", "b", "c-no-newline"}));
  EXPECT_TRUE(p->partial_last);
  EXPECT_TRUE(p->reached_start);
}

TEST(ReadBackwardTest, LinesAcrossBlockBoundariesAndFilters) {
  std::string content;
  for (int i = 0; i < 5000; ++i) {
    content += (i % 100 == 7 ? "ERROR boom " : "INFO fine ") + std::string(40, 'x') + " #" + std::to_string(i) + "\n";
  }
  std::string path = WriteTemp(content);
  WindowLimits lim;
  lim.max_lines = 5000;
  auto all = ReadBackward(path, -1, lim);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->lines.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(all->lines[i].text.substr(all->lines[i].text.rfind('#') + 1), std::to_string(i));
  lim.min_level = LineLevel::kError;
  auto errors = ReadBackward(path, -1, lim);
  ASSERT_TRUE(errors.ok());
  EXPECT_EQ(errors->lines.size(), 50u);
  lim.min_level = LineLevel::kDebug;
  lim.query = "#4207";
  auto found = ReadBackward(path, -1, lim);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->lines.size(), 1u);
  EXPECT_EQ(found->lines[0].level, LineLevel::kError);
  EXPECT_EQ(content.substr(static_cast<size_t>(found->lines[0].offset), 10), "ERROR boom");
}

TEST(ReadBackwardTest, ByteBudgetStopsAtALineStart) {
  std::string content;
  for (int i = 0; i < 20000; ++i) content += "line " + std::to_string(i) + "\n";
  std::string path = WriteTemp(content);
  WindowLimits lim;
  lim.max_lines = 100000;
  lim.max_bytes = 1000;
  auto w = ReadBackward(path, -1, lim);
  ASSERT_TRUE(w.ok());
  EXPECT_LE(static_cast<int64_t>(content.size()) - w->start, 1000);
  EXPECT_FALSE(w->reached_start);
  EXPECT_EQ(content[static_cast<size_t>(w->start) - 1], '\n');
  EXPECT_EQ(w->lines.back().text, "line 19999");
}

TEST(ReadForwardTest, AppendsWithoutThePartialLine) {
  std::string path = WriteTemp("a\nbb\ncc");
  auto w = ReadForward(path, 2, WindowLimits{}, /*include_partial=*/false);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(Texts(*w), (std::vector<std::string>{"bb"}));
  EXPECT_EQ(w->end, 5);  // where "cc" starts: asked again once it is whole
  auto with = ReadForward(path, 2, WindowLimits{}, true);
  ASSERT_TRUE(with.ok());
  EXPECT_EQ(Texts(*with), (std::vector<std::string>{"bb", "cc"}));
  EXPECT_FALSE(ReadForward(path + ".missing", 0, WindowLimits{}).ok());
}

TEST(ReadForwardTest, LongLinesAreCut) {
  std::string path = WriteTemp(std::string(100000, 'z') + "\nnext\n");
  auto w = ReadForward(path, 0, WindowLimits{});
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->lines.size(), 2u);
  EXPECT_EQ(w->lines[0].text.size(), kMaxLineBytes);
  EXPECT_EQ(w->lines[1].offset, 100001);
  auto b = ReadBackward(path, -1, WindowLimits{});
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->lines.size(), 2u);
  EXPECT_EQ(b->lines[0].text.size(), kMaxLineBytes);
  EXPECT_EQ(b->lines[0].offset, 0);
}

}  // namespace
}  // namespace faultline::web
