#include "parse/prefix_learner.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace faultline::parse {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l) && lines.size() < 200;) lines.push_back(l);
  return lines;
}

std::vector<std::string_view> Views(const std::vector<std::string>& lines) {
  return std::vector<std::string_view>(lines.begin(), lines.end());
}

std::vector<std::string> Wrapped(const std::vector<std::string>& lines, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(prefix + l);
  return out;
}

const std::string kSeed = std::string(FAULTLINE_SOURCE_DIR) + "/examples/seed-vllm-dp-rank/vllm.log";

TEST(PrefixShapeTest, WordsBlanksAndPunctuation) {
  EXPECT_EQ(PrefixShape("[gpu-node-1] "), "[w] ");
  EXPECT_EQ(PrefixShape("15:15:10  "), "w:w:w  ");  // the last blank run as it is
  EXPECT_EQ(PrefixShape("Dec  1 15:15:10 "), "w w w:w:w ");
}

TEST(PrefixLearnerTest, AnUnknownPrefixOnARealLogIsLearned) {
  const auto seed = ReadLines(kSeed);
  ASSERT_FALSE(seed.empty());
  for (const std::string prefix : {"[gpu-node-1] ", "15:15:10  ", "vllm-7c9f8d-abcde vllm "}) {
    const auto lines = Wrapped(seed, prefix);
    auto learned = LearnPrefix(Views(lines));
    ASSERT_TRUE(learned.has_value()) << prefix;
    EXPECT_EQ(learned->shape, PrefixShape(prefix));
  }
}

TEST(PrefixLearnerTest, AnUnwrappedLogWearsNothing) {
  for (const std::string& log :
       {kSeed, std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/sglang-served-then-sigterm-shutdown/sglang-int4.log",
        std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/megatron-4090-llama2-ends-at-iteration-10/train.log"}) {
    const auto lines = ReadLines(log);
    ASSERT_FALSE(lines.empty()) << log;
    auto learned = LearnPrefix(Views(lines));
    EXPECT_FALSE(learned.has_value()) << log << ": " << (learned ? learned->shape : "");
  }
}

TEST(PrefixLearnerTest, APasteIndentedAsAWholeIsDedented) {
  // tests/real/megatron-deepspeed-checkpoint-save-universal-info-attributeerror: a traceback quoted in
  // a Markdown list item, every line 6 blanks in.
  const auto lines = ReadLines(std::string(FAULTLINE_SOURCE_DIR) +
                               "/tests/real/megatron-deepspeed-checkpoint-save-universal-info-attributeerror/"
                               "traceback.txt");
  ASSERT_GT(lines.size(), 10u);
  auto learned = LearnPrefix(Views(lines));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->shape, "      ");
  const auto seed = Wrapped(ReadLines(kSeed), "    ");
  learned = LearnPrefix(Views(seed));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->shape, "    ");
}

TEST(PrefixLearnerTest, APasteOfFramesAloneKeepsItsIndentation) {
  // A traceback cut before its first and last lines: the frames' own indentation is no wrapper.
  const std::vector<std::string> frames = {
      "  File \"/w/train.py\", line 236, in main",
      "    train_detector(",
      "  File \"/w/mmdet/apis/train.py\", line 246, in train_detector",
      "    runner.run(data_loaders, cfg.workflow)",
      "  File \"/w/mmcv/runner/epoch_based_runner.py\", line 127, in run",
      "    epoch_runner(data_loaders[i], **kwargs)",
  };
  EXPECT_FALSE(LearnPrefix(Views(frames)).has_value());
}

TEST(PrefixLearnerTest, AnEmptyColumnBeforeEveryLineIsLearned) {
  // tests/real/llamafactory-torchrun-rank18-main-process-first-barrier-nccl-ibv-reg-mr-bad-address: a
  // pdsh host column cut off by the copy leaves ": " before every "[rank18]: " line.
  const auto lines = ReadLines(std::string(FAULTLINE_SOURCE_DIR) +
                               "/tests/real/llamafactory-torchrun-rank18-main-process-first-barrier-nccl-ibv-reg-mr-bad-"
                               "address/train.log");
  ASSERT_GT(lines.size(), 10u);
  auto learned = LearnPrefix(Views(lines));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->shape, ": ");
  learned = LearnPrefix(Views(Wrapped(ReadLines(kSeed), "# ")));
  ASSERT_TRUE(learned.has_value());
  EXPECT_EQ(learned->shape, "# ");
  // Not when some recognised lines go without it: punctuation alone is a framework's own otherwise.
  auto seed = Wrapped(ReadLines(kSeed), ": ");
  seed[3] = seed[3].substr(2);
  EXPECT_FALSE(LearnPrefix(Views(seed)).has_value());
}

TEST(PrefixLearnerTest, PrefixesOfDifferentShapesAreNoWrapper) {
  const auto seed = ReadLines(kSeed);
  std::vector<std::string> mixed;
  const char* prefixes[] = {"[a] ", "b: ", "c | d ", "<e> "};
  for (size_t i = 0; i < seed.size(); ++i) mixed.push_back(prefixes[i % 4] + seed[i]);
  EXPECT_FALSE(LearnPrefix(Views(mixed)).has_value());
}

}  // namespace
// tests/real cases, whole: a llama.cpp server log (no line the parser knows as
// a framework's) and a Megatron log that opens with its argument dump.
const std::string kRealDir = std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/";
const std::string kLlamaCpp = kRealDir + "llamacpp-server-lora-scale-cuda-invalid-argument/llama-server.log";
const std::string kMegatronArgs =
    kRealDir + "megatron-deepspeed-zero-perf-nbs48-log-ends-at-iteration-3/meg_ds_zero_gpt2_perf_n16_nbs48_ms48.out";

TEST(PasteIndentationTest, AnIndentedPasteIsDedentedWhateverItsLinesHold) {
  const auto llama = ReadLines(kLlamaCpp);
  ASSERT_GT(llama.size(), 64u);
  EXPECT_EQ(PasteIndentation(Views(llama)), "");
  const auto code_block = Wrapped(llama, "    ");  // a Markdown indented code block
  EXPECT_EQ(PasteIndentation(Views(code_block)), "    ");
  const auto tabbed = Wrapped(ReadLines(kSeed), "\t");
  EXPECT_EQ(PasteIndentation(Views(tabbed)), "\t");
}

TEST(PasteIndentationTest, APasteOfAFewLinesIsItsOwnEvidence) {
  const std::vector<std::string> two = {"    GGML_ASSERT: ggml-cuda.cu:100: !\"CUDA error\"", "    Aborted (core dumped)"};
  EXPECT_EQ(PasteIndentation(Views(two)), "    ");
  const std::vector<std::string> frames = {"  File \"/w/train.py\", line 236, in main", "    train_detector(",
                                           "  File \"/w/mmdet/apis/train.py\", line 246, in train_detector",
                                           "    runner.run(data_loaders, cfg.workflow)"};
  EXPECT_EQ(PasteIndentation(Views(frames)), "") << "frames alone keep their indentation";
}

TEST(PasteIndentationTest, BarsRedrawnToTheMarginDoNotHideTheIndentation) {
  // The cleaner keeps a '\r'-redrawn bar's last state, which starts at the
  // margin: a few sample lines of an indented paste lose the blanks.
  auto lines = Wrapped(ReadLines(kSeed), "    ");
  ASSERT_GT(lines.size(), 20u);
  for (size_t n = 3; n < lines.size(); n += 8) lines[n] = "Loading safetensors checkpoint shards:  40% Completed | 2/5";
  EXPECT_EQ(PasteIndentation(Views(lines)), "    ");
}

TEST(PasteIndentationTest, ALogsOwnIndentedBlockIsNoPaste) {
  // Megatron's `  name .......... value` argument lines fill most of the
  // first lines, under headers at the margin: dedenting them would take the
  // blanks of every later traceback frame.
  const auto megatron = ReadLines(kMegatronArgs);
  ASSERT_GT(megatron.size(), 64u);
  EXPECT_EQ(PasteIndentation(Views(megatron)), "");
}

}  // namespace faultline::parse
