// The faultline.live/1 records (JSON Lines) and their human forms. This is
// the only module that writes live JSON; docs/live.schema.json specifies it.
//
// Record types (field "type"):
//   status    — one per interval per job: phase, progress, processes, log,
//               caches, GPUs;
//   event     — started, ready, exited, stopping, stopped, ...;
//   diagnosis — the end: outcome, exit code, the stall class with evidence,
//               and the faultline.triage/1 report of the log when there is one.
#ifndef FAULTLINE_SUPERVISE_LIVE_RECORD_H_
#define FAULTLINE_SUPERVISE_LIVE_RECORD_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "supervise/job_end.h"
#include "supervise/monitor.h"

namespace faultline::supervise {

inline constexpr char kLiveSchema[] = "faultline.live/1";

std::string IsoTime(int64_t wall_millis);

nlohmann::json StatusRecord(const Monitor& m, const std::string& service, double elapsed_seconds);
nlohmann::json EventRecord(const std::string& event, const std::string& service, int64_t wall_millis,
                           nlohmann::json fields = nlohmann::json::object());
nlohmann::json StallJson(const StallDiagnosis& d);
// triage: the faultline.triage/1 object, or null.
nlohmann::json DiagnosisRecord(const JobEnd& end, int64_t wall_millis, const nlohmann::json& triage);

// "[ 12.0s] vllm  phase weight-loading | 5 procs, cpu 400%, rss 6.0 GiB | ..."
std::string StatusLine(const Monitor& m, const std::string& service, double elapsed_seconds);
// The stall part of a diagnosis, for people.
void PrintStall(const StallDiagnosis& d, std::ostream& out);
// The first line of a diagnosis: "faultline: vllm died (exit code 1) after 12.3 s".
std::string EndHeadline(const JobEnd& end);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_LIVE_RECORD_H_
