// --metrics HOST:PORT, --metrics-textfile DIR and --metrics-linger D for
// run, watch and wait-ready (docs/metrics.md): the options, their checks,
// and the start of the output. Header-only so each command stays one file.
#ifndef FAULTLINE_CLI_METRICS_SUPPORT_H_
#define FAULTLINE_CLI_METRICS_SUPPORT_H_

#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "supervise/duration.h"
#include "supervise/stall_rules.h"
#include "web/dashboard.h"
#include "web/metrics_output.h"

namespace faultline::cli::metrics_flags {

struct MetricsArgs {
  std::string listen;    // --metrics
  std::string textfile;  // --metrics-textfile
  std::string linger = "30s";
  double linger_seconds = 30;
  bool enabled() const { return !listen.empty() || !textfile.empty(); }
};

inline void AddOptions(CLI::App *cmd, MetricsArgs *a) {
  cmd->add_option("--metrics", a->listen,
                  "serve Prometheus metrics on HOST:PORT/metrics, e.g. "
                  "0.0.0.0:9464 (docs/metrics.md)");
  cmd->add_option("--metrics-textfile", a->textfile,
                  "write DIR/faultline_<run_id>.prom for node_exporter's "
                  "textfile collector");
  cmd->add_option("--metrics-linger", a->linger, "after the end, serve until the next scrape, at most this long")
      ->capture_default_str();
}

// Checks the options before anything starts; prints the error and returns false
// (exit 2).
inline bool Check(MetricsArgs *a) {
  if (!a->listen.empty()) {
    std::string host;
    int port = 0;
    if (!web::ParseListenAddress(a->listen, &host, &port)) {
      std::cerr << "faultline: --metrics " << a->listen << ": expected HOST:PORT (e.g. 0.0.0.0:9464)\n";
      return false;
    }
  }
  auto d = supervise::ParseDuration(a->linger);
  if (!d.ok()) {
    std::cerr << "faultline: --metrics-linger: " << d.status().message() << "\n";
    return false;
  }
  a->linger_seconds = *d;
  if (!a->textfile.empty() && (access(a->textfile.c_str(), W_OK) != 0 || !std::filesystem::is_directory(a->textfile))) {
    std::cerr << "faultline: --metrics-textfile " << a->textfile << ": not a writable directory\n";
    return false;
  }
  return true;
}

inline std::vector<std::string> Phases(const supervise::StallRules &rules) {
  std::vector<std::string> out;
  for (const auto &m : rules.phase_markers) {
    if (std::find(out.begin(), out.end(), m.phase) == out.end()) out.push_back(m.phase);
  }
  return out;
}

// watch and wait-ready have no run directory: watch-<host>-<pid>-<UTC time>.
inline std::string WatchRunId() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  time_t now = time(nullptr);
  tm t;
  gmtime_r(&now, &t);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &t);
  return fmt::format("watch-{}-{}-{}", host, getpid(), stamp);
}

// <run_dir>/scheduler.json: the scheduler's labels of this node (job_id, node_id, rank, pod), so that
// `faultline triage` over a job directory knows which node each run directory is (input/job_layout.h).
inline void WriteSchedulerFile(const std::string &run_dir) {
  auto id = metrics::LocalIdentity("", "", {});
  if (id.scheduler.empty()) return;
  nlohmann::json j = nlohmann::json::object();
  for (const auto &[k, v] : id.scheduler) j[k] = v;
  j["hostname"] = id.hostname;
  std::ofstream(run_dir + "/scheduler.json") << j.dump(2) << "\n";
}

// nullptr (with the reason printed) when the endpoint cannot start.
inline std::unique_ptr<metrics::MetricsOutput> Start(const MetricsArgs &a, std::string run_id, std::string pipeline,
                                                     const supervise::StallRules &rules) {
  auto out = metrics::MetricsOutput::Start(
      a.listen, a.textfile, metrics::LocalIdentity(std::move(run_id), std::move(pipeline), Phases(rules)), std::cerr);
  if (!out.ok()) {
    std::cerr << "faultline: metrics: " << out.status().message() << "\n";
    return nullptr;
  }
  return std::move(*out);
}

}  // namespace faultline::cli::metrics_flags

#endif  // FAULTLINE_CLI_METRICS_SUPPORT_H_
