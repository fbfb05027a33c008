#include "input/line_cleaner.h"

#include <gtest/gtest.h>

namespace faultline::input {
namespace {

std::string Clean(std::string_view s) {
  std::string out;
  CleanLineInto(s, &out);
  return out;
}

TEST(LineCleanerTest, StripsAnsiColourFromVllmPrefix) {
  EXPECT_EQ(Clean("\x1b[1;36m(EngineCore_DP0 pid=6688)\x1b[0;0m INFO hello"), "(EngineCore_DP0 pid=6688) INFO hello");
}

TEST(LineCleanerTest, KeepsLastProgressBarState) {
  EXPECT_EQ(Clean("Loading:  10%|#  |\rLoading:  50%|#####|\rLoading: 100%|##########|"), "Loading: 100%|##########|");
}

TEST(LineCleanerTest, WindowsLineEndingAndNulBytes) {
  EXPECT_EQ(Clean("INFO started\r"), "INFO started");
  EXPECT_EQ(Clean(std::string_view("ab\0\0c", 5)), "abc");
  EXPECT_TRUE(NeedsCleaning("x\r"));
  EXPECT_FALSE(NeedsCleaning("plain text"));
}

TEST(LineCleanerTest, TrailingCarriageReturnAfterRewriteKeepsContent) { EXPECT_EQ(Clean("a\rbb\r"), "bb"); }

// A coloured logger's reset code after a CRLF's '\r', a progress bar's
// erase-line or blanks after a rewrite print nothing: the text stays.
TEST(LineCleanerTest, ARewriteThatPrintsNothingKeepsTheTextBeforeIt) {
  EXPECT_EQ(Clean("\x1b[32mtorch.AcceleratorError: CUDA error: out of memory\r\x1b[0m"),
            "torch.AcceleratorError: CUDA error: out of memory");
  EXPECT_EQ(Clean("step 5/10\r\x1b[K"), "step 5/10");
  EXPECT_EQ(Clean("step 5/10\r      "), "step 5/10");
  EXPECT_EQ(Clean("step 5/10\r\x1b[Kstep 6/10"), "step 6/10");
}

// A bar redrawn on one line keeps its last state; the cleaner reports the
// first state of the same bar (the same text before its first digit), and
// nothing for another line's text or a line without a redraw.
TEST(LineCleanerTest, ARedrawnBarReportsItsFirstState) {
  auto earlier = [](std::string_view line) {
    std::string out, first;
    CleanLineInto(line, &out, &first);
    return out + "|" + first;
  };
  EXPECT_EQ(earlier("worker-1  | \rtrain:   0%| 0/1000\rtrain:   0%| 0/1000\rtrain:  32%| 315/1000"),
            "train:  32%| 315/1000|train:   0%| 0/1000");
  EXPECT_EQ(earlier("\r  0%|  | 0/8\r\x1b[K 50%|# | 4/8\r"), " 50%|# | 4/8|  0%|  | 0/8");
  EXPECT_EQ(earlier("step 5/10\rstep 5/10"), "step 5/10|");
  EXPECT_EQ(earlier("loading 1 file\rtrain: 3/10"), "train: 3/10|");
  EXPECT_EQ(earlier("train: 3/10"), "train: 3/10|");
  EXPECT_EQ(earlier("a\rbb"), "bb|");
}

// Buildkite writes its time stamps as APC strings (ESC _ bk;t=MILLIS BEL),
// terminals' hyperlinks and titles are OSC strings: none of it is text.
TEST(LineCleanerTest, StripsApcAndOscStrings) {
  EXPECT_EQ(Clean("\x1b_bk;t=1715267710123\x07[rank0]: Traceback (most recent call last):"),
            "[rank0]: Traceback (most recent call last):");
  EXPECT_EQ(Clean("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ done"), "link done");
}

TEST(LineCleanerTest, CaretNotationOfEscapesAndCarriageReturnsIsCleaned) {
  // A paste from `cat -v` / less: ESC shows as "^[", the CRLF's '\r' as a trailing "^M".
  EXPECT_EQ(
      Clean("ERROR 03-25 [core.py:340] ray.exceptions.RayTaskError(ValueError): ^[[36mray::W.f()^[[39m (pid=1)^M"),
      "ERROR 03-25 [core.py:340] ray.exceptions.RayTaskError(ValueError): ray::W.f() (pid=1)");
  EXPECT_TRUE(NeedsCleaning("x^M"));
  EXPECT_TRUE(NeedsCleaning("a ^[[32m [repeated 4x across cluster]^[[0m"));
  // Python's caret markers and a regex are text.
  EXPECT_FALSE(NeedsCleaning("    ^^^^^^^^^^^^^^^^"));
  EXPECT_EQ(Clean("pattern [^[[]+ and ^[[ x"), "pattern [^[[]+ and ^[[ x");
}

TEST(LineCleanerTest, InvalidUtf8IsKept) { EXPECT_EQ(Clean("caf\xe9"), "caf\xe9"); }

}  // namespace
}  // namespace faultline::input
