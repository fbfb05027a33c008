// faultline watch --pid PID [--log FILE]: attaches to a running job (its whole
// process tree) and prints a status line per interval — phase, CPU, memory,
// I/O, weight files, log growth, GPUs — then the diagnosis when it dies or
// stalls. --json streams faultline.live/1 records. It only observes.
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "cli/live_support.h"
#include "cli/metrics_support.h"
#include "probe/proc_fs.h"
#include "supervise/monitor.h"
#include "supervise/stop_signals.h"
#include "supervise/watcher.h"

namespace faultline::cli {
namespace {

struct WatchArgs {
  std::vector<int64_t> pids;
  std::string log;
  std::string status_every = "10s";
  std::string interval = "1s";
  std::string stall_after = "5m";
  std::string stall_rules;
  std::string color = "auto";
  bool json = false;
  bool once = false;
  bool no_gpu = false;
  bool no_stacks = false;
  metrics_flags::MetricsArgs metrics;
};

int RunWatch(WatchArgs& a) {
  supervise::WatchOptions w;
  if (!live::Duration("--status-every", a.status_every, &w.status_interval) ||
      !live::Duration("--interval", a.interval, &w.sample_interval, true) ||
      !live::Duration("--stall-after", a.stall_after, &w.stall_after, true)) {
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
  w.stacks = !a.no_stacks;
  w.log_path = a.log;
  w.name = "pid " + std::to_string(a.pids[0]);
  auto fs = probe::NewRealProcFs();
  auto gpu = live::GpuSource(a.no_gpu);
  bool json = a.json;
  std::string name = w.name;
  auto print_status = [json, name](const supervise::Monitor& m, double t) {
    if (json) {
      std::cout << rules::Secrets().JsonLine(supervise::StatusRecord(m, name, t)) << "\n";
    } else {
      std::cout << supervise::StatusLine(m, name, t) << "\n";
    }
    std::cout.flush();
  };
  if (a.once) {
    // Two samples one interval apart, so rates can be computed.
    supervise::MonitorOptions mo;
    mo.roots = w.pids;
    mo.log_path = w.log_path;
    mo.stall_after_seconds = w.stall_after;
    supervise::Monitor m(*rules, fs.get(), probe::RealClock(), gpu.get(), mo);
    m.Tick();
    usleep(static_cast<useconds_t>(w.sample_interval * 1e6));
    m.Tick();
    print_status(m, w.sample_interval);
    return kExitHealthy;
  }
  std::unique_ptr<metrics::MetricsOutput> metrics;
  if (a.metrics.enabled()) {
    metrics = metrics_flags::Start(a.metrics, metrics_flags::WatchRunId(), name, *rules);
    if (!metrics) return kExitUsage;
    w.on_sample = [&](const supervise::Monitor& m, double t) { metrics->Apply(supervise::StatusRecord(m, name, t)); };
  }
  int stop_fd = supervise::InstallStopSignals();
  // The first status line comes after the first interval (rates need two
  // samples).
  bool first = true;
  supervise::JobEnd end = supervise::Watch(w, *rules, fs.get(), probe::RealClock(), gpu.get(), stop_fd,
                                           [&](const supervise::Monitor& m, double t) {
                                             if (!first) print_status(m, t);
                                             first = false;
                                           });
  auto finish_metrics = [&](const nlohmann::json& triage) {
    if (!metrics) return;
    metrics->Apply(supervise::DiagnosisRecord(end, probe::RealClock()->WallMillis(), triage));
    metrics->Finish(a.metrics.linger_seconds);
  };
  if (end.outcome == supervise::Outcome::kInterrupted) {
    std::cerr << supervise::EndHeadline(end) << "\n";
    finish_metrics(nullptr);
    return kExitHealthy;  // the user stopped watching; the job goes on
  }
  if (end.outcome == supervise::Outcome::kCompleted) {  // the pid exited with code 0
    if (json) {
      std::cout << report::DumpJson(supervise::DiagnosisRecord(end, probe::RealClock()->WallMillis(), nullptr), -1)
                << "\n";
    } else {
      std::cout << supervise::EndHeadline(end) << "\n";
    }
    return kExitHealthy;
  }
  nlohmann::json triage = live::PrintEnd(end, json, a.color);
  finish_metrics(triage);
  // A watched process that exited is fine when its log says so.
  if (end.outcome == supervise::Outcome::kDied && triage.is_object() && triage.value("verdict", "") == "healthy") {
    return kExitHealthy;
  }
  return kExitDiagnosed;
}

}  // namespace

void AddWatchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand("watch",
                                     "Attach to a running job: status per interval, the diagnosis "
                                     "when it dies or stalls (observes only)");
  cmd->footer(HelpFooter("faultline watch --pid $(pgrep -f \"vllm serve\") --log vllm.log",
                         "0 the job ended healthy or you stopped watching, 1 it died or stalled "
                         "(diagnosis printed), 2 usage or input error"));
  cmd->add_option("--pid", args->pids, "process (and its children) to watch; repeatable")->required();
  cmd->add_option("--log", args->log, "the job's log: phase, growth, and the diagnosis on death or stall");
  // As in run and wait-ready: --interval samples, --status-every prints.
  cmd->add_option("--status-every", args->status_every, "status line interval")->capture_default_str();
  cmd->add_option("--interval", args->interval, "sampling interval")->capture_default_str();
  cmd->add_option("--stall-after", args->stall_after, "stalled when nothing progresses for this long")
      ->capture_default_str();
  cmd->add_option("--stall-rules", args->stall_rules, "stall classes file instead of the built-in rules/stall.yaml");
  cmd->add_option("--color", args->color, "auto, always, never")->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--json", args->json, "print faultline.live/1 records (JSON Lines)");
  cmd->add_flag("--once", args->once, "print one status (two samples --interval apart) and exit 0");
  cmd->add_flag("--no-gpu", args->no_gpu, "do not sample GPUs");
  cmd->add_flag("--no-stacks", args->no_stacks, "no py-spy dump of the Python processes on a stall");
  metrics_flags::AddOptions(cmd, &args->metrics);
  cmd->callback([args, exit_code]() { *exit_code = RunWatch(*args); });
}

FAULTLINE_REGISTER_COMMAND(50, AddWatchCommand);

}  // namespace faultline::cli
