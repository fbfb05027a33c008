#include "web/run_dir.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "supervise/stall_rules.h"

namespace faultline::web {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxSamples = 3600;
constexpr int64_t kLiveStep = 16 << 20;
constexpr size_t kMaxRecord = 4 << 20;

// The phases of the built-in stall rules: every value faultline_service_phase can take.
const std::vector<std::string>& BuiltinPhases() {
  static const std::vector<std::string> phases = [] {
    std::vector<std::string> out;
    auto rules = supervise::BuiltinStallRules();
    if (rules.ok()) {
      for (const auto& m : rules->phase_markers) {
        if (std::find(out.begin(), out.end(), m.phase) == out.end()) out.push_back(m.phase);
      }
    }
    return out;
  }();
  return phases;
}

int64_t MtimeMillis(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

bool IsFailureOutcome(const std::string& o) { return o == "died" || o == "stalled" || o == "timeout"; }

template <typename T>
std::optional<T> OptionalField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// A string field of a JSON value of unknown shape; "" when absent or not a string.
std::string StrField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

nlohmann::json Iso(int64_t ms) {
  if (ms < 0) return nullptr;
  time_t secs = static_cast<time_t>(ms / 1000);
  tm t;
  gmtime_r(&secs, &t);
  char buf[64];
  snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
           t.tm_hour, t.tm_min, t.tm_sec, static_cast<int>(ms % 1000));
  return std::string(buf);
}

}  // namespace

int64_t ParseIsoMillis(const std::string& iso) {
  tm t{};
  int ms = 0;
  int n = sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
                 &t.tm_sec, &ms);
  if (n < 6) return -1;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&t)) * 1000 + ms;
}

std::string ResolveRunDir(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return "";
  bool has_logs = false;
  std::string newest;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file(ec) && (e.path().extension() == ".log" || e.path().filename() == "live.jsonl")) {
      has_logs = true;
    } else if (e.is_directory(ec) && fs::exists(e.path() / "live.jsonl", ec)) {
      // Run directories are named <YYYYmmdd-HHMMSS>-<name>: the newest sorts last.
      std::string p = e.path().string();
      if (newest.empty() || e.path().filename().string() > fs::path(newest).filename().string()) newest = p;
    }
  }
  if (has_logs || newest.empty()) return path;
  return newest;
}

RunDir::RunDir(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  // The run's own scheduler labels are not known here (a dashboard runs after, elsewhere): run_id names it.
  metrics::Identity id;
  id.run_id = fs::path(dir_).filename().string();
  id.pipeline = name();
  id.version = FAULTLINE_VERSION;
  id.phases = BuiltinPhases();
  metrics_ = std::make_unique<metrics::RunMetrics>(std::move(id));
}

std::string RunDir::name() const {
  if (!run_name_.empty()) return run_name_;
  std::string base = fs::path(dir_).filename().string();
  // 20261129-092647-seed-pipeline -> seed-pipeline
  if (base.size() > 16 && base[8] == '-' && base[15] == '-') return base.substr(16);
  return base;
}

ServiceState& RunDir::Service(const std::string& name) {
  for (auto& s : services_) {
    if (s.name == name) return s;
  }
  services_.push_back(ServiceState{});
  services_.back().name = name;
  services_.back().log_path = dir_ + "/" + name + ".log";
  return services_.back();
}

const ServiceState* RunDir::service(const std::string& name) const {
  for (const auto& s : services_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool RunDir::Refresh() {
  changed_ = false;
  ScanLogs();
  ReadLive();
  ReadDiagnosisFile();
  return changed_;
}

void RunDir::ScanLogs() {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() == ".log" && e.is_regular_file(ec)) names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    if (!service(n)) {
      Service(n);
      changed_ = true;
    }
  }
  for (auto& s : services_) {
    struct stat st;
    if (stat(s.log_path.c_str(), &st) != 0) continue;
    int64_t mtime = MtimeMillis(st);
    if (st.st_size != s.log_bytes || mtime != s.log_mtime_ms) {
      s.log_bytes = st.st_size;
      s.log_mtime_ms = mtime;
      metrics_->ObserveLog(s.name, s.log_bytes);
      changed_ = true;
    }
  }
}

void RunDir::ReadLive() {
  std::string path = dir_ + "/live.jsonl";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return;
  if (st.st_size < live_offset_) {  // replaced: read it again from the start
    live_offset_ = 0;
    live_partial_.clear();
  }
  if (st.st_size == live_offset_) return;
  std::ifstream in(path, std::ios::binary);
  in.seekg(live_offset_);
  // A bounded step per refresh; a record longer than kMaxRecord is dropped.
  std::string chunk(static_cast<size_t>(std::min<int64_t>(st.st_size - live_offset_, kLiveStep)), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  live_offset_ += static_cast<int64_t>(chunk.size());
  live_partial_ += chunk;
  size_t start = 0;
  size_t nl;
  while ((nl = live_partial_.find('\n', start)) != std::string::npos) {
    std::string_view line(live_partial_.data() + start, nl - start);
    start = nl + 1;
    if (line.empty()) continue;
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) continue;
    try {
      Apply(record);
    } catch (const nlohmann::json::exception&) {
      // A field of the wrong type: the record is skipped, not the watcher.
    }
  }
  live_partial_.erase(0, start);
  if (live_partial_.size() > kMaxRecord) live_partial_.clear();
  changed_ = true;
}

void RunDir::Apply(const nlohmann::json& r) {
  metrics_->Apply(r);
  std::string type = r.value("type", "");
  std::string svc = r.value("service", "");
  int64_t t = ParseIsoMillis(r.value("time", ""));
  if (t >= 0 && (first_ms_ < 0 || t < first_ms_)) first_ms_ = t;
  if (type == "event") {
    std::string ev = r.value("event", "");
    if (ev == "stopped") {
      // The pipeline's end: everything still up was stopped.
      run_name_ = svc;
      finished_ = true;
      end_ms_ = t;
      for (auto& s : services_) {
        if (s.state == "running" || s.state == "ready" || s.state == "starting") s.state = "stopped";
        if (s.started_ms >= 0 && s.ended_ms < 0) s.ended_ms = t;
      }
      return;
    }
    if (ev == "stopping") return;
    ServiceState& s = Service(svc);
    if (ev == "started") {
      s.state = "running";
      s.started_ms = t;
      s.ended_ms = -1;
      s.pid = OptionalField<int64_t>(r, "pid");
      s.command = r.value("command", std::vector<std::string>{});
      s.gpus = r.value("gpus", std::vector<int>{});
      // Only a log inside the run directory: a record naming /etc/shadow is
      // not made a log the dashboard serves (the server checks again, with
      // symlinks resolved, before opening one).
      if (r.contains("log_path") && r["log_path"].is_string()) {
        fs::path lp = r["log_path"].get<std::string>();
        if (lp.is_relative()) lp = fs::path(dir_) / lp;
        fs::path rel = lp.lexically_normal().lexically_relative(fs::path(dir_).lexically_normal());
        if (!rel.empty() && *rel.begin() != ".." && rel != ".") s.log_path = lp.lexically_normal().string();
      }
    } else if (ev == "ready") {
      s.state = "ready";
      s.ready_seconds = OptionalField<double>(r, "seconds");
    } else if (ev == "exited") {
      s.exit_code = OptionalField<int>(r, "exit_code");
      s.term_signal = OptionalField<int>(r, "signal");
      s.state = (s.exit_code && *s.exit_code == 0) ? "completed" : "exited";
      s.ended_ms = t;
    }
  } else if (type == "status") {
    ServiceState& s = Service(svc);
    if (s.state == "unknown") s.state = "running";
    s.phase = r.contains("phase") && r["phase"].is_string() ? r["phase"].get<std::string>() : s.phase;
    s.last_status = r;
    s.last_status_ms = t;
    Sample sample;
    sample.time_ms = t;
    for (const auto& p : r.value("processes", nlohmann::json::array())) {
      sample.cpu_percent += p.value("cpu_percent", 0.0);
      sample.rss_bytes += p.value("rss_bytes", int64_t{0});
    }
    auto& q = samples_[svc];
    q.push_back(sample);
    if (q.size() > kMaxSamples) q.pop_front();
    if (r.contains("gpu") && r["gpu"].is_object()) {
      gpu_latest_ = r["gpu"];
      if (r["gpu"].value("available", false)) {
        if (gpu_samples_.empty() || gpu_samples_.back().time_ms != t) {
          gpu_samples_.push_back({t, r["gpu"].value("devices", nlohmann::json::array())});
          if (gpu_samples_.size() > kMaxSamples) gpu_samples_.pop_front();
        }
      }
    }
  } else if (type == "diagnosis") {
    ServiceState& s = Service(svc);
    std::string outcome = r.value("outcome", "");
    if (IsFailureOutcome(outcome)) {
      s.state = outcome;
      live_diagnosis_ = r;
    } else if (outcome == "completed" || outcome == "interrupted") {
      // The pipeline's end record; the services' own states stand.
    }
    if (s.ended_ms < 0 && (IsFailureOutcome(outcome) || outcome == "completed")) s.ended_ms = t;
    if (!s.exit_code) s.exit_code = OptionalField<int>(r, "exit_code");
    if (!s.term_signal) s.term_signal = OptionalField<int>(r, "signal");
    if (diagnosis_mtime_ < 0 && !live_diagnosis_.is_null() && diagnosis_ != live_diagnosis_) {
      diagnosis_ = live_diagnosis_;
      ++diagnosis_changes_;
    }
  }
}

void RunDir::ReadDiagnosisFile() {
  std::string path = dir_ + "/diagnosis.json";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return;
  int64_t mtime = MtimeMillis(st) ^ st.st_size;
  if (mtime == diagnosis_mtime_) return;
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;  // being written: next time
  diagnosis_mtime_ = mtime;
  if (!metrics_->ended()) metrics_->Apply(j);
  diagnosis_ = std::move(j);
  ++diagnosis_changes_;
  finished_ = true;
  changed_ = true;
}

nlohmann::json RunDir::RunJson(int64_t now_ms) const {
  using nlohmann::json;
  json services = json::array();
  for (const auto& s : services_) {
    json procs = json::array();
    double cpu = 0;
    int64_t rss = 0;
    bool have_sample = !s.last_status.is_null();
    if (have_sample) {
      const json& plist = s.last_status.contains("processes") ? s.last_status["processes"] : json::array();
      for (const auto& p : plist.is_array() ? plist : json::array()) {
        if (!p.is_object()) continue;
        try {
          procs.push_back({{"pid", p.value("pid", 0)},
                         {"ppid", p.value("ppid", 0)},
                         {"comm", p.value("comm", "")},
                         {"state", p.value("state", "?")},
                         {"cpu_percent", p.value("cpu_percent", 0.0)},
                         {"rss_bytes", p.value("rss_bytes", int64_t{0})},
                         {"threads", p.value("threads", 0)}});
          cpu += p.value("cpu_percent", 0.0);
          rss += p.value("rss_bytes", int64_t{0});
        } catch (const json::exception&) {
          // a field of the wrong type: this process is left out
        }
      }
    }
    int64_t end = s.ended_ms >= 0 ? s.ended_ms : (finished_ ? end_ms_ : now_ms);
    json uptime = s.started_ms >= 0 && end >= s.started_ms ? json((end - s.started_ms) / 1000.0) : json(nullptr);
    std::string phase = s.phase;
    if (phase.empty() && !diagnosis_.is_null() && StrField(diagnosis_, "service") == s.name) {
      const json& stall = diagnosis_.contains("stall") ? diagnosis_["stall"] : json(nullptr);
      const json& triage = diagnosis_.contains("triage") ? diagnosis_["triage"] : json(nullptr);
      if (stall.is_object()) phase = StrField(stall, "last_phase");
      if (phase.empty()) phase = StrField(triage, "last_phase");
    }
    json progress = nullptr;
    if (have_sample && s.last_status.contains("progress")) progress = s.last_status["progress"];
    services.push_back({{"name", s.name},
                        {"state", s.state},
                        {"pid", s.pid ? json(*s.pid) : json(nullptr)},
                        {"command", s.command},
                        {"gpus", s.gpus},
                        {"phase", phase.empty() ? json(nullptr) : json(phase)},
                        {"started", Iso(s.started_ms)},
                        {"ended", Iso(s.ended_ms)},
                        {"uptime_s", uptime},
                        {"ready_s", s.ready_seconds ? json(*s.ready_seconds) : json(nullptr)},
                        {"exit_code", s.exit_code ? json(*s.exit_code) : json(nullptr)},
                        {"signal", s.term_signal ? json(*s.term_signal) : json(nullptr)},
                        {"cpu_percent", have_sample ? json(cpu) : json(nullptr)},
                        {"rss_bytes", have_sample ? json(rss) : json(nullptr)},
                        {"sampled", Iso(s.last_status_ms)},
                        {"progress", progress},
                        {"processes", procs},
                        {"log", {{"path", s.log_path}, {"bytes", s.log_bytes}, {"modified", Iso(s.log_mtime_ms)}}}});
  }
  std::string state = finished_ ? "finished" : has_live() ? "running" : "logs-only";
  json outcome = nullptr;
  if (!diagnosis_.is_null()) {
    outcome = {{"outcome", StrField(diagnosis_, "outcome")},
               {"service", StrField(diagnosis_, "service")},
               {"detail", StrField(diagnosis_, "detail")}};
  }
  return {{"schema", "faultline.dashboard/1"},
          {"run_dir", dir_},
          {"name", name()},
          {"state", state},
          {"started", Iso(first_ms_)},
          {"ended", Iso(end_ms_)},
          {"now", Iso(now_ms)},
          {"outcome", outcome},
          {"services", services},
          {"gpu", gpu_latest_}};
}

nlohmann::json RunDir::SamplesJson() const {
  using nlohmann::json;
  json svc = json::object();
  for (const auto& [name, q] : samples_) {
    json arr = json::array();
    for (const auto& s : q) arr.push_back({{"t", s.time_ms}, {"cpu_percent", s.cpu_percent}, {"rss_bytes", s.rss_bytes}});
    svc[name] = std::move(arr);
  }
  json gpu = json::array();
  for (const auto& g : gpu_samples_) gpu.push_back({{"t", g.time_ms}, {"devices", g.devices}});
  json gproc = json::array();
  if (gpu_latest_.is_object()) gproc = gpu_latest_.value("processes", json::array());
  return {{"services", svc}, {"gpu", gpu}, {"gpu_processes", gproc}};
}

}  // namespace faultline::web
