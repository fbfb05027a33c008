#include "input/line_reader.h"

#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace faultline::input {
namespace {

// A ByteSource over a string that hands out at most `step` bytes per read,
// to exercise lines split across reads.
class StringSource : public ByteSource {
 public:
  StringSource(std::string data, size_t step) : data_(std::move(data)), step_(step) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min({n, step_, data_.size() - pos_});
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  Compression compression() const override { return Compression::kNone; }
  int64_t raw_bytes_read() const override { return static_cast<int64_t>(pos_); }

 private:
  std::string data_;
  size_t step_;
  size_t pos_ = 0;
};

std::vector<std::string> ReadAllLines(LineReader& reader, std::vector<int64_t>* numbers = nullptr) {
  std::vector<std::string> lines;
  LineBlock block;
  while (reader.NextBlock(&block)) {
    EXPECT_EQ(block.data.back(), '\n');
    int64_t n = block.first_line;
    size_t pos = 0;
    while (pos < block.data.size()) {
      size_t nl = block.data.find('\n', pos);
      lines.emplace_back(block.data.substr(pos, nl - pos));
      if (numbers) numbers->push_back(n);
      ++n;
      pos = nl + 1;
    }
  }
  return lines;
}

TEST(LineReaderTest, SplitsLinesAcrossSmallReadsAndNumbersThem) {
  auto src = std::make_unique<StringSource>("alpha\nbeta\n\ngamma", 3);
  LineReader reader(std::move(src), {.block_bytes = 8, .max_line_bytes = 64});
  std::vector<int64_t> numbers;
  auto lines = ReadAllLines(reader, &numbers);
  EXPECT_EQ(lines, (std::vector<std::string>{"alpha", "beta", "", "gamma"}));
  EXPECT_EQ(numbers, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(reader.lines(), 4);
  EXPECT_TRUE(reader.status().ok());
}

TEST(LineReaderTest, CutsOverlongLineAndKeepsTheNextOne) {
  std::string huge(10000, 'x');
  auto src = std::make_unique<StringSource>("first\n" + huge + "\nafter\n", 700);
  LineReader reader(std::move(src), {.block_bytes = 256, .max_line_bytes = 100});
  std::vector<int64_t> numbers;
  auto lines = ReadAllLines(reader, &numbers);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "first");
  EXPECT_EQ(lines[1], std::string(100, 'x'));
  EXPECT_EQ(lines[2], "after");
  EXPECT_EQ(numbers[2], 3);
  EXPECT_EQ(reader.truncated_lines(), 1);
}

TEST(LineReaderTest, EmptyStreamHasNoLines) {
  LineReader reader(std::make_unique<StringSource>("", 10));
  EXPECT_TRUE(ReadAllLines(reader).empty());
}

TEST(LineReaderTest, ManyLinesInLargeBlocks) {
  std::string data;
  for (int i = 0; i < 100000; ++i) data += "line " + std::to_string(i) + "\n";
  LineReader reader(std::make_unique<StringSource>(data, 4096), {.block_bytes = 65536, .max_line_bytes = 1024});
  auto lines = ReadAllLines(reader);
  ASSERT_EQ(lines.size(), 100000u);
  EXPECT_EQ(lines[99999], "line 99999");
}

}  // namespace
}  // namespace faultline::input
