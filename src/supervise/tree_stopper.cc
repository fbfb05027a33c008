#include "supervise/tree_stopper.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <set>
#include <string>

#include "probe/proc_fs.h"
#include "probe/proc_parse.h"

namespace faultline::supervise {
namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::optional<probe::ProcStat> ReadStat(probe::ProcFs* fs, int64_t pid) {
  auto text = fs->ReadFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  return text ? probe::ParseStat(*text) : std::nullopt;
}

}  // namespace

uint64_t StartTimeOf(int64_t pid) {
  static auto fs = probe::NewRealProcFs().release();
  auto st = ReadStat(fs, pid);
  if (!st || st->state == 'Z' || st->state == 'X') return 0;
  return st->start_time_ticks;
}

std::vector<ProcessId> ChildrenOfSelf(pid_t keep) {
  auto fs = probe::NewRealProcFs();
  std::vector<ProcessId> out;
  int64_t self = getpid();
  for (const auto& name : fs->ListDir("/proc")) {
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    auto st = ReadStat(fs.get(), std::stoll(name));
    if (st && st->ppid == self && st->pid != keep && st->state != 'Z' && st->state != 'X') {
      out.emplace_back(st->pid, st->start_time_ticks);
    }
  }
  return out;
}

std::vector<ProcessId> ProcessesMarked(const std::string& marker, pid_t keep) {
  auto fs = probe::NewRealProcFs();
  std::vector<ProcessId> out;
  if (marker.empty()) return out;
  int64_t self = getpid();
  for (const auto& name : fs->ListDir("/proc")) {
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    int64_t pid = std::stoll(name);
    if (pid == self || pid == keep) continue;
    auto env = fs->ReadFile("/proc/" + name + "/environ", 1 << 20);
    if (!env) continue;
    // NUL-separated KEY=VALUE entries; the marker must be a whole entry.
    size_t at = 0;
    bool found = false;
    while (at < env->size() && !found) {
      size_t end = env->find('\0', at);
      if (end == std::string::npos) end = env->size();
      found = env->compare(at, end - at, marker) == 0;
      at = end + 1;
    }
    if (!found) continue;
    auto st = ReadStat(fs.get(), pid);
    if (st && st->state != 'Z' && st->state != 'X') out.emplace_back(pid, st->start_time_ticks);
  }
  return out;
}

int SweepMarked(const std::string& marker, double grace, const std::function<void()>& reap, pid_t keep, int rounds) {
  int total = 0;
  for (int i = 0; i < rounds; ++i) {
    auto left = ProcessesMarked(marker, keep);
    if (left.empty()) break;
    StopReport r = StopProcesses({}, left, i == 0 ? grace : 0.2, reap);
    total += r.signalled;
  }
  return total;
}

StopReport StopProcesses(const std::vector<pid_t>& groups, const std::vector<ProcessId>& given, double grace,
                         const std::function<void()>& reap, const std::function<bool()>& kill_now) {
  StopReport report;
  // Each process once, however many lists named it.
  std::vector<ProcessId> members;
  {
    std::set<ProcessId> seen;
    for (const auto& m : given) {
      if (seen.insert(m).second) members.push_back(m);
    }
  }
  double start = Now();
  auto alive = [&](const ProcessId& m) { return StartTimeOf(m.first) == m.second && m.second != 0; };
  auto group_alive = [](pid_t g) { return g > 0 && killpg(g, 0) == 0; };
  std::set<int64_t> signalled;
  for (const auto& m : members) {
    if (alive(m)) signalled.insert(m.first);
  }
  for (pid_t g : groups) {
    if (g > 0) killpg(g, SIGTERM);
  }
  for (const auto& m : members) {
    if (signalled.count(m.first) && alive(m)) kill(static_cast<pid_t>(m.first), SIGTERM);
  }
  report.signalled = static_cast<int>(signalled.size());
  // Wait for the grace period, checking every 20 ms.
  while (Now() - start < grace) {
    if (reap) reap();
    bool any = false;
    for (const auto& m : members) any |= alive(m);
    for (pid_t g : groups) {
      if (group_alive(g)) {
        // A group of zombies only: reap() will clear it.
        any = true;
      }
    }
    if (!any) break;
    if (kill_now && kill_now()) break;
    usleep(20000);
  }
  for (const auto& m : members) {
    if (alive(m)) {
      kill(static_cast<pid_t>(m.first), SIGKILL);
      report.killed.push_back(m.first);
    }
  }
  for (pid_t g : groups) {
    if (group_alive(g)) killpg(g, SIGKILL);
  }
  if (reap) {
    // Give the kernel a moment to deliver SIGKILL, then collect.
    for (int i = 0; i < 50; ++i) {
      reap();
      bool any = false;
      for (const auto& m : members) any |= alive(m);
      if (!any) break;
      usleep(10000);
    }
  }
  report.seconds = Now() - start;
  return report;
}

}  // namespace faultline::supervise
