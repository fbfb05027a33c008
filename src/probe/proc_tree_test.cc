#include "probe/proc_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "probe/proc_fs_fake.h"

namespace faultline::probe {
namespace {

std::string Stat(int64_t pid, const std::string& comm, char state, int64_t ppid, uint64_t utime, uint64_t start) {
  return std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid) + " " + std::to_string(ppid) +
         " 4188 0 -1 4194304 2882 6603 4 0 " + std::to_string(utime) + " 1 3 2 20 0 4 0 " + std::to_string(start) +
         " 16961536 3348 18446744073709551615 0 0 0 0\n";
}

class ProcTreeTest : public ::testing::Test {
 protected:
  void AddProcess(int64_t pid, const std::string& comm, char state, int64_t ppid, uint64_t utime,
                  const std::string& children = "") {
    std::string dir = "/proc/" + std::to_string(pid);
    fs_.SetFile(dir + "/stat", Stat(pid, comm, state, ppid, utime, 1000 + pid));
    fs_.SetFile(dir + "/status", "Name:\t" + comm + "\nVmRSS:\t 1536000 kB\nRssFile:\t 1000 kB\nThreads:\t4\n");
    fs_.SetFile(dir + "/cmdline", std::string("python3") + '\0' + "-m" + '\0' + comm + '\0');
    fs_.SetFile(dir + "/io", "rchar: 100\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 0\n");
    fs_.SetFile(dir + "/task/" + std::to_string(pid) + "/children", children);
    fs_.SetFile(dir + "/task/" + std::to_string(pid) + "/stat", Stat(pid, comm, state, ppid, utime, 1000 + pid));
    fs_.SetFile(dir + "/task/" + std::to_string(pid) + "/wchan", state == 'R' ? "0" : "futex_wait_queue");
  }
  FakeProcFs fs_;
};

TEST_F(ProcTreeTest, FindsDescendantsAndReadsTheirSignals) {
  AddProcess(100, "vllm", 'S', 1, 50, "101 102");
  AddProcess(101, "worker0", 'R', 100, 900);
  AddProcess(102, "worker1", 'R', 100, 800);
  AddProcess(200, "unrelated", 'S', 1, 5);
  fs_.SetLink("/proc/101/fd/7", "/models/qwen/model-00001-of-00002.safetensors");
  fs_.SetFile("/proc/101/fdinfo/7", "pos:\t524288\nflags:\t0100000\n");
  fs_.SetSize("/models/qwen/model-00001-of-00002.safetensors", 1 << 20);
  fs_.SetLink("/proc/101/fd/8", "socket:[1118]");
  fs_.SetLink("/proc/101/fd/9", "socket:[2222]");
  fs_.SetFile(
      "/proc/101/net/tcp",
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1118 1 0 100 0 0 10 0\n"
      "   1: 0100007F:A1B2 0100007F:1F90 02 00000000:00000000 00:00000000 00000000 0 0 2222 1 0 100 0 0 10 0\n");

  ProcessTreeSampler sampler(&fs_);
  sampler.AddRoot(100);
  TreeSample s = sampler.Sample();
  ASSERT_EQ(s.processes.size(), 3u);
  EXPECT_EQ(s.processes[0].pid, 100);
  EXPECT_EQ(s.processes[0].depth, 0);
  const ProcessSample& w0 = s.processes[1];
  EXPECT_EQ(w0.pid, 101);
  EXPECT_EQ(w0.depth, 1);
  EXPECT_EQ(w0.state, 'R');
  EXPECT_DOUBLE_EQ(w0.cpu_seconds, 9.01);
  EXPECT_EQ(w0.rss_bytes, 1536000LL * 1024);
  EXPECT_EQ(w0.cmdline, "python3 -m worker0");
  ASSERT_TRUE(w0.io.has_value());
  EXPECT_EQ(w0.io->read_bytes, 4096u);
  ASSERT_EQ(w0.weight_files.size(), 1u);
  EXPECT_EQ(w0.weight_files[0].pos, 524288);
  EXPECT_EQ(w0.weight_files[0].size, 1 << 20);
  EXPECT_EQ(w0.sockets, 2);
  EXPECT_EQ(w0.tcp_listening, 1);
  EXPECT_EQ(w0.tcp_connecting, 1);
  EXPECT_TRUE(w0.thread_states.sampled);
  EXPECT_EQ(w0.thread_states.running, 1);
  EXPECT_EQ(s.processes[0].thread_states.wchan.at("futex_wait_queue"), 1);
}

TEST_F(ProcTreeTest, MembershipSurvivesReparentingAndDropsTheDead) {
  AddProcess(100, "launcher", 'S', 1, 1, "101");
  AddProcess(101, "worker", 'R', 100, 10);
  ProcessTreeSampler sampler(&fs_);
  sampler.AddRoot(100);
  EXPECT_EQ(sampler.Sample().processes.size(), 2u);
  // The launcher dies; its worker is re-parented to init but still watched.
  fs_.RemoveTree("/proc/100");
  AddProcess(101, "worker", 'R', 1, 20);
  TreeSample s = sampler.Sample();
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid, 101);
  // A new process reusing pid 101 (other start time) is not ours.
  fs_.SetFile("/proc/101/stat", Stat(101, "other", 'S', 1, 0, 99999));
  EXPECT_TRUE(sampler.Sample().processes.empty());
}

TEST_F(ProcTreeTest, FullScanFindsChildrenForkedByOtherThreads) {
  AddProcess(100, "main", 'S', 1, 1, "");  // children file of the main thread is empty
  AddProcess(150, "compile_worker", 'R', 100, 10);
  ProcessTreeSampler::Options options;
  options.full_scan_every = 1;
  ProcessTreeSampler sampler(&fs_, options);
  sampler.AddRoot(100);
  TreeSample s = sampler.Sample();
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[1].comm, "compile_worker");
}

TEST_F(ProcTreeTest, MappedWeightFilesAreFoundInMaps) {
  AddProcess(100, "worker", 'R', 1, 1);
  fs_.SetFile("/proc/100/maps",
              "7f0000000000-7f0040000000 r--s 00000000 103:02 4242 /models/m/model.safetensors\n"
              "7f1000000000-7f1000001000 r-xp 00000000 103:02 17 /usr/lib/libc.so.6\n");
  fs_.SetSize("/models/m/model.safetensors", 1 << 30);
  ProcessTreeSampler sampler(&fs_);
  sampler.AddRoot(100);
  TreeSample s = sampler.Sample();
  ASSERT_EQ(s.processes.size(), 1u);
  ASSERT_EQ(s.processes[0].weight_files.size(), 1u);
  EXPECT_TRUE(s.processes[0].weight_files[0].mapped);
  EXPECT_EQ(s.processes[0].weight_files[0].size, 1 << 30);
}

TEST_F(ProcTreeTest, LightSamplesRereadOnlyWeightOffsets) {
  AddProcess(100, "worker", 'S', 1, 1);
  fs_.SetLink("/proc/100/fd/7", "/models/m.safetensors");
  fs_.SetFile("/proc/100/fdinfo/7", "pos:\t100\n");
  fs_.SetSize("/models/m.safetensors", 1000);
  ProcessTreeSampler::Options options;
  options.detail_every = 5;
  ProcessTreeSampler sampler(&fs_, options);
  sampler.AddRoot(100);
  EXPECT_EQ(sampler.Sample().processes[0].weight_files[0].pos, 100);  // detailed
  fs_.SetFile("/proc/100/fdinfo/7", "pos:\t600\n");
  fs_.SetLink("/proc/100/fd/8", "/models/other.safetensors");  // a new fd: read at once
  fs_.SetFile("/proc/100/task/100/wchan", "do_epoll_wait");
  int reads = fs_.reads();
  TreeSample light = sampler.Sample();
  ASSERT_EQ(light.processes[0].weight_files.size(), 2u);
  EXPECT_EQ(light.processes[0].weight_files[0].pos, 600);
  EXPECT_EQ(light.processes[0].thread_states.wchan.count("futex_wait_queue"), 1u);  // carried over
  EXPECT_LT(fs_.reads() - reads, 12);
  TreeSample detailed = sampler.Sample(/*detail=*/true);
  EXPECT_EQ(detailed.processes[0].weight_files.size(), 2u);
  EXPECT_EQ(detailed.processes[0].thread_states.wchan.count("do_epoll_wait"), 1u);
}

TEST_F(ProcTreeTest, AnFdReusedForAWeightFileIsSeenOnceTheProcessReads) {
  AddProcess(100, "worker", 'S', 1, 1);
  fs_.SetLink("/proc/100/fd/3", "/opt/app/vllm.log");
  ProcessTreeSampler sampler(&fs_);
  sampler.AddRoot(100);
  EXPECT_TRUE(sampler.Sample().processes[0].weight_files.empty());
  // fd 3 now holds a weight file, and the process reads 4 MiB.
  fs_.SetLink("/proc/100/fd/3", "/models/m.safetensors");
  fs_.SetFile("/proc/100/fdinfo/3", "pos:\t4194304\n");
  fs_.SetFile("/proc/100/io", "rchar: 4194404\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 0\n");
  TreeSample s = sampler.Sample();
  ASSERT_EQ(s.processes[0].weight_files.size(), 1u);
  EXPECT_EQ(s.processes[0].weight_files[0].pos, 4194304);
}

TEST_F(ProcTreeTest, MissingRootGivesEmptySample) {
  ProcessTreeSampler sampler(&fs_);
  sampler.AddRoot(4242);
  EXPECT_TRUE(sampler.Sample().processes.empty());
}

TEST(RealProcTest, SamplesThisProcess) {
  auto fs = NewRealProcFs();
  ProcessTreeSampler sampler(fs.get());
  sampler.AddRoot(getpid());
  TreeSample s = sampler.Sample();
  ASSERT_FALSE(s.processes.empty());
  EXPECT_EQ(s.processes[0].pid, getpid());
  EXPECT_GT(s.processes[0].rss_bytes, 0);
  EXPECT_GT(s.processes[0].open_fds, 2);
}

}  // namespace
}  // namespace faultline::probe
