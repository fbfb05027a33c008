#include "web/line_index.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace faultline::web {
namespace {

TEST(LineIndexTest, OffsetsAndNumbersMatchAFullScan) {
  std::string path = ::testing::TempDir() + "/line_index_" + std::to_string(getpid()) + ".log";
  std::string content;
  std::vector<int64_t> starts;
  for (int i = 0; i < 3000; ++i) {
    starts.push_back(static_cast<int64_t>(content.size()));
    content += std::string(static_cast<size_t>(i % 37), 'a') + "\n";
  }
  std::ofstream(path, std::ios::binary) << content;
  LineIndex index(path, /*stride=*/64);
  // In small steps, as the server does.
  int64_t total = 0;
  while (true) {
    auto n = index.Update(5000);
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    total += *n;
  }
  EXPECT_EQ(total, static_cast<int64_t>(content.size()));
  EXPECT_EQ(index.complete_lines(), 3000);
  for (int line : {1, 2, 64, 65, 66, 1000, 2999, 3000}) {
    auto off = index.OffsetOfLine(line);
    ASSERT_TRUE(off.has_value()) << line;
    EXPECT_EQ(*off, starts[static_cast<size_t>(line - 1)]) << line;
    auto back = index.LineAt(*off);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, line);
  }
  EXPECT_FALSE(index.OffsetOfLine(3002).has_value());

  // Appended lines are indexed by the next Update; a truncation starts over.
  std::ofstream(path, std::ios::binary | std::ios::app) << "tail line\n";
  ASSERT_TRUE(index.Update().ok());
  EXPECT_EQ(index.complete_lines(), 3001);
  EXPECT_EQ(*index.OffsetOfLine(3001), static_cast<int64_t>(content.size()));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "x\ny\n";
  ASSERT_TRUE(index.Update().ok());
  EXPECT_EQ(index.complete_lines(), 2);
  EXPECT_EQ(*index.OffsetOfLine(2), 2);
}

}  // namespace
}  // namespace faultline::web
