#include "input/byte_source.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "input/input_files.h"

namespace faultline::input {
namespace {

std::string TempPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/" + name + "." + std::to_string(::getpid());
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

std::string Gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(text.size() + 1024, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Result<std::string> ReadAll(const std::string& path) {
  auto src = OpenByteSource(path);
  if (!src.ok()) return src.status();
  std::string all;
  char buf[333];
  for (;;) {
    auto n = (*src)->Read(buf, sizeof(buf));
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    all.append(buf, *n);
  }
  return all;
}

std::string SampleLog() {
  std::string s;
  for (int i = 0; i < 2000; ++i) s += "(Worker pid=7506) INFO step " + std::to_string(i) + "\n";
  return s;
}

TEST(ByteSourceTest, DecodesGzipByMagicNotName) {
  std::string path = TempPath("log.txt");  // no .gz suffix on purpose
  WriteFile(path, Gzip(SampleLog()));
  auto all = ReadAll(path);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(*all, SampleLog());
}

TEST(ByteSourceTest, ConcatenatedGzipMembersReadAsOneStream) {
  std::string path = TempPath("cat.gz");
  WriteFile(path, Gzip("first\n") + Gzip("second\n"));
  auto all = ReadAll(path);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "first\nsecond\n");
}

TEST(ByteSourceTest, TruncatedGzipIsDataLoss) {
  std::string gz = Gzip(SampleLog());
  std::string path = TempPath("trunc.gz");
  WriteFile(path, gz.substr(0, gz.size() / 2));
  auto all = ReadAll(path);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(all.status().message().find("truncated gzip"), std::string::npos);
}

TEST(ByteSourceTest, DecodesZstd) {
  std::string text = SampleLog();
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  std::string path = TempPath("log.zst");
  WriteFile(path, z);
  auto all = ReadAll(path);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, text);
  WriteFile(path, z.substr(0, z.size() - 7));
  auto cut = ReadAll(path);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
}

TEST(ByteSourceTest, MissingFileIsNotFound) {
  auto src = OpenByteSource("/nonexistent/faultline/log");
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), StatusCode::kNotFound);
}

TEST(InputFilesTest, BinaryFileNamedDirectlyIsRejected) {
  std::string path = TempPath("bin");
  WriteFile(path, std::string("\x7f" "ELF\0\0\0\0\0\0\0\0\0\0\0\0\x02\0\x3e\0", 20) + std::string(500, '\0'));
  auto r = ExpandInputs({path});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST(InputFilesTest, DirectoryWithoutLogsIsNotFound) {
  std::string dir = TempPath("emptydir");
  std::filesystem::create_directories(dir);
  auto r = ExpandInputs({dir});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no log files"), std::string::npos);
}

TEST(InputFilesTest, DirectoryListsLogsSortedAndSkipsBinaries) {
  std::string dir = TempPath("rundir");
  std::filesystem::create_directories(dir + "/node1");
  WriteFile(dir + "/node1/rank1.log", "b\n");
  WriteFile(dir + "/rank0.log", "a\n");
  WriteFile(dir + "/core", std::string(100, '\0'));
  auto r = ExpandInputs({dir});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->files.size(), 2u);
  EXPECT_EQ(r->files[0].path, dir + "/node1/rank1.log");
  EXPECT_EQ(r->files[1].path, dir + "/rank0.log");
  ASSERT_EQ(r->warnings.size(), 1u);
}

}  // namespace
}  // namespace faultline::input
