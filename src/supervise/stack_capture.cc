#include "supervise/stack_capture.h"

#include <errno.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "supervise/tree_stopper.h"

namespace faultline::supervise {

extern const char kEmbeddedSitecustomize[];

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string ReadAll(const std::string& path, size_t max = 1 << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string out;
  if (!in) return out;
  out.resize(max);
  in.read(out.data(), static_cast<std::streamsize>(max));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

std::string EnvOf(int64_t pid, const std::string& key) {
  std::string env = ReadAll(fmt::format("/proc/{}/environ", pid));
  std::string prefix = key + "=";
  size_t at = 0;
  while (at < env.size()) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (env.compare(at, prefix.size(), prefix) == 0) return env.substr(at + prefix.size(), end - at - prefix.size());
    at = end + 1;
  }
  return "";
}

std::string RankOf(int64_t pid) {
  std::string r = EnvOf(pid, "RANK");
  return r.empty() ? EnvOf(pid, "LOCAL_RANK") : r;
}

bool IsPython(int64_t pid) {
  std::string comm = ReadAll(fmt::format("/proc/{}/comm", pid), 64);
  std::string cmd = ReadAll(fmt::format("/proc/{}/cmdline", pid), 4096);
  std::string exe = cmd.substr(0, cmd.find('\0'));
  return comm.rfind("python", 0) == 0 || exe.find("python") != std::string::npos;
}

}  // namespace

int StackSignal() { return SIGRTMIN + 6; }

std::map<std::string, std::string> StackBootstrap::Env(const std::string& user_pythonpath) const {
  return {{"PYTHONPATH", user_pythonpath.empty() ? python_dir : python_dir + ":" + user_pythonpath},
          {"FAULTLINE_STACK_DIR", stack_dir},
          {"FAULTLINE_STACK_SIGNAL", std::to_string(signal)}};
}

Result<StackBootstrap> PrepareStackBootstrap(const std::string& run_dir) {
  StackBootstrap b;
  std::error_code ec;
  std::string abs = std::filesystem::absolute(run_dir, ec).string();
  if (ec) abs = run_dir;
  b.python_dir = abs + "/.faultline-python";
  b.stack_dir = abs + "/stacks";
  b.signal = StackSignal();
  std::filesystem::create_directories(b.python_dir, ec);
  if (!ec) std::filesystem::create_directories(b.stack_dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", b.python_dir, ec.message()));
  std::ofstream out(b.python_dir + "/sitecustomize.py");
  out << kEmbeddedSitecustomize;
  out.close();
  if (!out) return Status::IoError(fmt::format("{}/sitecustomize.py: cannot write", b.python_dir));
  return b;
}

bool CatchesSignal(int64_t pid, int signal) {
  std::string status = ReadAll(fmt::format("/proc/{}/status", pid), 1 << 14);
  size_t at = status.find("\nSigCgt:");
  if (at == std::string::npos || signal < 1 || signal > 64) return false;
  unsigned long long mask = strtoull(status.c_str() + at + 8, nullptr, 16);
  return (mask >> (signal - 1)) & 1ULL;
}

StackReport CaptureStacks(const std::vector<std::pair<int64_t, uint64_t>>& members, const StackBootstrap& b,
                          const std::vector<StackPhase>& phases, double timeout) {
  StackReport r;
  r.source = "faulthandler";
  struct Pending {
    int64_t pid;
    std::string path;
    int64_t before;
    int64_t last_size;
    double sent, last_growth;
    bool done = false;
  };
  std::vector<Pending> pending;
  std::vector<int64_t> without;
  for (const auto& [pid, start] : members) {
    if (StartTimeOf(pid) != start || start == 0) continue;
    if (!CatchesSignal(pid, b.signal)) {
      if (IsPython(pid)) without.push_back(pid);
      continue;
    }
    std::string path = fmt::format("{}/{}.txt", b.stack_dir, pid);
    int64_t before = FileSize(path);
    // Checked again right before the signal: a pid is never sent a signal
    // it does not catch.
    if (StartTimeOf(pid) != start) continue;
    double t = Now();
    if (kill(static_cast<pid_t>(pid), b.signal) != 0) continue;
    pending.push_back({pid, path, before, before, t, t});
  }
  double deadline = Now() + timeout;
  while (Now() < deadline) {
    bool all = true;
    for (auto& p : pending) {
      if (p.done) continue;
      int64_t size = FileSize(p.path);
      double now = Now();
      if (size != p.last_size) {
        p.last_size = size;
        p.last_growth = now;
      } else if (size > p.before && now - p.last_growth >= 0.03) {
        p.done = true;  // 30 ms without growth after the dump began
      }
      all &= p.done;
    }
    if (all) break;
    usleep(1000);
  }
  for (auto& p : pending) {
    ProcessStacks ps;
    ps.pid = p.pid;
    ps.rank = RankOf(p.pid);
    std::string text = ReadAll(p.path, 8 << 20);
    if (static_cast<int64_t>(text.size()) > p.before)
      text = text.substr(static_cast<size_t>(p.before));
    else
      text.clear();
    ps.threads = ParseStackDump(text);
    ps.capture_ms = (p.last_growth - p.sent) * 1000;
    if (ps.threads.empty()) r.note += fmt::format("pid {}: no dump within {:.0f} s; ", p.pid, timeout);
    ReadProcessPhase(phases, &ps);
    r.capture_ms_max = std::max(r.capture_ms_max, ps.capture_ms);
    r.processes.push_back(std::move(ps));
  }
  if (!without.empty()) {
    std::string pids;
    for (int64_t pid : without) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
    r.note += fmt::format(
        "Python process(es) {} did not load faultline's bootstrap (PYTHONPATH replaced, python -S or -I): "
        "py-spy dump --pid PID shows their stacks",
        pids);
  }
  if (pending.empty() && without.empty()) r.note = "no Python process in the tree";
  SummarizeStacks(phases, &r);
  return r;
}

StackReport PySpyStacks(const std::vector<int64_t>& pids, const std::vector<StackPhase>& phases, double timeout) {
  StackReport r;
  r.source = "py-spy";
  std::string path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
  bool have = false;
  std::istringstream dirs(path);
  for (std::string d; std::getline(dirs, d, ':');) have |= access((d + "/py-spy").c_str(), X_OK) == 0;
  std::vector<int64_t> python;
  for (int64_t pid : pids) {
    if (IsPython(pid)) python.push_back(pid);
  }
  if (python.empty()) {
    r.note = "no Python process in the tree";
    return r;
  }
  if (!have) {
    r.note = fmt::format(
        "py-spy is not installed: `pip install py-spy`, then `py-spy dump --pid {}` shows where it is "
        "(faultline run captures stacks itself, with nothing installed)",
        python.front());
    return r;
  }
  for (int64_t pid : python) {
    double t = Now();
    std::string cmd = fmt::format("timeout {:.0f} py-spy dump --pid {} 2>&1", timeout, pid);
    FILE* f = popen(cmd.c_str(), "r");
    if (f == nullptr) continue;
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
    int rc = pclose(f);
    ProcessStacks ps;
    ps.pid = pid;
    ps.rank = RankOf(pid);
    ps.threads = ParseStackDump(out);
    ps.capture_ms = (Now() - t) * 1000;
    if (ps.threads.empty()) {
      std::string first = out.substr(0, out.find('\n'));
      r.note += fmt::format("pid {}: py-spy dump failed (exit {}): {}; ", pid, rc, first);
    }
    ReadProcessPhase(phases, &ps);
    r.capture_ms_max = std::max(r.capture_ms_max, ps.capture_ms);
    r.processes.push_back(std::move(ps));
  }
  SummarizeStacks(phases, &r);
  return r;
}

}  // namespace faultline::supervise
