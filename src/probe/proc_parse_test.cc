#include "probe/proc_parse.h"

#include <gtest/gtest.h>

namespace faultline::probe {
namespace {

// Recorded from a real `python3 -c "import time; time.sleep(30)"` on Linux 6.x.
constexpr char kStat[] =
    "6855 (python3) S 6853 6853 4188 0 -1 4194304 2882 6603 4 0 4 1 3 2 20 0 1 0 46338 16961536 3348 "
    "18446744073709551615 94726901977088 94726901977429 140724996888832 0 0 0 0 16781318 0 1 0 0 17 1 0 0 0 0 0 "
    "94726901988784 94726901989400 94727953215488 140724996892813 140724996892885 140724996892885 "
    "140724996894671 0\n";

TEST(ParseStatTest, ReadsFieldsOfARealStatLine) {
  auto st = ParseStat(kStat);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 6855);
  EXPECT_EQ(st->comm, "python3");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 6853);
  EXPECT_EQ(st->pgrp, 6853);
  EXPECT_EQ(st->utime_ticks, 4u);
  EXPECT_EQ(st->stime_ticks, 1u);
  EXPECT_EQ(st->num_threads, 1);
  EXPECT_EQ(st->start_time_ticks, 46338u);
  EXPECT_EQ(st->rss_pages, 3348);
}

TEST(ParseStatTest, CommWithSpacesAndParentheses) {
  std::string line = kStat;
  line.replace(line.find("(python3)"), 9, "(pt_main (x) y)");
  auto st = ParseStat(line);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->comm, "pt_main (x) y");
  EXPECT_EQ(st->ppid, 6853);
}

TEST(ParseStatTest, RejectsTruncatedText) {
  EXPECT_FALSE(ParseStat("6855 (python3) S 6853").has_value());
  EXPECT_FALSE(ParseStat("").has_value());
}

TEST(ParseStatusTest, ReadsRssAndThreads) {
  constexpr char kStatus[] =
      "Name:\tpython3\nState:\tS (sleeping)\nPPid:\t6853\nVmRSS:\t   13480 kB\nRssAnon:\t    6860 kB\n"
      "RssFile:\t    6620 kB\nRssShmem:\t       0 kB\nThreads:\t1\n";
  auto st = ParseStatus(kStatus);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->rss_bytes, 13480 * 1024);
  EXPECT_EQ(st->rss_file_bytes, 6620 * 1024);
  EXPECT_EQ(st->threads, 1);
}

TEST(ParseIoTest, ReadsCounters) {
  auto io = ParseIo(
      "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 0\n"
      "cancelled_write_bytes: 0\n");
  ASSERT_TRUE(io.has_value());
  EXPECT_EQ(io->rchar, 6976u);
  EXPECT_EQ(io->wchar, 12u);
  EXPECT_EQ(io->read_bytes, 4096u);
  EXPECT_FALSE(ParseIo("garbage").has_value());
}

TEST(ParseFdInfoTest, ReadsPos) {
  EXPECT_EQ(ParseFdInfoPos("pos:\t1048576\nflags:\t0100000\nmnt_id:\t24\nino:\t3\n"), 1048576);
}

// Recorded on Linux 6.18: python3 open(p, 'rb') and open(p, 'wb') (the
// latter O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, shown as 02100001).
TEST(ParseFdInfoTest, TellsReadersFromWriters) {
  constexpr char kRead[] = "pos:\t0\nflags:\t02100000\nmnt_id:\t24\nino:\t1234\n";
  constexpr char kWrite[] = "pos:\t33554432\nflags:\t02100001\nmnt_id:\t24\nino:\t1235\n";
  EXPECT_EQ(ParseFdInfoFlags(kRead), 02100000);
  EXPECT_FALSE(FdInfoWritable(kRead));
  EXPECT_TRUE(FdInfoWritable(kWrite));
  EXPECT_TRUE(FdInfoWritable("pos:\t0\nflags:\t0100002\n"));  // O_RDWR
  EXPECT_FALSE(FdInfoWritable("pos:\t0\n"));
}

TEST(ParseNetTcpTest, MapsInodesToStates) {
  constexpr char kTcp[] =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1118 1 "
      "000000000f004899 100 0 0 10 0\n"
      "   1: 0100007F:A1B2 0100007F:1F90 02 00000001:00000000 01:00000064 00000000     0        0 2222 2 "
      "0000000000000000 100 0 0 10 0\n";
  std::map<uint64_t, int> states;
  ParseNetTcp(kTcp, &states);
  EXPECT_EQ(states[1118], kTcpListen);
  EXPECT_EQ(states[2222], kTcpSynSent);
}

TEST(SocketInodeTest, ParsesLinkTargets) {
  EXPECT_EQ(SocketInode("socket:[12345]"), 12345u);
  EXPECT_FALSE(SocketInode("/dev/null").has_value());
  EXPECT_FALSE(SocketInode("pipe:[12]").has_value());
}

TEST(ParseCmdlineTest, JoinsArguments) {
  std::string raw =
      std::string("vllm") + '\0' + "serve" + '\0' + "/models/x" + '\0' + "--tensor-parallel-size" + '\0' + "2" + '\0';
  EXPECT_EQ(ParseCmdline(raw), "vllm serve /models/x --tensor-parallel-size 2");
}

}  // namespace
}  // namespace faultline::probe
