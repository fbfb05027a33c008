#include "supervise/live_record.h"

#include <fmt/format.h>
#include <time.h>

#include <cmath>

namespace faultline::supervise {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kReady:
      return "ready";
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kDied:
      return "died";
    case Outcome::kStalled:
      return "stalled";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kInterrupted:
      return "interrupted";
  }
  return "unknown";
}

bool IsFailure(Outcome o) { return o == Outcome::kDied || o == Outcome::kStalled || o == Outcome::kTimeout; }

std::string IsoTime(int64_t wall_millis) {
  time_t secs = static_cast<time_t>(wall_millis / 1000);
  tm t;
  gmtime_r(&secs, &t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                     t.tm_min, t.tm_sec, wall_millis % 1000);
}

namespace {

double Round1(double v) { return std::round(v * 10) / 10; }

}  // namespace

nlohmann::json StatusRecord(const Monitor& m, const std::string& service, double elapsed) {
  using nlohmann::json;
  const probe::LiveSample& s = m.last();
  json j = {{"schema", kLiveSchema},
            {"type", "status"},
            {"time", IsoTime(s.wall_millis)},
            {"service", service},
            {"elapsed_s", Round1(elapsed)}};
  std::string phase = m.Phase();
  j["phase"] = phase.empty() ? json(nullptr) : json(phase);
  j["progress"] = {{"seconds_since", Round1(m.SecondsSinceProgress())}, {"last", m.last_progress()}};
  auto cpu = m.CpuPercent();
  json procs = json::array();
  for (const auto& p : s.tree.processes) {
    json wf = json::array();
    for (const auto& w : p.weight_files) {
      wf.push_back(
          {{"path", w.path}, {"size", w.size}, {"pos", w.pos < 0 ? json(nullptr) : json(w.pos)}, {"mapped", w.mapped}});
    }
    json jp = {
        {"pid", p.pid},
        {"ppid", p.ppid},
        {"comm", p.comm},
        {"state", std::string(1, p.state)},
        {"cpu_percent", Round1(cpu.count(p.pid) ? cpu[p.pid] : 0)},
        {"cpu_seconds", Round1(p.cpu_seconds)},
        {"rss_bytes", p.rss_bytes},
        {"threads", p.threads},
        {"read_bytes", p.io ? json(p.io->read_bytes) : json(nullptr)},
        {"rchar", p.io ? json(p.io->rchar) : json(nullptr)},
        {"open_fds", p.open_fds},
        {"weight_files", wf},
        {"tcp", {{"listening", p.tcp_listening}, {"connecting", p.tcp_connecting}, {"established", p.tcp_established}}},
        {"wchan", p.thread_states.wchan}};
    procs.push_back(std::move(jp));
  }
  j["processes"] = std::move(procs);
  if (s.log) {
    double idle = s.log->last_output_time ? s.time - *s.log->last_output_time : -1;
    j["log"] = {{"path", s.log->path},
                {"exists", s.log->exists},
                {"lines", s.log->lines},
                {"bytes", s.log->bytes},
                {"idle_s", idle < 0 ? json(nullptr) : json(Round1(idle))},
                {"last_line", s.log->last_line},
                {"rotations", s.log->rotations}};
  } else {
    j["log"] = nullptr;
  }
  json caches = json::array();
  for (const auto& c : s.caches) {
    caches.push_back(
        {{"name", c.name}, {"path", c.path}, {"exists", c.exists}, {"files", c.files}, {"bytes", c.bytes}});
  }
  j["caches"] = std::move(caches);
  json gpu = {{"available", s.gpu.available}, {"source", s.gpu.source}};
  if (!s.gpu.available) gpu["note"] = s.gpu.note;
  json devices = json::array();
  for (const auto& d : s.gpu.devices) {
    json jd = {{"index", d.index},
               {"memory_used_bytes", d.memory_used_bytes < 0 ? json(nullptr) : json(d.memory_used_bytes)},
               {"memory_total_bytes", d.memory_total_bytes < 0 ? json(nullptr) : json(d.memory_total_bytes)},
               {"utilization_percent", d.utilization_percent < 0 ? json(nullptr) : json(d.utilization_percent)}};
    if (!d.uuid.empty()) jd["uuid"] = d.uuid;  // the labels metrics join DCGM's series on
    if (!d.name.empty()) jd["name"] = d.name;
    devices.push_back(std::move(jd));
  }
  gpu["devices"] = std::move(devices);
  json gp = json::array();
  for (const auto& p : s.gpu.processes) {
    gp.push_back({{"pid", p.pid},
                  {"gpu", p.gpu_index},
                  {"memory_used_bytes", p.memory_used_bytes < 0 ? json(nullptr) : json(p.memory_used_bytes)}});
  }
  gpu["processes"] = std::move(gp);
  j["gpu"] = std::move(gpu);
  return j;
}

nlohmann::json EventRecord(const std::string& event, const std::string& service, int64_t wall_millis,
                           nlohmann::json fields) {
  nlohmann::json j = {{"schema", kLiveSchema},
                      {"type", "event"},
                      {"time", IsoTime(wall_millis)},
                      {"service", service},
                      {"event", event}};
  for (auto& [k, v] : fields.items()) j[k] = v;
  return j;
}

nlohmann::json StallJson(const StallDiagnosis& d) {
  nlohmann::json j = {{"class", d.class_id},          {"title", d.title},
                      {"explanation", d.explanation}, {"evidence", d.evidence},
                      {"suggestions", d.suggestions}, {"matched", d.matched},
                      {"last_phase", d.last_phase},   {"stalled_for_s", Round1(d.stalled_for_seconds)}};
  if (d.stacks) j["stacks"] = StacksJson(*d.stacks);
  return j;
}

nlohmann::json DiagnosisRecord(const JobEnd& end, int64_t wall_millis, const nlohmann::json& triage) {
  using nlohmann::json;
  json j = {{"schema", kLiveSchema},
            {"type", "diagnosis"},
            {"time", IsoTime(wall_millis)},
            {"service", end.service},
            {"outcome", OutcomeName(end.outcome)},
            {"pid", end.pid},
            {"exit_code", end.exit_code ? json(*end.exit_code) : json(nullptr)},
            {"signal", end.term_signal ? json(*end.term_signal) : json(nullptr)},
            {"elapsed_s", Round1(end.elapsed_seconds)},
            {"detail", end.detail},
            {"log_path", end.log_path.empty() ? json(nullptr) : json(end.log_path)},
            {"stall", end.stall ? StallJson(*end.stall) : json(nullptr)},
            {"triage", triage}};
  if (end.outcome == Outcome::kDied) {
    j["kernel"] = {{"explain", end.kernel_explain.empty() ? json(nullptr) : json(end.kernel_explain)},
                   {"lines", end.kernel_lines},
                   {"notes", end.kernel_notes}};
  }
  if (end.log_incomplete_from >= 0) {
    j["log_incomplete"] = {{"from_byte", end.log_incomplete_from}, {"error", end.log_write_error}};
  }
  return j;
}

std::string StatusLine(const Monitor& m, const std::string& service, double elapsed) {
  FeatureSet f = m.Features(5);
  const probe::LiveSample& s = m.last();
  std::string phase = m.Phase();
  std::string line =
      fmt::format("[{:>7.1f}s] {}  phase {} | {} procs, cpu {}%, rss {}", elapsed, service, phase.empty() ? "?" : phase,
                  f.Display("processes"), f.Display("max_cpu_percent"), f.Display("rss_total"));
  if (f.Number("busy_processes") > 1) line += fmt::format(" ({} busy)", f.Display("busy_processes"));
  if (f.Number("any_read_rate") > 0) line += fmt::format(" | read {}/s", f.Display("any_read_rate"));
  if (f.Number("weight_files_open") > 0) line += fmt::format(" | weights {}", f.Display("weight_read_progress"));
  if (f.Number("write_rate") >= 1 << 20) line += fmt::format(" | write {}/s", f.Display("write_rate"));
  if (s.log) {
    line += fmt::format(" | log {} lines", s.log->lines);
    if (s.log->lines == 0 && s.log->bytes == 0 && elapsed >= 10) line += " (empty: output may be buffered)";
    if (s.log->last_output_time) line += fmt::format(", last {} ago", HumanSeconds(s.time - *s.log->last_output_time));
  }
  if (f.Number("compile_workers") > 0) line += fmt::format(" | {} compile workers", f.Display("compile_workers"));
  if (s.gpu.available)
    line += fmt::format(" | gpu {} util {}%", f.Display("gpu_memory_used"), f.Display("gpu_util_max"));
  double since = m.SecondsSinceProgress();
  if (since >= 5) line += fmt::format(" | no progress for {}", HumanSeconds(since));
  return line;
}

void PrintStall(const StallDiagnosis& d, std::ostream& out) {
  out << fmt::format("Stall class: {} ({})\n", d.title, d.class_id);
  if (!d.explanation.empty()) out << "  " << d.explanation << "\n";
  if (!d.evidence.empty()) {
    out << "Evidence:\n";
    for (const auto& e : d.evidence) out << "  - " << e << "\n";
  }
  if (!d.matched.empty()) {
    out << "Why this class:\n";
    for (const auto& e : d.matched) out << "  - " << e << "\n";
  }
  if (!d.suggestions.empty()) {
    out << "Try:\n";
    for (const auto& e : d.suggestions) out << "  - " << e << "\n";
  }
  if (d.stacks) out << StacksText(*d.stacks);
}

std::string EndHeadline(const JobEnd& end) {
  std::string who = end.service.empty() ? fmt::format("process {}", end.pid) : end.service;
  switch (end.outcome) {
    case Outcome::kReady:
      return fmt::format("faultline: {} is ready after {} ({})", who, HumanSeconds(end.elapsed_seconds), end.detail);
    case Outcome::kCompleted:
      return fmt::format("faultline: {} completed after {}", who, HumanSeconds(end.elapsed_seconds));
    case Outcome::kDied:
      if (!end.exit_code && !end.term_signal && end.detail.find("exit status unknown") != std::string::npos) {
        return fmt::format("faultline: {} exited after {} ({})", who, HumanSeconds(end.elapsed_seconds), end.detail);
      }
      return fmt::format("faultline: {} died after {} ({}){}", who, HumanSeconds(end.elapsed_seconds), end.detail,
                         end.kernel_explain.empty() ? "" : ": " + end.kernel_explain);
    case Outcome::kStalled:
      return fmt::format("faultline: {} STALLED: no progress for {} (last phase: {})", who,
                         HumanSeconds(end.stall ? end.stall->stalled_for_seconds : 0),
                         end.stall ? end.stall->last_phase : "unknown");
    case Outcome::kTimeout:
      return fmt::format("faultline: {} not ready after {} (timeout)", who, HumanSeconds(end.elapsed_seconds));
    case Outcome::kInterrupted:
      return fmt::format("faultline: {} interrupted after {} ({})", who, HumanSeconds(end.elapsed_seconds), end.detail);
  }
  return "faultline: ?";
}

}  // namespace faultline::supervise
