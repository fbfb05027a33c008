// RunPipeline: `faultline run` — starts the services and jobs of a pipeline
// in dependency order, tees each one's output to the terminal and to
// runs/<time>-<name>/<service>.log, watches each tree (Monitor), and ends at
// the first failure: a service exiting, a job failing, a readiness timeout, a
// stall. Then it prints the diagnosis at once, stops everything it started
// (SIGTERM, SIGKILL after the grace period), and returns the exit code:
// 0 all jobs completed, 1 failure diagnosed, 130 interrupted (Ctrl-C).
//
// Nothing leaks: each child is a process-group leader with
// PR_SET_PDEATHSIG(SIGKILL); faultline is a child subreaper (orphans come
// back to it and are swept at the end); a Keeper process stops everything if
// faultline itself is killed.
#ifndef FAULTLINE_SUPERVISE_SUPERVISOR_H_
#define FAULTLINE_SUPERVISE_SUPERVISOR_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "probe/live_gpu.h"
#include "supervise/job_end.h"
#include "supervise/pipeline_spec.h"
#include "supervise/stall_rules.h"
#include "util/status.h"

namespace faultline::supervise {

// Diagnoses a log: prints the human report to out when print_text, and
// returns the faultline.triage/1 JSON (null when the log could not be read).
// outcome: how the job ended (a death is never called a stall).
using LogDiagnoser =
    std::function<nlohmann::json(const std::string& log_path, bool print_text, std::ostream& out, Outcome outcome)>;

struct SupervisorOptions {
  std::string runs_dir = "runs";
  double sample_interval = 1.0;
  double status_interval = 10;  // 0: no status lines
  bool json = false;            // faultline.live/1 records on `out`; children's output on stderr
  std::ostream* out = nullptr;  // diagnosis and records (default std::cout)
  std::ostream* err = nullptr;  // status lines and events (default std::cerr)
  // Called once the run directory exists and the keeper is forked, before
  // any process starts: the place to start threads (the dashboard).
  std::function<void(const std::string& run_dir)> on_run_dir;
  // Python children get faultline's bootstrap sitecustomize (stack capture
  // on a stall); false: --no-stacks.
  bool stacks = true;
  // Every faultline.live/1 record as live.jsonl gets it, plus a status record
  // of each service at every sample (not only every status_interval): what
  // --metrics renders. Called on the supervising thread.
  std::function<void(const nlohmann::json& record)> on_record;
};

struct RunResult {
  int exit_code = 0;
  std::string run_dir;
  std::vector<JobEnd> ends;  // the failure first, when there is one
};

// Returns a Status only for errors before anything ran well (run directory,
// command not found).
Result<RunResult> RunPipeline(const PipelineSpec& spec, const StallRules& rules, const SupervisorOptions& options,
                              probe::GpuUsageSource* gpu, const LogDiagnoser& diagnose);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_SUPERVISOR_H_
