// faultline run -- CMD... / faultline run -f pipeline.yaml: launches a command
// or a pipeline of services and jobs, tees their output to the terminal and to
// runs/<time>-<name>/, watches them, and on the first death or stall prints the
// diagnosis and stops everything it started (SIGTERM, SIGKILL after --grace).
// Commands preflight knows (vllm, sglang, torchrun) are checked first.
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "cli/live_support.h"
#include "cli/metrics_support.h"
#include "preflight/launch_command.h"
#include "preflight/preflight.h"
#include "preflight/report_writer.h"
#include "probe/gpu_inventory.h"
#include "supervise/pipeline_spec.h"
#include "supervise/supervisor.h"
#include "web/dashboard.h"

extern char** environ;

namespace faultline::cli {
namespace {

struct RunArgs {
  std::string file;
  std::vector<std::string> command;
  std::string stall_after;
  std::string grace;
  std::string runs_dir = "runs";
  std::string status_every = "10s";
  std::string interval = "1s";
  std::string stall_rules;
  std::string color = "auto";
  bool json = false;
  bool no_preflight = false;
  bool no_gpu = false;
  bool no_stacks = false;
  std::string dashboard;  // HOST:PORT
  std::string dashboard_token;
  metrics_flags::MetricsArgs metrics;
};

// Preflight of every command it knows. Returns false when one has a
// blocking problem (the report is printed).
bool Preflight(const supervise::PipelineSpec& spec, bool json) {
  std::map<std::string, std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) base_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  bool ok = true;
  for (const auto& s : spec.services) {
    if (!preflight::ParseLaunchCommand(s.argv).ok()) continue;
    preflight::PreflightRequest req;
    req.command = s.argv;
    req.env = base_env;
    for (const auto& [k, v] : s.env) req.env[k] = v;
    if (s.gpus_set) {
      std::string devices;
      for (int g : s.gpus) devices += (devices.empty() ? "" : ",") + std::to_string(g);
      req.env["CUDA_VISIBLE_DEVICES"] = devices;
    }
    req.check_port = true;
    auto report = preflight::RunPreflight(req);
    if (!report.ok()) {
      std::cerr << "faultline: preflight of " << s.name << " skipped: " << report.status().message() << "\n";
      continue;
    }
    if (report->blocking()) {
      std::cerr << "faultline: preflight of " << s.name
                << " found a blocking problem; not starting (--no-preflight to "
                   "start anyway)\n";
      if (json) {
        std::cout << preflight::WriteJson(*report) << "\n";
      } else {
        std::cout << preflight::WriteText(*report);
      }
      ok = false;
    }
  }
  return ok;
}

// A message of several lines, each as its own "faultline: " line.
void PrintLines(const std::string& message) {
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    std::cerr << "faultline: " << message.substr(start, end == std::string::npos ? std::string::npos : end - start)
              << "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

int RunRun(RunArgs& a) {
  if (a.file.empty() == a.command.empty()) {
    std::cerr << "faultline: run needs either -f pipeline.yaml or -- COMMAND...\n";
    return kExitUsage;
  }
  double stall_after = 300, grace = 10;
  supervise::SupervisorOptions options;
  if (!live::Duration("--stall-after", a.stall_after, &stall_after, true) ||
      !live::Duration("--grace", a.grace, &grace) ||
      !live::Duration("--status-every", a.status_every, &options.status_interval) ||
      !live::Duration("--interval", a.interval, &options.sample_interval, true)) {
    return kExitUsage;
  }
  if (!a.dashboard.empty()) {
    // Before anything starts: a bad or busy dashboard address is an error, not a job without its page.
    Status listen = web::CheckListenAddress(a.dashboard);
    if (!listen.ok()) {
      std::cerr << "faultline: --dashboard " << listen.message() << "\n";
      return kExitUsage;
    }
  }
  supervise::PipelineSpec spec;
  if (!a.file.empty()) {
    auto loaded = supervise::LoadPipelineFile(a.file);
    if (!loaded.ok()) {
      PrintLines(loaded.status().message());  // every mistake of the file, one a line
      return kExitUsage;
    }
    spec = std::move(*loaded);
    if (!a.no_gpu) {
      // GPU indexes the node does not have, when nvidia-smi can say (a child
      // process: NVML's threads must not exist before the supervisor forks).
      if (auto inventory = probe::NewNvidiaSmiSource()->Read(); inventory.ok()) {
        if (Status st = supervise::CheckGpusOnNode(spec, static_cast<int>(inventory->gpus.size())); !st.ok()) {
          PrintLines(st.message());
          return kExitUsage;
        }
      }
    }
    for (const auto& note : spec.notes) std::cerr << "faultline: " << note << "\n";
    if (!a.stall_after.empty()) spec.stall_after = stall_after;
    if (!a.grace.empty()) spec.grace_period = grace;
  } else {
    spec = supervise::SingleCommandPipeline(a.command, stall_after, grace);
  }
  auto rules = live::LoadRules(a.stall_rules);
  if (!rules.ok()) {
    std::cerr << "faultline: " << rules.status().message() << "\n";
    return kExitUsage;
  }
  if (!metrics_flags::Check(&a.metrics)) return kExitUsage;
  if (!a.no_preflight && !Preflight(spec, a.json)) return kExitDiagnosed;
  options.runs_dir = a.runs_dir;
  options.stacks = !a.no_stacks;
  options.json = a.json;
  auto gpu = live::GpuSource(a.no_gpu);
  std::unique_ptr<web::Dashboard> dashboard;
  if (!a.dashboard.empty()) {
    // Started from the supervisor's hook: after its keeper process is forked
    // (no threads may exist then), before the first service starts.
    options.on_run_dir = [&](const std::string& run_dir) {
      auto started =
          web::StartDashboardFor(a.dashboard, run_dir, a.dashboard_token, /*allow_control=*/false, std::cerr);
      if (started.ok())
        dashboard = std::move(*started);
      else
        std::cerr << "faultline: dashboard: " << started.status().message() << "\n";
    };
    // The page plots the samples the run records; record them more often.
    if (a.status_every == "10s") options.status_interval = 2;
  }
  {
    auto previous = options.on_run_dir;
    options.on_run_dir = [previous](const std::string& run_dir) {
      metrics_flags::WriteSchedulerFile(run_dir);
      if (previous) previous(run_dir);
    };
  }
  std::unique_ptr<metrics::MetricsOutput> metrics;
  if (a.metrics.enabled()) {
    // Threads start after the keeper fork, as the dashboard's do; run_id is the run directory's name.
    auto previous = options.on_run_dir;
    options.on_run_dir = [&, previous](const std::string& run_dir) {
      if (previous) previous(run_dir);
      std::string run_id = std::filesystem::path(run_dir).filename().string();
      metrics = metrics_flags::Start(a.metrics, run_id, spec.name, *rules);
    };
    options.on_record = [&](const nlohmann::json& record) {
      if (metrics) metrics->Apply(record);
    };
  }
  auto result = supervise::RunPipeline(spec, *rules, options, gpu.get(), live::Diagnoser(a.color));
  if (metrics) metrics->Finish(a.metrics.linger_seconds);
  if (!result.ok()) {
    std::cerr << "faultline: " << result.status().message() << "\n";
    return kExitUsage;
  }
  return result->exit_code;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run",
                                     "Run a command (-- CMD...) or a pipeline (-f pipeline.yaml); on a "
                                     "death or stall, diagnose and stop it all");
  cmd->footer(
      HelpFooter("faultline run --log-ready \"Application startup complete\" -- vllm "
                 "serve facebook/opt-125m",
                 "0 the job (or pipeline) succeeded, 1 it died or stalled (diagnosis "
                 "printed), 2 usage or input error, 130 interrupted"));
  cmd->add_option("-f,--file", args->file, "pipeline file (services and jobs; see docs/pipeline.md)");
  cmd->add_option("command", args->command, "the command to run, after --");
  cmd->add_option("--stall-after", args->stall_after, "stalled when nothing progresses for this long (default 5m)");
  cmd->add_option("--grace", args->grace, "SIGTERM, then SIGKILL after this long (default 10s)");
  cmd->add_option("--runs-dir", args->runs_dir, "where run directories are made")->capture_default_str();
  cmd->add_option("--status-every", args->status_every, "status line interval (0 = none)")->capture_default_str();
  cmd->add_option("--interval", args->interval, "sampling interval")->capture_default_str();
  cmd->add_option("--stall-rules", args->stall_rules, "stall classes file instead of the built-in rules/stall.yaml");
  cmd->add_option("--color", args->color, "auto, always, never")->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--json", args->json,
                "faultline.live/1 records (JSON Lines) on stdout; program "
                "output on stderr");
  cmd->add_flag("--no-preflight", args->no_preflight, "start even when preflight finds a blocking problem");
  cmd->add_flag("--no-gpu", args->no_gpu, "do not sample GPUs");
  cmd->add_flag(
      "--no-stacks", args->no_stacks,
      "do not put faultline's bootstrap sitecustomize on Python children's PYTHONPATH (no stacks on a stall)");
  cmd->add_option("--dashboard", args->dashboard,
                  "serve a live page of this run on HOST:PORT, e.g. "
                  "127.0.0.1:8765 (docs/dashboard.md)");
  cmd->add_option("--dashboard-token", args->dashboard_token,
                  "token every dashboard request must carry (required off loopback; generated when omitted)");
  metrics_flags::AddOptions(cmd, &args->metrics);
  cmd->callback([args, exit_code]() { *exit_code = RunRun(*args); });
}

FAULTLINE_REGISTER_COMMAND(30, AddRunCommand);

}  // namespace faultline::cli
