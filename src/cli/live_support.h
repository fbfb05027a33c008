// What run, watch and wait-ready share: loading the stall rules, the GPU
// source, the log diagnoser (triage of a log, printed and as JSON), and the
// printing of a job's end. Header-only so each command stays one file.
#ifndef FAULTLINE_CLI_LIVE_SUPPORT_H_
#define FAULTLINE_CLI_LIVE_SUPPORT_H_

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "diagnosis/triage.h"
#include "probe/live_clock.h"
#include "probe/live_gpu.h"
#include "probe/live_gpu_inventory.h"
#include "report/printers.h"
#include "rules/redactor.h"
#include "supervise/duration.h"
#include "supervise/job_end.h"
#include "supervise/live_record.h"
#include "supervise/stall_rules.h"
#include "supervise/supervisor.h"

namespace faultline::cli::live {

inline Result<supervise::StallRules> LoadRules(const std::string& file) {
  return file.empty() ? supervise::BuiltinStallRules() : supervise::LoadStallRulesFile(file);
}

inline std::unique_ptr<probe::GpuUsageSource> GpuSource(bool disabled) {
  if (disabled) return std::make_unique<probe::NoGpuSource>("GPU sampling disabled (--no-gpu)");
  return probe::NewLocalGpuUsageSource(probe::RealClock());
}

// Parses a duration option into *seconds; prints the error and returns false.
// positive: 0 is refused too (a sampling interval of 0 would spin).
inline bool Duration(const std::string& name, const std::string& text, double* seconds, bool positive = false) {
  if (text.empty()) return true;
  auto d = supervise::ParseDuration(text);
  if (!d.ok()) {
    std::cerr << "faultline: " << name << ": " << d.status().message() << "\n";
    return false;
  }
  if (positive && *d < 0.01) {
    std::cerr << "faultline: " << name << ": '" << text << "' is too short (at least 10ms)\n";
    return false;
  }
  *seconds = *d;
  return true;
}

// True when every --pid names a live process; else prints why (exit 2).
inline bool PidsExist(const std::vector<int64_t>& pids) {
  for (int64_t pid : pids) {
    if (pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::cerr << "faultline: --pid " << pid << ": no such process\n";
      return false;
    }
  }
  return true;
}

inline supervise::LogDiagnoser Diagnoser(const std::string& color) {
  return [color](const std::string& log_path, bool print_text, std::ostream& out,
                 supervise::Outcome outcome) -> nlohmann::json {
    diagnosis::TriageOptions options;
    options.inputs = {log_path};
    auto report = diagnosis::Triage(options);
    if (!report.ok()) {
      if (print_text) out << "(no diagnosis of " << log_path << ": " << report.status().message() << ")\n";
      return nullptr;
    }
    // A death the log does not explain is explained by how it died (the
    // headline above: the signal, the kernel's record); it is never a stall.
    if (outcome == supervise::Outcome::kDied && !report->root_cause) {
      report->stall_hints.clear();
      if (print_text) {
        if (report->total_lines == 0) {
          out << "the log is empty: the job printed nothing, or buffered its output and died before flushing it\n";
        } else {
          out << fmt::format("the log shows no error ({} line(s){}); the end is explained above\n", report->total_lines,
                             report->last_phase ? ", last phase " + *report->last_phase : std::string());
        }
        out.flush();
      }
      report->verdict = report::Verdict::kHealthy;
      report->stall_hints.push_back("the log shows no error; the process ended as the diagnosis says");
      return report::ToJson(*report);
    }
    // The live monitor already classified the stall: no "watch it" hint.
    std::vector<std::string> hints;
    for (auto& h : report->stall_hints) {
      if (h.find("faultline watch") == std::string::npos) hints.push_back(std::move(h));
    }
    report->stall_hints = std::move(hints);
    // Called only when the live monitor saw the job die or stall: a log
    // that shows no error is then not "healthy", whatever phase it reached.
    if (report->verdict == report::Verdict::kHealthy) {
      report->verdict = report::Verdict::kStalled;
      report->stall_hints.push_back(
          fmt::format("the log shows no error (it reached {}); the live signals above tell why the job stopped",
                      report->last_phase.value_or("no known phase")));
    }
    if (print_text) {
      report::TextOptions text;
      text.color = report::ShouldColor(color, STDOUT_FILENO);
      text.width = report::TerminalWidth(STDOUT_FILENO);
      text.wrap_lines = ::isatty(STDOUT_FILENO) == 1;
      std::ostringstream shown;
      report::PrintText(*report, text, shown);
      out << rules::Secrets().Text(shown.str());  // the redaction choke point
      out.flush();
    }
    return report::ToJson(*report);
  };
}

// Prints how a watch ended: the headline, the stall, and the log's diagnosis
// (text, or one faultline.live/1 diagnosis record with --json). Returns the
// triage JSON (null when there is no log).
inline nlohmann::json PrintEnd(const supervise::JobEnd& end, bool json, const std::string& color) {
  nlohmann::json triage = nullptr;
  if (!json) {
    std::cout << supervise::EndHeadline(end) << "\n";
    if (end.stall) supervise::PrintStall(*end.stall, std::cout);
    if (!end.log_path.empty()) std::cout << "\nDiagnosis of " << end.log_path << ":\n";
    std::cout.flush();
  }
  if (!end.log_path.empty()) triage = Diagnoser(color)(end.log_path, !json, std::cout, end.outcome);
  if (json) {
    std::cout << rules::Secrets().JsonLine(supervise::DiagnosisRecord(end, probe::RealClock()->WallMillis(), triage))
              << "\n";
  }
  std::cout.flush();
  return triage;
}

}  // namespace faultline::cli::live

#endif  // FAULTLINE_CLI_LIVE_SUPPORT_H_
