#include "supervise/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/color.h>
#include <fmt/format.h>
#include <poll.h>
#include <re2/re2.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "probe/live_clock.h"
#include "probe/proc_fs.h"
#include "rules/redactor.h"
#include "supervise/child_process.h"
#include "supervise/keeper.h"
#include "supervise/kernel_evidence.h"
#include "supervise/live_record.h"
#include "supervise/monitor.h"
#include "supervise/ready_probe.h"
#include "supervise/stack_capture.h"
#include "supervise/stop_signals.h"
#include "supervise/tree_stopper.h"

namespace faultline::supervise {
namespace {

enum class State { kPending, kRunning, kReady, kCompleted, kFailed };

struct Service {
  const ServiceSpec* spec = nullptr;
  State state = State::kPending;
  Child child;
  uint64_t start_ticks = 0;
  std::string log_path;
  int log_fd = -1;
  std::string partial;  // output not yet ended by a newline (terminal prefixing)
  std::unique_ptr<Monitor> monitor;
  std::unique_ptr<ProbeThread> probe;
  std::unique_ptr<RE2> ready_re;
  std::string ready_line;
  double started_at = 0;
  double kernel_since = 0;
  bool exited = false;
  int wait_status = 0;
  int64_t log_bytes = 0;       // bytes of output received
  int64_t log_failed_at = -1;  // the run directory's log is incomplete from here
  std::string log_error;
};

// Writes everything; returns 0 or the errno of the failure.
int WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;  // a closed terminal must not stop the run
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

// Writes path atomically (a temporary file, fsync, rename); returns "" or
// what failed.
std::string WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("{}: {}", tmp, strerror(errno));
  int e = WriteAll(fd, text.data(), text.size());
  if (e == 0 && fsync(fd) != 0) e = errno;
  if (close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && rename(tmp.c_str(), path.c_str()) != 0) e = errno;
  if (e != 0) {
    unlink(tmp.c_str());
    return fmt::format("{}: {}", path, strerror(e));
  }
  return "";
}

std::string RunDirName(const std::string& runs_dir, const std::string& name, int64_t wall_millis) {
  time_t secs = static_cast<time_t>(wall_millis / 1000);
  tm t;
  localtime_r(&secs, &t);
  std::string base = fmt::format("{}/{:04}{:02}{:02}-{:02}{:02}{:02}-{}", runs_dir, t.tm_year + 1900, t.tm_mon + 1,
                                 t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, name);
  std::string dir = base;
  for (int i = 2; std::filesystem::exists(dir); ++i) dir = fmt::format("{}-{}", base, i);
  return dir;
}

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

class PipelineRun {
 public:
  PipelineRun(const PipelineSpec& spec, const StallRules& rules, const SupervisorOptions& options,
              probe::GpuUsageSource* gpu, const LogDiagnoser& diagnose)
      : spec_(spec),
        rules_(rules),
        options_(options),
        gpu_(gpu),
        diagnose_(diagnose),
        out_(options.out ? *options.out : std::cout),
        err_(options.err ? *options.err : std::cerr),
        clock_(probe::RealClock()),
        fs_(probe::NewRealProcFs()) {}

  Result<RunResult> Run();

 private:
  void Emit(const nlohmann::json& record);
  void Say(const std::string& line);
  bool DependenciesMet(const Service& s) const;
  Status Start(Service& s);
  void ReadOutput(Service& s, bool to_terminal);
  std::string TerminalPrefix(const std::string& name);
  void Reap();
  void CheckReady(Service& s);
  std::optional<JobEnd> Step();
  void Finish(std::optional<JobEnd> failure, RunResult* result);
  void StopAll(bool quiet, bool interrupted = false);
  JobEnd EndOf(Service& s, Outcome o, std::string detail);

  const PipelineSpec& spec_;
  const StallRules& rules_;
  const SupervisorOptions& options_;
  probe::GpuUsageSource* gpu_;
  const LogDiagnoser& diagnose_;
  std::ostream& out_;
  std::ostream& err_;
  probe::Clock* clock_;
  std::unique_ptr<probe::ProcFs> fs_;
  std::unique_ptr<Keeper> keeper_;
  std::vector<Service> services_;
  std::string run_dir_;
  std::ofstream records_;
  int stop_fd_ = -1;
  int tee_fd_ = 1;
  double start_ = 0;
  double next_sample_ = 0;
  double next_status_ = 0;
  bool multi_ = false;
  std::string marker_;  // FAULTLINE_RUN_ID=... in every child's environment
  std::optional<StackBootstrap> stacks_;
  int64_t oom_kills_before_ = -1;
  size_t prefix_width_ = 0;  // the longest service name (TerminalPrefix)
  bool prefix_color_ = false;
};

void PipelineRun::Emit(const nlohmann::json& record) {
  std::string line = rules::Secrets().JsonLine(record);  // the redaction choke point (rules/redact.yaml)
  records_ << line << '\n';
  records_.flush();
  if (options_.on_record) options_.on_record(record);
  if (options_.json) {
    out_ << line << '\n';
    out_.flush();
  }
}

void PipelineRun::Say(const std::string& line) {
  if (options_.json) return;
  err_ << line << '\n';
  err_.flush();
}

bool PipelineRun::DependenciesMet(const Service& s) const {
  for (const auto& d : s.spec->depends_on) {
    for (const auto& other : services_) {
      if (other.spec->name != d.name) continue;
      switch (d.condition) {
        case Dependency::Condition::kStarted:
          if (other.state == State::kPending) return false;
          break;
        case Dependency::Condition::kReady:
          if (other.state != State::kReady) return false;
          break;
        case Dependency::Condition::kCompleted:
          if (other.state != State::kCompleted) return false;
          break;
      }
    }
  }
  return true;
}

Status PipelineRun::Start(Service& s) {
  SpawnOptions so;
  so.argv = s.spec->argv;
  so.env = s.spec->env;
  so.working_dir = s.spec->working_dir;
  if (s.spec->gpus_set) {
    std::string devices;
    for (int g : s.spec->gpus) devices += (devices.empty() ? "" : ",") + std::to_string(g);
    so.env["CUDA_VISIBLE_DEVICES"] = devices;
  }
  // Python writes its output line by line, as on a terminal, unless the
  // user chose otherwise (PYTHONUNBUFFERED set in either environment).
  if (!s.spec->env.count("PYTHONUNBUFFERED") && getenv("PYTHONUNBUFFERED") == nullptr) {
    so.env["PYTHONUNBUFFERED"] = "1";
  }
  size_t eq = marker_.find('=');
  so.env[marker_.substr(0, eq)] = marker_.substr(eq + 1);
  if (stacks_) {
    auto it = s.spec->env.find("PYTHONPATH");
    const char* outer = getenv("PYTHONPATH");
    std::string user = it != s.spec->env.end() ? it->second : outer ? outer : "";
    for (const auto& [k, v] : stacks_->Env(user)) so.env[k] = v;
  }
  s.log_path = fmt::format("{}/{}.log", run_dir_, s.spec->name);
  s.log_fd = open(s.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.log_fd < 0) return Status::IoError(fmt::format("{}: {}", s.log_path, strerror(errno)));
  auto child = Spawn(so);
  if (!child.ok()) return Status(child.status());
  s.child = *child;
  keeper_->TrackGroup(s.child.pid);
  s.start_ticks = StartTimeOf(s.child.pid);
  keeper_->TrackProcess(s.child.pid, s.start_ticks);
  s.state = State::kRunning;
  s.started_at = clock_->MonotonicSeconds();
  s.kernel_since = KernelClockSeconds();
  MonitorOptions mo;
  mo.roots = {s.child.pid};
  mo.log_path = s.log_path;
  mo.stall_after_seconds = s.spec->stall_after >= 0 ? s.spec->stall_after : spec_.stall_after;
  mo.root_cmdline = JoinArgv(s.spec->argv);
  s.monitor = std::make_unique<Monitor>(rules_, fs_.get(), clock_, gpu_, mo);
  if (s.spec->ready.kind == ReadySpec::Kind::kHttp || s.spec->ready.kind == ReadySpec::Kind::kTcp ||
      s.spec->ready.kind == ReadySpec::Kind::kExec) {
    s.probe = std::make_unique<ProbeThread>(s.spec->ready);
  } else if (s.spec->ready.kind == ReadySpec::Kind::kLog) {
    s.ready_re = std::make_unique<RE2>(s.spec->ready.target);
  }
  nlohmann::json fields = {{"pid", s.child.pid}, {"command", s.spec->argv}, {"log_path", s.log_path}};
  if (s.spec->gpus_set) fields["gpus"] = s.spec->gpus;
  Emit(EventRecord("started", s.spec->name, clock_->WallMillis(), fields));
  Say(fmt::format("faultline: started {} (pid {}{}){}", s.spec->name, s.child.pid,
                  s.spec->gpus_set ? ", CUDA_VISIBLE_DEVICES=" + so.env["CUDA_VISIBLE_DEVICES"] : "",
                  multi_ ? "" : fmt::format(", log {}", s.log_path)));
  return Status::Ok();
}

void PipelineRun::ReadOutput(Service& s, bool to_terminal) {
  if (s.child.output_fd < 0) return;
  char buf[65536];
  while (true) {
    ssize_t n = read(s.child.output_fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {  // every writer closed it
      close(s.child.output_fd);
      s.child.output_fd = -1;
      if (to_terminal && multi_ && !s.partial.empty()) {
        std::string line = fmt::format("{} | {}\n", s.spec->name, s.partial);
        WriteAll(tee_fd_, line.data(), line.size());
      }
      s.partial.clear();
      return;
    }
    if (n < 0) return;  // EAGAIN: nothing more now
    if (s.log_failed_at < 0) {
      int e = WriteAll(s.log_fd, buf, static_cast<size_t>(n));
      if (e != 0) {
        // The terminal keeps every line; the run directory's copy stops here.
        off_t at = lseek(s.log_fd, 0, SEEK_END);
        s.log_failed_at = at >= 0 ? static_cast<int64_t>(at) : s.log_bytes;
        s.log_error = strerror(e);
        Say(
            fmt::format("faultline: warning: writing {} failed at byte {}: {}; the terminal keeps every line, the "
                        "run directory's log is incomplete from there",
                        s.log_path, s.log_failed_at, s.log_error));
      }
    }
    s.log_bytes += n;
    std::string_view data(buf, static_cast<size_t>(n));
    // Readiness by log line, and the terminal copy (prefixed in a pipeline).
    std::string text = s.partial + std::string(data);
    size_t at = 0, nl;
    std::string terminal;
    while ((nl = text.find('\n', at)) != std::string::npos) {
      std::string_view line(text.data() + at, nl - at);
      if (s.ready_re && s.ready_line.empty() && RE2::PartialMatch(line, *s.ready_re)) s.ready_line = std::string(line);
      if (multi_) terminal += TerminalPrefix(s.spec->name) + std::string(line) + "\n";
      at = nl + 1;
    }
    s.partial = text.substr(at);
    if (s.partial.size() > 65536) s.partial.clear();
    if (!to_terminal) continue;
    if (multi_) {
      WriteAll(tee_fd_, terminal.data(), terminal.size());
    } else {
      WriteAll(tee_fd_, buf, static_cast<size_t>(n));
    }
  }
}

// "name | " as docker compose prints it: names padded to the longest, each
// in its own colour when the terminal takes colour (NO_COLOR, FORCE_COLOR,
// CLICOLOR_FORCE as the text report honours them).
std::string PipelineRun::TerminalPrefix(const std::string& name) {
  if (prefix_width_ == 0) {
    for (const auto& sv : services_) prefix_width_ = std::max(prefix_width_, sv.spec->name.size());
    const char* no_color = std::getenv("NO_COLOR");
    const char* force = std::getenv("FORCE_COLOR");
    const char* clicolor = std::getenv("CLICOLOR_FORCE");
    const char* term = std::getenv("TERM");
    if (no_color != nullptr && *no_color != 0) {
      prefix_color_ = false;
    } else if ((force != nullptr && std::string_view(force) != "0") ||
               (clicolor != nullptr && std::string_view(clicolor) != "0")) {
      prefix_color_ = true;
    } else {
      prefix_color_ = isatty(tee_fd_) == 1 && !(term != nullptr && std::string_view(term) == "dumb");
    }
  }
  std::string padded = name + std::string(prefix_width_ > name.size() ? prefix_width_ - name.size() : 0, ' ');
  if (!prefix_color_) return padded + " | ";
  static const fmt::terminal_color kColors[] = {fmt::terminal_color::cyan, fmt::terminal_color::yellow,
                                                fmt::terminal_color::green, fmt::terminal_color::magenta,
                                                fmt::terminal_color::blue, fmt::terminal_color::bright_cyan};
  size_t index = 0;
  for (size_t i = 0; i < services_.size(); ++i) {
    if (services_[i].spec->name == name) index = i;
  }
  return fmt::format(fmt::fg(kColors[index % (sizeof(kColors) / sizeof(kColors[0]))]), "{} |", padded) + " ";
}

void PipelineRun::Reap() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (auto& s : services_) {
      if (s.child.pid == pid) {
        s.exited = true;
        s.wait_status = status;
      }
    }
  }
}

JobEnd PipelineRun::EndOf(Service& s, Outcome o, std::string detail) {
  JobEnd e;
  e.service = s.spec->name;
  e.outcome = o;
  e.pid = s.child.pid;
  e.elapsed_seconds = clock_->MonotonicSeconds() - s.started_at;
  e.detail = std::move(detail);
  e.log_path = s.log_path;
  if (s.exited) {
    if (WIFEXITED(s.wait_status)) e.exit_code = WEXITSTATUS(s.wait_status);
    if (WIFSIGNALED(s.wait_status)) e.term_signal = WTERMSIG(s.wait_status);
  }
  return e;
}

void PipelineRun::CheckReady(Service& s) {
  if (s.state != State::kRunning || s.spec->ready.kind == ReadySpec::Kind::kNone) return;
  bool ready = (s.probe && s.probe->ready()) || !s.ready_line.empty();
  if (!ready) return;
  s.state = State::kReady;
  double took = clock_->MonotonicSeconds() - s.started_at;
  std::string how = s.ready_line.empty() ? s.spec->ready.target : "log: " + s.ready_line;
  Emit(EventRecord("ready", s.spec->name, clock_->WallMillis(), {{"seconds", took}, {"probe", how}}));
  Say(fmt::format("faultline: {} is ready after {} ({})", s.spec->name, HumanSeconds(took), how));
  s.probe.reset();
}

// One turn of the loop; returns the end of the run when it ended.
std::optional<JobEnd> PipelineRun::Step() {
  for (auto& s : services_) {
    if (s.state == State::kPending && DependenciesMet(s)) {
      Status st = Start(s);
      if (!st.ok()) {
        JobEnd e;
        e.service = s.spec->name;
        e.outcome = Outcome::kDied;
        e.detail = st.message();
        s.state = State::kFailed;
        return e;
      }
    }
  }
  std::vector<pollfd> fds;
  for (auto& s : services_) {
    if (s.child.output_fd >= 0) fds.push_back({s.child.output_fd, POLLIN, 0});
    if (s.child.pidfd >= 0 && !s.exited) fds.push_back({s.child.pidfd, POLLIN, 0});
    if (s.probe) fds.push_back({s.probe->wake_fd(), POLLIN, 0});
  }
  fds.push_back({stop_fd_, POLLIN, 0});
  double now = clock_->MonotonicSeconds();
  double wait = std::max(0.0, std::min(0.2, next_sample_ - now));
  poll(fds.data(), fds.size(), static_cast<int>(wait * 1000));
  Reap();
  for (auto& s : services_) ReadOutput(s, true);
  if (StopSignalReceived() != 0) {
    JobEnd e;
    e.service = spec_.name;
    e.elapsed_seconds = clock_->MonotonicSeconds() - start_;
    e.outcome = Outcome::kInterrupted;
    e.detail = fmt::format("signal {} ({})", StopSignalReceived(), strsignal(StopSignalReceived()));
    return e;
  }
  for (auto& s : services_) {
    if (s.state != State::kRunning && s.state != State::kReady) continue;
    CheckReady(s);
    if (s.exited) {
      ReadOutput(s, true);
      JobEnd e = EndOf(s, Outcome::kDied, "");
      bool ok = s.spec->is_job && e.exit_code && *e.exit_code == 0;
      e.detail = e.exit_code ? fmt::format("exited with code {}", *e.exit_code)
                             : fmt::format("killed by signal {} ({})", e.term_signal.value_or(0),
                                           strsignal(e.term_signal.value_or(0)));
      if (!s.spec->is_job && e.exit_code && *e.exit_code == 0) e.detail += " (a service must keep running)";
      if (!ok && (e.term_signal || s.log_bytes == 0)) {
        KernelEvidence k = ExplainDeath(rules_.kernel_messages, s.child.pid, s.kernel_since, oom_kills_before_);
        e.kernel_explain = k.explain;
        e.kernel_lines = k.lines;
        e.kernel_notes = k.notes;
        if (k.explain.empty() && e.term_signal == SIGKILL) {
          e.kernel_notes.push_back(
              "no kernel record of this kill: it came from another process (kill -9, a scheduler's time "
              "limit, a container runtime)");
        }
      }
      Emit(EventRecord("exited", s.spec->name, clock_->WallMillis(),
                       {{"pid", s.child.pid},
                        {"exit_code", e.exit_code ? nlohmann::json(*e.exit_code) : nlohmann::json(nullptr)},
                        {"signal", e.term_signal ? nlohmann::json(*e.term_signal) : nlohmann::json(nullptr)}}));
      if (!ok) {
        s.state = State::kFailed;
        return e;
      }
      s.state = State::kCompleted;
      if (multi_) Say(fmt::format("faultline: {} completed after {}", s.spec->name, HumanSeconds(e.elapsed_seconds)));
      // Whatever it left running is stopped now.
      auto members = s.monitor->Members();
      if (!members.empty()) {
        StopProcesses({s.child.pid}, members, spec_.grace_period, [this] { Reap(); });
      }
      continue;
    }
    double running_for = clock_->MonotonicSeconds() - s.started_at;
    if (s.state == State::kRunning && s.spec->ready.timeout > 0 && running_for >= s.spec->ready.timeout) {
      JobEnd e = EndOf(s, Outcome::kTimeout, fmt::format("not ready after {}", HumanSeconds(running_for)));
      s.monitor->Tick(nullptr, /*detail=*/true);
      std::optional<StackReport> stacks;
      if (stacks_) stacks = CaptureStacks(s.monitor->Members(), *stacks_, rules_.stack_phases);
      e.stall = s.monitor->DiagnoseStall(stacks ? &*stacks : nullptr);
      s.state = State::kFailed;
      return e;
    }
  }
  now = clock_->MonotonicSeconds();
  if (now >= next_sample_) {
    next_sample_ = now + options_.sample_interval;
    bool status_due = options_.status_interval > 0 && now >= next_status_;
    if (status_due) next_status_ = now + options_.status_interval;
    for (auto& s : services_) {
      if (s.state != State::kRunning && s.state != State::kReady) continue;
      s.monitor->Tick();
      for (const auto& [pid, start] : s.monitor->Members()) keeper_->TrackProcess(pid, start);
      if (status_due) {
        Emit(StatusRecord(*s.monitor, s.spec->name, now - start_));
        Say(StatusLine(*s.monitor, s.spec->name, now - start_));
      } else if (options_.on_record) {
        options_.on_record(StatusRecord(*s.monitor, s.spec->name, now - start_));
      }
      // A service that is ready may idle; anything else must progress.
      if (s.state == State::kRunning && s.monitor->Stalled()) {
        s.monitor->Tick(nullptr, /*detail=*/true);  // fresh thread states and sockets for the classifier
        JobEnd e = EndOf(s, Outcome::kStalled, "");
        // Where each Python process is, before anything is stopped.
        std::optional<StackReport> stacks;
        if (stacks_) stacks = CaptureStacks(s.monitor->Members(), *stacks_, rules_.stack_phases);
        e.stall = s.monitor->DiagnoseStall(stacks ? &*stacks : nullptr);
        e.detail = fmt::format("no progress for {}", HumanSeconds(e.stall->stalled_for_seconds));
        s.state = State::kFailed;
        return e;
      }
    }
  }
  bool any_job = false, all_jobs_done = true;
  for (const auto& s : services_) {
    if (!s.spec->is_job) continue;
    any_job = true;
    all_jobs_done &= s.state == State::kCompleted;
  }
  if (any_job && all_jobs_done) {
    JobEnd e;
    e.service = spec_.name;
    e.outcome = Outcome::kCompleted;
    e.detail = "all jobs completed";
    e.elapsed_seconds = clock_->MonotonicSeconds() - start_;
    return e;
  }
  return std::nullopt;
}

void PipelineRun::StopAll(bool quiet, bool interrupted) {
  std::vector<pid_t> groups;
  std::vector<ProcessId> members;
  for (auto& s : services_) {
    if (s.child.pid <= 0) continue;
    if (!s.exited || s.monitor) {
      groups.push_back(s.child.pid);
      if (!s.exited) members.emplace_back(s.child.pid, s.start_ticks);
      if (s.monitor) {
        for (const auto& m : s.monitor->Members()) members.push_back(m);
      }
    }
  }
  // Orphans re-parented to us (we are a subreaper) that the monitors missed,
  // and whatever carries the run's marker (setsid daemons).
  pid_t keeper = keeper_ ? keeper_->pid() : -1;
  for (const auto& c : ChildrenOfSelf(keeper)) members.push_back(c);
  for (const auto& c : ProcessesMarked(marker_, keeper)) members.push_back(c);
  if (interrupted) {
    std::set<int64_t> n;
    for (const auto& m : members) n.insert(m.first);
    Say(fmt::format("faultline: stopping {} process(es) (grace {}), Ctrl-C again to kill", n.size(),
                    HumanSeconds(spec_.grace_period)));
  }
  auto kill_now = [interrupted] { return interrupted && StopSignalCount() >= 2; };
  StopReport r = StopProcesses(
      groups, members, spec_.grace_period, [this] { Reap(); }, kill_now);
  if (kill_now()) Say("faultline: second Ctrl-C: killed what was left");
  // A last sweep for anything forked during the stop.
  std::vector<ProcessId> late = ChildrenOfSelf(keeper);
  for (const auto& c : ProcessesMarked(marker_, keeper)) late.push_back(c);
  if (!late.empty()) StopProcesses({}, late, 1.0, [this] { Reap(); });
  SweepMarked(
      marker_, 0.5, [this] { Reap(); }, keeper);
  for (auto& s : services_) {
    ReadOutput(s, false);
    if (s.child.output_fd >= 0) {
      close(s.child.output_fd);
      s.child.output_fd = -1;
    }
    if (s.child.pidfd >= 0) {
      close(s.child.pidfd);
      s.child.pidfd = -1;
    }
    if (s.log_fd >= 0) {
      fsync(s.log_fd);
      close(s.log_fd);
      s.log_fd = -1;
    }
    s.probe.reset();
  }
  nlohmann::json killed = r.killed;
  Emit(EventRecord("stopped", spec_.name, clock_->WallMillis(),
                   {{"signalled", r.signalled}, {"killed_after_grace", killed}, {"seconds", r.seconds}}));
  if (!quiet && (r.signalled > 0 || !r.killed.empty())) {
    Say(fmt::format("faultline: stopped {} process(es) in {}{}", r.signalled, HumanSeconds(r.seconds),
                    r.killed.empty() ? ""
                                     : fmt::format("; {} ignored SIGTERM and were killed after the {} grace period",
                                                   r.killed.size(), HumanSeconds(spec_.grace_period))));
  }
}

void PipelineRun::Finish(std::optional<JobEnd> end, RunResult* result) {
  JobEnd e = *end;
  for (const auto& s : services_) {
    if (s.spec->name == e.service && s.log_failed_at >= 0) {
      e.log_incomplete_from = s.log_failed_at;
      e.log_write_error = s.log_error;
    }
  }
  Emit(EventRecord("stopping", e.service, clock_->WallMillis(), {{"reason", OutcomeName(e.outcome)}}));
  nlohmann::json triage = nullptr;
  if (IsFailure(e.outcome)) {
    // The diagnosis first (death to diagnosis must be fast), the stop after.
    std::ostringstream text;
    text << EndHeadline(e) << "\n";
    for (const auto& l : e.kernel_lines) text << "  " << l << "\n";
    for (const auto& n : e.kernel_notes) text << "  (" << n << ")\n";
    if (e.log_incomplete_from >= 0) {
      text << fmt::format(
          "  the log in the run directory is incomplete from byte {} ({}); the terminal had every line\n",
          e.log_incomplete_from, e.log_write_error);
    }
    if (e.stall) PrintStall(*e.stall, text);
    if (!options_.json) {
      out_ << text.str();
      if (!e.log_path.empty()) out_ << fmt::format("\nDiagnosis of {}:\n", e.log_path);
      out_.flush();
    }
    if (!e.log_path.empty() && diagnose_) triage = diagnose_(e.log_path, !options_.json, out_, e.outcome);
    nlohmann::json record = DiagnosisRecord(e, clock_->WallMillis(), triage);
    Emit(record);
    std::string failed = WriteFileAtomically(run_dir_ + "/diagnosis.txt", text.str());
    nlohmann::json diagnosis = record;
    rules::Secrets().Json(&diagnosis);  // Emit() redacts its copy; this one too
    std::string failed_json = WriteFileAtomically(
        run_dir_ + "/diagnosis.json", diagnosis.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    for (const auto& f : {failed, failed_json}) {
      if (!f.empty()) Say(fmt::format("faultline: warning: the diagnosis was not saved: {} (it is printed above)", f));
    }
    if (e.stall && e.stall->stacks) {
      WriteFileAtomically(run_dir_ + "/stacks.txt", StacksText(*e.stall->stacks, 1000));
    }
  } else {
    Emit(DiagnosisRecord(e, clock_->WallMillis(), nullptr));
  }
  StopAll(false, e.outcome == Outcome::kInterrupted);
  if (!IsFailure(e.outcome)) Say(EndHeadline(e));
  Say(fmt::format("faultline: logs in {}", run_dir_));
  result->exit_code = e.outcome == Outcome::kCompleted ? 0 : e.outcome == Outcome::kInterrupted ? 130 : 1;
  // A job that failed with nothing to explain it (no error in its log, no
  // kernel record) ends with its own exit status, as a shell would.
  bool explained =
      !e.kernel_explain.empty() || (triage.is_object() && !triage.value("root_cause", nlohmann::json()).is_null());
  if (e.outcome == Outcome::kDied && !explained) {
    if (e.exit_code && *e.exit_code != 0) result->exit_code = *e.exit_code;
    if (e.term_signal) result->exit_code = 128 + *e.term_signal;
  }
  result->ends.push_back(std::move(e));
}

Result<RunResult> PipelineRun::Run() {
  RunResult result;
  start_ = clock_->MonotonicSeconds();
  multi_ = spec_.services.size() > 1;
  tee_fd_ = options_.json ? 2 : 1;
  run_dir_ = RunDirName(options_.runs_dir, spec_.name, clock_->WallMillis());
  std::error_code ec;
  std::filesystem::create_directories(run_dir_, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", run_dir_, ec.message()));
  result.run_dir = run_dir_;
  records_.open(run_dir_ + "/live.jsonl");
  marker_ = fmt::format("FAULTLINE_RUN_ID={}-{}", getpid(), clock_->WallMillis());
  if (options_.stacks) {
    auto b = PrepareStackBootstrap(run_dir_);
    if (b.ok()) {
      stacks_ = *b;
    } else {
      Say(fmt::format("faultline: warning: no stack capture: {}", b.status().message()));
    }
  }
  oom_kills_before_ = CgroupOomKills();
  // The keeper is forked before any thread starts.
  auto keeper = Keeper::Start(spec_.grace_period, marker_);
  if (!keeper.ok()) return keeper.status();
  keeper_ = std::move(*keeper);
  if (options_.on_run_dir) options_.on_run_dir(run_dir_);
  BecomeSubreaper();
  stop_fd_ = InstallStopSignals();
  services_.resize(spec_.services.size());
  for (size_t i = 0; i < spec_.services.size(); ++i) services_[i].spec = &spec_.services[i];
  next_sample_ = start_;
  next_status_ = start_ + options_.status_interval;
  std::optional<JobEnd> end;
  while (!(end = Step())) {
  }
  // A command that could not be started at all is an input error.
  bool spawn_failed = end->outcome == Outcome::kDied && end->pid == 0 && !end->service.empty();
  if (spawn_failed) {
    StopAll(true);
    keeper_->Release();
    return Status::NotFound(fmt::format("{} (service {})", end->detail, end->service));
  }
  Finish(end, &result);
  keeper_->Release();
  return result;
}

}  // namespace

Result<RunResult> RunPipeline(const PipelineSpec& spec, const StallRules& rules, const SupervisorOptions& options,
                              probe::GpuUsageSource* gpu, const LogDiagnoser& diagnose) {
  PipelineRun run(spec, rules, options, gpu, diagnose);
  return run.Run();
}

}  // namespace faultline::supervise
