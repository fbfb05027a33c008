#include "supervise/watcher.h"

#include <errno.h>
#include <fmt/format.h>
#include <poll.h>
#include <re2/re2.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "supervise/child_process.h"
#include "supervise/stack_capture.h"
#include "supervise/stop_signals.h"

namespace faultline::supervise {
namespace {

// The exit status of a process that just exited and is not reaped yet (a
// zombie): the last field of /proc/PID/stat (Linux 3.5+). False when its
// parent reaped it first.
bool ZombieStatus(probe::ProcFs* fs, int64_t pid, JobEnd* end) {
  auto text = fs->ReadFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return false;
  size_t close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size() || (*text)[close + 2] != 'Z') return false;
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  size_t sp = t.rfind(' ');
  if (sp == std::string::npos) return false;
  int status = std::atoi(t.c_str() + sp + 1);
  if (WIFEXITED(status)) end->exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end->term_signal = WTERMSIG(status);
  return end->exit_code || end->term_signal;
}

}  // namespace

JobEnd Watch(const WatchOptions& options, const StallRules& rules, probe::ProcFs* fs, probe::Clock* clock,
             probe::GpuUsageSource* gpu, int stop_fd, const std::function<void(const Monitor&, double)>& on_status) {
  MonitorOptions mo;
  mo.roots = options.pids;
  mo.log_path = options.log_path;
  mo.stall_after_seconds = options.stall_after;
  Monitor monitor(rules, fs, clock, gpu, mo);

  JobEnd end;
  end.service = options.name;
  end.log_path = options.log_path;
  end.pid = options.pids.empty() ? 0 : options.pids[0];
  double start = clock->MonotonicSeconds();

  std::vector<std::pair<int, int64_t>> pidfds;  // fd, pid
  for (int64_t pid : options.pids) {
    int fd = OpenPidFd(static_cast<pid_t>(pid));
    pidfds.emplace_back(fd, pid);
  }
  std::unique_ptr<ProbeThread> probe;
  if (options.ready.kind == ReadySpec::Kind::kHttp || options.ready.kind == ReadySpec::Kind::kTcp) {
    probe = std::make_unique<ProbeThread>(options.ready);
  }
  std::unique_ptr<RE2> ready_re;
  if (options.ready.kind == ReadySpec::Kind::kLog) ready_re = std::make_unique<RE2>(options.ready.target);
  std::string ready_line;
  auto on_line = [&](std::string_view line) {
    if (ready_re && ready_line.empty() && RE2::PartialMatch(line, *ready_re)) ready_line = std::string(line);
  };
  auto finish = [&](Outcome o, std::string detail) {
    for (auto& [fd, pid] : pidfds) {
      if (fd >= 0) close(fd);
    }
    end.outcome = o;
    end.detail = std::move(detail);
    end.elapsed_seconds = clock->MonotonicSeconds() - start;
    return end;
  };
  auto dead_pid = [&]() -> int64_t {
    for (auto& [fd, pid] : pidfds) {
      if (fd < 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return pid;
    }
    return 0;
  };

  monitor.Tick(on_line);
  double next_sample = clock->MonotonicSeconds() + options.sample_interval;
  double next_status = clock->MonotonicSeconds();
  while (true) {
    double now = clock->MonotonicSeconds();
    if (on_status && options.status_interval > 0 && now >= next_status) {
      on_status(monitor, now - start);
      next_status = now + options.status_interval;
    }
    std::vector<pollfd> fds;
    for (auto& [fd, pid] : pidfds) {
      if (fd >= 0) fds.push_back({fd, POLLIN, 0});
    }
    if (probe) fds.push_back({probe->wake_fd(), POLLIN, 0});
    if (stop_fd >= 0) fds.push_back({stop_fd, POLLIN, 0});
    // Wake at the next sample, and at least every 200 ms for the log and for
    // pids without a pidfd.
    double wait = std::min(next_sample - now, 0.2);
    int rc = poll(fds.data(), fds.size(), std::max(0, static_cast<int>(wait * 1000)));
    if (rc < 0 && errno != EINTR) break;
    if (probe && probe->ready()) return finish(Outcome::kReady, options.ready.target);
    monitor.PollLog(on_line);
    if (!ready_line.empty()) return finish(Outcome::kReady, fmt::format("log line matched: {}", ready_line));
    for (auto& [fd, pid] : pidfds) {
      pollfd p{fd, POLLIN, 0};
      if (fd >= 0 && poll(&p, 1, 0) == 1) {
        end.pid = pid;
        bool known = ZombieStatus(fs, pid, &end);
        monitor.Tick(on_line);  // the last log lines
        if (known && end.exit_code && *end.exit_code == 0) {
          return finish(Outcome::kCompleted, fmt::format("process {} exited with code 0", pid));
        }
        if (known) {
          return finish(Outcome::kDied, end.exit_code
                                            ? fmt::format("process {} exited with code {}", pid, *end.exit_code)
                                            : fmt::format("process {} was killed by signal {} ({})", pid,
                                                          *end.term_signal, strsignal(*end.term_signal)));
        }
        return finish(Outcome::kDied, fmt::format("exit status unknown: its parent reaped process {} first", pid));
      }
    }
    if (int64_t pid = dead_pid()) {
      end.pid = pid;
      monitor.Tick(on_line);
      return finish(Outcome::kDied, fmt::format("exit status unknown: process {} is gone", pid));
    }
    if (stop_fd >= 0) {
      pollfd p{stop_fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 1) return finish(Outcome::kInterrupted, fmt::format("signal {}", StopSignalReceived()));
    }
    now = clock->MonotonicSeconds();
    if (options.timeout > 0 && now - start >= options.timeout) {
      monitor.Tick(on_line, /*detail=*/true);
      end.stall = monitor.DiagnoseStall();
      return finish(Outcome::kTimeout, fmt::format("not ready after {}", HumanSeconds(now - start)));
    }
    if (now >= next_sample) {
      monitor.Tick(on_line);
      if (options.on_sample) options.on_sample(monitor, now - start);
      next_sample += options.sample_interval;
      if (next_sample < now) next_sample = now + options.sample_interval;
      if (!ready_line.empty()) return finish(Outcome::kReady, fmt::format("log line matched: {}", ready_line));
      if (monitor.Stalled() && options.stop_on_stall) {
        monitor.Tick(on_line, /*detail=*/true);  // fresh thread states and sockets for the classifier
        if (options.stacks) {
          std::vector<int64_t> pids;
          for (const auto& m : monitor.Members()) pids.push_back(m.first);
          StackReport stacks = PySpyStacks(pids, rules.stack_phases);
          end.stall = monitor.DiagnoseStall(&stacks);
        } else {
          end.stall = monitor.DiagnoseStall();
        }
        return finish(Outcome::kStalled,
                      fmt::format("no progress for {}", HumanSeconds(end.stall->stalled_for_seconds)));
      }
    }
  }
  return finish(Outcome::kInterrupted, "poll failed");
}

}  // namespace faultline::supervise
