// Hostile inputs end, with a clear error or a warning (issue 13, point 6):
// endless devices, random bytes, FIFOs, UTF-16 and BOMs, CR-only line ends,
// corrupt small archives, a file truncated while read, an unreadable
// sub-directory, config files that are not regular files or are too big.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "input/byte_source.h"
#include "input/input_files.h"
#include "util/read_file.h"

namespace faultline::input {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  return std::string(::testing::TempDir()) + "/hostile_" + name + "." + std::to_string(::getpid());
}

void WriteFile(const std::string& path, const std::string& data) { std::ofstream(path, std::ios::binary) << data; }

// Everything the source yields (bounded), and the first error.
std::string ReadAll(ByteSource* src, Status* error, size_t limit = size_t{1} << 30) {
  std::string out;
  char buf[65536];
  while (out.size() < limit) {
    auto n = src->Read(buf, sizeof(buf));
    if (!n.ok()) {
      *error = n.status();
      break;
    }
    if (*n == 0) break;
    out.append(buf, *n);
  }
  return out;
}

TEST(HostileInputTest, EndlessDevicesAndRandomBytesAreRefusedAtOpen) {
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    auto src = OpenByteSource(dev);
    ASSERT_FALSE(src.ok()) << dev;
    EXPECT_NE(src.status().message().find("binary data, not a log"), std::string::npos) << src.status().message();
  }
  // Standard input from /dev/zero.
  int fd = ::open("/dev/zero", O_RDONLY);
  auto src = ByteSourceFromFd(fd, "<stdin>");
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.status().message().find("<stdin>: binary data"), std::string::npos);
  // A few KiB of random bytes in a file.
  std::string random(16384, '\0');
  int r = ::open("/dev/urandom", O_RDONLY);
  ASSERT_EQ(::read(r, random.data(), random.size()), static_cast<ssize_t>(random.size()));
  ::close(r);
  std::string path = TempPath("random.log");
  WriteFile(path, random);
  EXPECT_FALSE(OpenByteSource(path).ok());
  EXPECT_FALSE(ExpandInputs({path}).ok());
  std::remove(path.c_str());
  // A Latin-1 log with a few accented bytes is still text.
  EXPECT_FALSE(LooksBinary("INFO d\xe9marrage du serveur\nINFO pr\xeat sur le port 8000\n"));
}

// A log truncated while another process still writes it at its old offset
// (`vllm serve ... > log` relaunched while the old server shuts down) holds a
// hole of NULs between its text: that is a log, not binary data. A few NULs
// amid text, or nothing but NULs, stay what they were.
TEST(HostileInputTest, ANulHoleBetweenTextIsNotBinary) {
  const std::string text =
      "(EngineCore_DP0 pid=414253) INFO 01-12 01:42:50 [monitor.py:34] torch.compile takes 12.03 s in total\n";
  std::string log;
  for (int i = 0; i < 20; ++i) log += text;
  const std::string old_writer = "(APIServer pid=413441) INFO:     Waiting for application shutdown.\n";
  EXPECT_FALSE(LooksBinary(log + std::string(60000, '\0') + old_writer));
  EXPECT_FALSE(LooksBinary(log + std::string(kNulHoleBytes, '\0')));
  EXPECT_TRUE(LooksBinary(std::string(4096, '\0')));
  // Short NUL runs are counted as before: a tenth of the bytes makes binary.
  std::string sprinkled;
  for (int i = 0; i < 64; ++i) sprinkled += std::string(10, 'a') + std::string(4, '\0');
  EXPECT_TRUE(LooksBinary(sprinkled));
}

// Printable ASCII is skipped eight bytes at a time: a control byte is
// counted wherever it falls in a word (a fifth of the bytes makes binary).
TEST(HostileInputTest, EveryControlByteCountsWhereverItFalls) {
  for (size_t offset = 0; offset < 8; ++offset) {
    std::string quarter(offset + 64, 'a'), eighth(offset + 64, 'a');
    for (size_t i = offset; i < quarter.size(); i += 4) quarter[i] = '\x02';
    for (size_t i = offset; i < eighth.size(); i += 8) eighth[i] = '\x02';
    EXPECT_TRUE(LooksBinary(quarter)) << offset;
    EXPECT_FALSE(LooksBinary(eighth)) << offset;
    std::string high(offset + 64, 'a');  // an invalid byte (a lone continuation byte) every fourth
    for (size_t i = offset; i < high.size(); i += 4) high[i] = '\x80';
    EXPECT_TRUE(LooksBinary(high)) << offset;
  }
}

TEST(HostileInputTest, AFifoDoesNotBlock) {
  std::string path = TempPath("fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // No writer: open returns at once and the stream reads as empty.
  auto src = OpenByteSource(path);
  ASSERT_TRUE(src.ok()) << src.status().message();
  Status err;
  EXPECT_EQ(ReadAll(src->get(), &err), "");
  // A config named as a FIFO is refused without blocking.
  auto cfg = ReadSmallFile(path);
  ASSERT_FALSE(cfg.ok());
  EXPECT_NE(cfg.status().message().find("not a regular file"), std::string::npos);
  std::remove(path.c_str());
}

TEST(HostileInputTest, ConfigReadersAreBounded) {
  EXPECT_FALSE(ReadSmallFile("/dev/zero").ok());
  std::string path = TempPath("big.yaml");
  WriteFile(path, std::string(2048, 'a'));
  auto small = ReadSmallFile(path, 4096);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->size(), 2048u);
  auto big = ReadSmallFile(path, 1024);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("limited"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_FALSE(ReadSmallFile(::testing::TempDir()).ok());  // a directory
}

TEST(HostileInputTest, Utf16LogsAreDecoded) {
  // What PowerShell's `>` writes: UTF-16LE with a BOM, CRLF line ends;
  // and the same without a BOM; and big-endian.
  std::string text = "INFO start\r\nRuntimeError: CUDA error: out of memory \xe2\x9c\x97\r\n";
  std::u16string wide = u"INFO start\r\nRuntimeError: CUDA error: out of memory \u2717\r\n";
  std::string le = "\xff\xfe", le_nobom, be = "\xfe\xff";
  for (char16_t c : wide) {
    le += static_cast<char>(c & 0xff);
    le += static_cast<char>(c >> 8);
    le_nobom += static_cast<char>(c & 0xff);
    le_nobom += static_cast<char>(c >> 8);
    be += static_cast<char>(c >> 8);
    be += static_cast<char>(c & 0xff);
  }
  for (const std::string& bytes : {le, le_nobom, be}) {
    std::string path = TempPath("u16.log");
    WriteFile(path, bytes);
    auto src = OpenByteSource(path);
    ASSERT_TRUE(src.ok()) << src.status().message();
    Status err;
    EXPECT_EQ(ReadAll(src->get(), &err), text);
    EXPECT_TRUE(err.ok());
    std::remove(path.c_str());
  }
  // A surrogate pair (U+1F600) becomes one 4-byte UTF-8 character.
  std::string path = TempPath("u16pair.log");
  WriteFile(path, std::string("\xff\xfe"
                              "a\0\x3d\xd8\x00\xde\n\0",
                              10));
  auto src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  Status err;
  EXPECT_EQ(ReadAll(src->get(), &err), "a\xf0\x9f\x98\x80\n");
  std::remove(path.c_str());
}

TEST(HostileInputTest, AUtf8BomIsStrippedAndCrOnlyLinesSplit) {
  std::string path = TempPath("bom.log");
  WriteFile(path, "\xef\xbb\xbfRuntimeError: boom\n");
  auto src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  Status err;
  EXPECT_EQ(ReadAll(src->get(), &err), "RuntimeError: boom\n");
  WriteFile(path, "INFO a\rINFO b\rRuntimeError: boom\r");
  src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(ReadAll(src->get(), &err), "INFO a\nINFO b\nRuntimeError: boom\n");
  // CRs among LF lines (progress bars) are left as they are.
  WriteFile(path, "10%\r20%\r100%\nINFO done\n");
  src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(ReadAll(src->get(), &err), "10%\r20%\r100%\nINFO done\n");
  std::remove(path.c_str());
}

TEST(HostileInputTest, ASmallCorruptZstdSaysCorrupt) {
  std::string path = TempPath("bad.zst");
  WriteFile(path, std::string("\x28\xb5\x2f\xfd\x08garbage-garbage-garbage", 28));  // a reserved bit set
  auto src = OpenByteSource(path);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.status().message().find("corrupt zstd"), std::string::npos) << src.status().message();
  std::remove(path.c_str());
}

TEST(HostileInputTest, AFileTruncatedWhileReadIsReported) {
  std::string path = TempPath("shrinking.log");
  std::string line = "INFO step 1/100 loss 0.5\n";
  std::string text;
  while (text.size() < (4u << 20)) text += line;
  WriteFile(path, text);
  auto src = OpenByteSource(path);
  ASSERT_TRUE(src.ok());
  char buf[1 << 20];
  ASSERT_TRUE((*src)->Read(buf, sizeof(buf)).ok());
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  Status err;
  ReadAll(src->get(), &err);
  EXPECT_NE(err.message().find("truncated while being read"), std::string::npos) << err.message();
  std::remove(path.c_str());
}

TEST(HostileInputTest, DataWithoutLineEndsIsCapped) {
  ::signal(SIGPIPE, SIG_IGN);  // the writer outlives the read end
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([w = fds[1]] {
    std::string chunk(1 << 16, 'a');
    for (int i = 0; i < 2048; ++i) {  // at most 128 MiB
      if (::write(w, chunk.data(), chunk.size()) < 0) break;
    }
    ::close(w);
  });
  auto src = ByteSourceFromFd(fds[0], "<pipe>");
  ASSERT_TRUE(src.ok());
  Status err;
  std::string got = ReadAll(src->get(), &err);
  EXPECT_NE(err.message().find("without a line end"), std::string::npos) << err.message();
  EXPECT_LE(got.size(), size_t{65} << 20);
  src->reset();  // closes the read end: the writer stops
  writer.join();
}

// Root reads any directory: the check runs as nobody in a child process.
TEST(HostileInputTest, AnUnreadableSubdirectoryIsAWarning) {
  fs::path root = fs::path("/tmp") / ("hostile_dir." + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "ok");
  fs::create_directories(root / "locked");
  WriteFile((root / "ok/a.log").string(), "INFO fine\n");
  WriteFile((root / "locked/b.log").string(), "INFO hidden\n");
  fs::permissions(root, fs::perms::all);
  fs::permissions(root / "ok", fs::perms::all);
  fs::permissions(root / "ok/a.log", fs::perms::all);
  fs::permissions(root / "locked", fs::perms::none);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::getuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    auto got = ExpandInputs({root.string()});
    if (!got.ok() || got->files.size() != 1) ::_exit(4);
    for (const auto& w : got->warnings) {
      if (w.find("locked: unreadable directory") != std::string::npos) ::_exit(0);
    }
    ::_exit(5);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  fs::permissions(root / "locked", fs::perms::all);
  fs::remove_all(root);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace faultline::input
