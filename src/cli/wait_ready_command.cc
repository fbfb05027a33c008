// faultline wait-ready: a drop-in for "wait until the server is ready" loops.
// Exits 0 as soon as the probe answers (HTTP 2xx, TCP connect, or a log line),
// 1 at once when a watched process dies (with the diagnosis of its log), 1
// with a stall diagnosis when nothing progresses for --stall-after, 1 on
// --timeout. It only observes: it never signals the processes it watches.
#include <signal.h>

#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "cli/live_support.h"
#include "cli/metrics_support.h"
#include "probe/proc_fs.h"
#include "supervise/stop_signals.h"
#include "supervise/watcher.h"

namespace faultline::cli {
namespace {

struct WaitReadyArgs {
  std::string url;
  std::string tcp;
  std::string log_ready;
  std::vector<int64_t> pids;
  std::string log;
  std::string timeout = "30m";
  std::string stall_after = "5m";
  std::string interval = "1s";
  std::string status_every = "30s";
  std::string stall_rules;
  std::string color = "auto";
  bool json = false;
  bool quiet = false;
  bool no_gpu = false;
  metrics_flags::MetricsArgs metrics;
};

int RunWaitReady(WaitReadyArgs& a) {
  supervise::WatchOptions w;
  int kinds = !a.url.empty() + !a.tcp.empty() + !a.log_ready.empty();
  if (kinds != 1) {
    std::cerr << "faultline: wait-ready needs exactly one of --url, --tcp, "
                 "--log-ready\n";
    return kExitUsage;
  }
  auto probe = [&w](supervise::ReadySpec::Kind kind, const std::string& target) {
    w.ready.kind = kind;
    w.ready.target = target;
  };
  if (!a.url.empty()) probe(supervise::ReadySpec::Kind::kHttp, a.url);
  if (!a.tcp.empty()) probe(supervise::ReadySpec::Kind::kTcp, a.tcp);
  if (!a.log_ready.empty()) {
    probe(supervise::ReadySpec::Kind::kLog, a.log_ready);
    if (a.log.empty()) {
      std::cerr << "faultline: --log-ready needs --log FILE\n";
      return kExitUsage;
    }
  }
  w.ready.interval = 0.25;
  if (Status s = supervise::ValidateReadySpec(w.ready); !s.ok()) {
    std::cerr << "faultline: " << s.message() << "\n";
    return kExitUsage;
  }
  if (!live::Duration("--timeout", a.timeout, &w.timeout) ||
      !live::Duration("--stall-after", a.stall_after, &w.stall_after, true) ||
      !live::Duration("--interval", a.interval, &w.sample_interval, true) ||
      !live::Duration("--status-every", a.status_every, &w.status_interval)) {
    return kExitUsage;
  }
  if (!live::PidsExist(a.pids)) return kExitUsage;
  auto rules = live::LoadRules(a.stall_rules);
  if (!rules.ok()) {
    std::cerr << "faultline: " << rules.status().message() << "\n";
    return kExitUsage;
  }
  if (!metrics_flags::Check(&a.metrics)) return kExitUsage;
  w.pids = a.pids;
  w.log_path = a.log;
  w.name = a.pids.empty() ? "server" : "process " + std::to_string(a.pids[0]);
  if (a.quiet) w.status_interval = 0;
  auto fs = probe::NewRealProcFs();
  auto gpu = live::GpuSource(a.no_gpu);
  bool json = a.json;
  std::string name = w.name;
  std::unique_ptr<metrics::MetricsOutput> metrics;
  if (a.metrics.enabled()) {
    metrics = metrics_flags::Start(a.metrics, metrics_flags::WatchRunId(), name, *rules);
    if (!metrics) return kExitUsage;
    w.on_sample = [&](const supervise::Monitor& m, double t) { metrics->Apply(supervise::StatusRecord(m, name, t)); };
  }
  int stop_fd = supervise::InstallStopSignals();
  bool first = true;  // rates need two samples: the first status waits an interval
  supervise::JobEnd end = supervise::Watch(
      w, *rules, fs.get(), probe::RealClock(), gpu.get(), stop_fd, [&](const supervise::Monitor& m, double t) {
        if (first) {
          first = false;
        } else if (json) {
          std::cout << rules::Secrets().JsonLine(supervise::StatusRecord(m, name, t)) << "\n";
          std::cout.flush();
        } else {
          std::cerr << supervise::StatusLine(m, name, t) << "\n";
        }
      });
  if (end.outcome == supervise::Outcome::kCompleted) {  // exited 0, but never became ready
    end.outcome = supervise::Outcome::kDied;
    end.detail += " before it was ready";
  }
  auto finish_metrics = [&](const nlohmann::json& triage) {
    if (!metrics) return;
    metrics->Apply(supervise::DiagnosisRecord(end, probe::RealClock()->WallMillis(), triage));
    metrics->Finish(a.metrics.linger_seconds);
  };
  switch (end.outcome) {
    case supervise::Outcome::kReady:
      if (json) {
        std::cout << rules::Secrets().JsonLine(supervise::DiagnosisRecord(end, probe::RealClock()->WallMillis(), nullptr))
                  << "\n";
      } else {
        std::cerr << supervise::EndHeadline(end) << "\n";
      }
      finish_metrics(nullptr);
      return kExitHealthy;
    case supervise::Outcome::kInterrupted:
      std::cerr << supervise::EndHeadline(end) << "\n";
      finish_metrics(nullptr);
      return 130;
    default:
      finish_metrics(live::PrintEnd(end, json, a.color));
      return kExitDiagnosed;
  }
}

}  // namespace

void AddWaitReadyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WaitReadyArgs>();
  CLI::App* cmd = app.add_subcommand("wait-ready",
                                     "Wait until a server answers; fail at once, diagnosed, if "
                                     "its process dies or stalls");
  cmd->footer(
      HelpFooter("faultline wait-ready --url http://127.0.0.1:8000/health "
                 "--pid $SERVER_PID --log vllm.log",
                 "0 ready, 1 died, stalled or timed out (diagnosis printed), 2 "
                 "usage or input error"));
  cmd->add_option("--url", args->url, "ready when GET URL answers 2xx (http://host:port/health)");
  cmd->add_option("--tcp", args->tcp, "ready when HOST:PORT accepts a connection");
  cmd->add_option("--log-ready", args->log_ready, "ready when a line of --log matches this regex (RE2)");
  cmd->add_option("--pid", args->pids, "process (and its children) to watch; repeatable");
  cmd->add_option("--log", args->log, "the server's log: diagnosed on death or stall, watched for progress");
  cmd->add_option("--timeout", args->timeout, "give up (exit 1) after this long")->capture_default_str();
  cmd->add_option("--stall-after", args->stall_after, "stalled when nothing progresses for this long")
      ->capture_default_str();
  cmd->add_option("--interval", args->interval, "sampling interval")->capture_default_str();
  cmd->add_option("--status-every", args->status_every, "status line interval (stderr)")->capture_default_str();
  cmd->add_option("--stall-rules", args->stall_rules, "stall classes file instead of the built-in rules/stall.yaml");
  cmd->add_option("--color", args->color, "auto, always, never")->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--json", args->json, "print faultline.live/1 records (JSON Lines) on stdout");
  cmd->add_flag("--quiet", args->quiet, "no status lines");
  cmd->add_flag("--no-gpu", args->no_gpu, "do not sample GPUs");
  metrics_flags::AddOptions(cmd, &args->metrics);
  cmd->callback([args, exit_code]() { *exit_code = RunWaitReady(*args); });
}

FAULTLINE_REGISTER_COMMAND(40, AddWaitReadyCommand);

}  // namespace faultline::cli
