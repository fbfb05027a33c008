#include "web/dashboard.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "rules/redactor.h"
#include "web/api.h"
#include "web/assets.h"
#include "web/http_server.h"
#include "web/line_index.h"
#include "web/metrics.h"
#include "web/run_dir.h"
#include "web/triage_cache.h"

namespace faultline::web {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every JSON answer (the run, samples, diagnosis, triage, log windows) and
// every event passes the redaction choke point: a run directory written by
// an older faultline, or a log line, may hold a secret in clear.
HttpResponse SendJson(const json& j, int status = 200) {
  return HttpResponse::Json(status, rules::Secrets().JsonLine(j));
}

HttpResponse SendError(int status, const std::string& message) { return HttpResponse::Error(status, message); }

int64_t IntParam(const HttpRequest& req, const char* key, int64_t fallback) {
  if (!req.has_param(key)) return fallback;
  try {
    return std::stoll(req.param(key));
  } catch (const std::exception&) {
    return fallback;
  }
}

// Whether `path`, symlinks resolved, lies inside `dir`: a live.jsonl naming
// /etc/shadow as a log, or a log symlinked out of the run, is not served.
bool InsideDir(const std::string& dir, const std::string& path) {
  std::error_code ec;
  fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  std::string ds = d.string();
  std::string ps = p.string();
  if (!ds.empty() && ds.back() != '/') ds += '/';
  return ps.size() > ds.size() && ps.compare(0, ds.size(), ds) == 0;
}

class DashboardImpl : public Dashboard {
 public:
  explicit DashboardImpl(DashboardOptions options) : options_(std::move(options)) {}

  ~DashboardImpl() override { Stop(); }

  Status Init() {
    std::string dir = ResolveRunDir(options_.run_dir);
    if (dir.empty()) return Status::NotFound(fmt::format("{}: not a directory", options_.run_dir));
    run_ = std::make_unique<RunDir>(dir);
    run_->Refresh();
    HttpServerOptions o;
    o.host = options_.host;
    o.port = options_.port;
    o.token = options_.token;
    o.handler = [this](const HttpRequest& req) { return Route(req); };
    auto server = HttpServer::Start(std::move(o));
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    port_ = server_->port();
    watcher_ = std::thread([this] { Watch(); });
    return Status::Ok();
  }

  int port() const override { return port_; }

  std::string url() const override {
    std::string host = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
    if (host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
    return fmt::format("http://{}:{}/{}", host, port_, options_.token.empty() ? "" : "?token=" + options_.token);
  }

  void Wait() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopping_; });
  }

  void Stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      stopping_ = true;
      stopped_ = true;
    }
    cv_.notify_all();
    if (watcher_.joinable()) watcher_.join();
    if (server_) server_->Stop();
  }

 private:
  // The log of a service, when it is inside the run directory; "" otherwise.
  std::string ServableLog(const ServiceState& s) const { return InsideDir(run_->dir(), s.log_path) ? s.log_path : ""; }

  HttpResponse Route(const HttpRequest& req) {
    const std::string& p = req.path;
    if (req.method == "POST") {
      if (p == "/api/control/stop") return Control(req);
      return SendError(405, "only GET here");
    }
    if (req.method != "GET" && req.method != "HEAD") return SendError(405, "only GET and POST");
    if (p == "/" || p == "/index.html" || p == "/app.js" || p == "/style.css") {
      const Asset* a = FindAsset(p);
      if (!a) return SendError(404, "no such page");
      HttpResponse r;
      r.content_type = a->content_type;
      r.body = std::string(a->body);
      r.headers.push_back({"Content-Security-Policy",
                           "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                           "connect-src 'self'; frame-ancestors 'none'"});
      return r;
    }
    if (p == "/api/run") return SendJson(RunJson());
    if (p == "/api/samples") {
      std::lock_guard<std::mutex> lock(run_mu_);
      return SendJson(run_->SamplesJson());
    }
    if (p == "/api/diagnosis") return SendJson(DiagnosisJson());
    if (p == "/api/triage") {
      std::string name = req.param("service");
      std::string path;
      int64_t bytes;
      json record;
      {
        std::lock_guard<std::mutex> lock(run_mu_);
        const ServiceState* s = run_->service(name);
        if (!s) return SendError(404, fmt::format("no service {}", name));
        path = ServableLog(*s);
        bytes = s->log_bytes;
        record = run_->diagnosis();
      }
      if (path.empty()) return SendError(403, fmt::format("the log of {} is outside the run directory", name));
      return SendJson(TriageFor(name, path, bytes, record));
    }
    if (p == "/api/log") return LogEndpoint(req);
    if (p == "/api/events") return Events();
    if (p == "/metrics") {
      HttpResponse r;
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      {
        std::lock_guard<std::mutex> lock(run_mu_);
        r.body = run_->metrics().Render();  // label values are redacted as they are recorded
      }
      return r;
    }
    return SendError(404, "not found");
  }

  HttpResponse Control(const HttpRequest& req) {
    if (!options_.allow_control) {
      return SendError(403, "control is off: start the dashboard with --allow-control");
    }
    if (!options_.stop_service) {
      return SendError(501, "this dashboard serves a run directory; it has no processes to stop");
    }
    Status st = options_.stop_service(req.param("service"));
    if (!st.ok()) return SendError(400, st.message());
    return SendJson({{"stopping", req.param("service")}});
  }

  json RunJson() {
    std::lock_guard<std::mutex> lock(run_mu_);
    json j = run_->RunJson(WallMillis());
    j["version"] = version_.load();
    j["diagnosis_version"] = diagnosis_version_.load();
    j["control"] = options_.allow_control && static_cast<bool>(options_.stop_service);
    return j;
  }

  // A service's triage: the one in the run's diagnosis when it is of this
  // service, else the cache's (computed in the background).
  json TriageFor(const std::string& name, const std::string& path, int64_t bytes, const json& record) {
    if (record.is_object() && record.value("service", "") == name && record.contains("triage") &&
        record["triage"].is_object()) {
      return {{"service", name}, {"pending", false}, {"source", "diagnosis"}, {"triage", record["triage"]}};
    }
    TriageCache::Entry e = triage_.Get(path, bytes);
    return {{"service", name}, {"pending", e.pending}, {"source", "log"}, {"triage", e.report}};
  }

  json DiagnosisJson() {
    json record;
    std::vector<std::pair<std::string, std::pair<std::string, int64_t>>> logs;
    bool finished;
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      record = run_->diagnosis();
      finished = run_->finished();
      for (const auto& s : run_->services()) logs.push_back({s.name, {ServableLog(s), s.log_bytes}});
    }
    if (record.is_object()) {
      std::string name = record.value("service", "");
      json t = nullptr;
      bool pending = false;
      for (const auto& [n, log] : logs) {
        if (n != name || log.first.empty()) continue;
        json tj = TriageFor(n, log.first, log.second, record);
        t = tj["triage"];
        pending = tj["pending"];
      }
      return {{"source", "run"}, {"service", name}, {"record", record}, {"triage", t}, {"pending", pending}};
    }
    // No diagnosis written (yet): the first log whose triage finds a failure.
    json best = nullptr;
    std::string best_name;
    bool pending = false;
    for (const auto& [n, log] : logs) {
      if (log.first.empty()) continue;
      TriageCache::Entry e = triage_.Get(log.first, log.second);
      pending = pending || e.pending;
      if (!e.report.is_object() || e.report.contains("error")) continue;
      if (best.is_null() || (e.report.value("verdict", "") == "failure" && best.value("verdict", "") != "failure")) {
        best = e.report;
        best_name = n;
      }
    }
    return {{"source", "logs"}, {"service", best_name.empty() ? json(nullptr) : json(best_name)},
            {"record", nullptr},  {"triage", best},
            {"pending", pending}, {"finished", finished}};
  }

  std::shared_ptr<LineIndex> Index(const std::string& path) {
    std::lock_guard<std::mutex> lock(index_mu_);
    auto& p = indexes_[path];
    if (!p) p = std::make_shared<LineIndex>(path);
    return p;
  }

  HttpResponse LogEndpoint(const HttpRequest& req) {
    std::string name = req.param("service");
    std::string path;
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      const ServiceState* s = run_->service(name);
      if (!s) return SendError(404, fmt::format("no service {}", name));
      path = ServableLog(*s);
    }
    if (path.empty()) return SendError(403, fmt::format("the log of {} is outside the run directory", name));
    LogQuery q;
    q.before = IntParam(req, "before", -1);
    q.after = IntParam(req, "after", -1);
    q.line = IntParam(req, "line", 0);
    q.lines = static_cast<size_t>(std::max<int64_t>(1, IntParam(req, "lines", 200)));
    q.query = req.param("q");
    if (!ParseLineLevel(req.param("level"), &q.min_level)) {
      return SendError(400, "level: one of all, info, warning, error");
    }
    auto out = LogWindowJson(path, Index(path).get(), q);
    if (!out.ok()) {
      return SendError(out.status().code() == StatusCode::kNotFound ? 404 : 409, out.status().message());
    }
    (*out)["service"] = name;
    return SendJson(*out);
  }

  // Server-Sent Events: an `update` event carrying the /api/run object when
  // something changed, a comment every 15 s to keep proxies from closing it.
  // The stream is called again on each of the watcher's wakes; between them
  // the connection waits in the server without holding a thread.
  HttpResponse Events() {
    HttpResponse r;
    r.content_type = "text/event-stream";
    r.headers.push_back({"Cache-Control", "no-store"});
    r.headers.push_back({"X-Accel-Buffering", "no"});
    struct State {
      uint64_t last = 0;
      bool first = true;
      std::chrono::steady_clock::time_point wrote;
    };
    auto st = std::make_shared<State>();
    r.stream = [this, st]() -> std::optional<std::string> {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return std::nullopt;
      }
      auto now = std::chrono::steady_clock::now();
      uint64_t v = version_.load();
      std::string msg;
      if (st->first || v != st->last) {
        st->last = v;
        msg = fmt::format("event: update\nid: {}\ndata: {}\n\n", v, rules::Secrets().JsonLine(RunJson()));
      } else if (now - st->wrote >= std::chrono::seconds(15)) {
        msg = ": keep-alive\n\n";
      } else {
        return std::string();
      }
      if (st->first) msg = "retry: 2000\n" + msg;
      st->first = false;
      st->wrote = now;
      return msg;
    };
    return r;
  }

  // Once a refresh period: re-read the run directory (following a newer run
  // under a runs/ directory), extend the line indexes a bounded step, notice
  // new triage reports; wake the event streams when anything changed.
  void Watch() {
    uint64_t triage_gen = triage_.generation();
    uint64_t run_switches = 1;  // a new RunDir (a newer run under runs/)
    uint64_t seen_run = 0;
    uint64_t seen_diagnosis = 0;
    auto last_logs_bump = std::chrono::steady_clock::now();
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, std::chrono::duration<double>(options_.refresh_seconds), [this] { return stopping_; });
        if (stopping_) return;
      }
      bool changed = false;
      bool diagnosis_changed = false;
      bool undiagnosed = false;
      std::vector<std::string> logs;
      {
        std::lock_guard<std::mutex> lock(run_mu_);
        std::string dir = ResolveRunDir(options_.run_dir);
        if (!dir.empty() && dir != run_->dir() && dir != options_.run_dir) {
          run_ = std::make_unique<RunDir>(dir);
          ++run_switches;
          changed = true;
        }
        changed = run_->Refresh() || changed;
        for (const auto& s : run_->services()) {
          std::string p = ServableLog(s);
          if (!p.empty()) logs.push_back(p);
        }
        if (run_switches != seen_run || run_->diagnosis_changes() != seen_diagnosis) {
          seen_run = run_switches;
          seen_diagnosis = run_->diagnosis_changes();
          diagnosis_changed = true;
        }
        undiagnosed = run_->diagnosis().is_null();
      }
      // Without a written diagnosis the logs' triage is it: ask again as they
      // grow (the cache re-triages a log at most every 5 s).
      auto now = std::chrono::steady_clock::now();
      if (changed && undiagnosed && now - last_logs_bump >= std::chrono::seconds(5)) {
        last_logs_bump = now;
        diagnosis_changed = true;
      }
      for (const auto& path : logs) (void)Index(path)->Update(int64_t{256} << 20);
      uint64_t g = triage_.generation();
      if (g != triage_gen) {
        triage_gen = g;
        diagnosis_changed = true;
      }
      if (diagnosis_changed) {
        ++diagnosis_version_;
        changed = true;
      }
      if (changed) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++version_;
        }
        cv_.notify_all();
      }
      // Every tick: the streams send what changed, or a keep-alive when due.
      server_->WakeStreams();
    }
  }

  DashboardOptions options_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread watcher_;
  std::mutex mu_;  // stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::atomic<uint64_t> version_{1};
  std::atomic<uint64_t> diagnosis_version_{1};
  std::mutex run_mu_;
  std::unique_ptr<RunDir> run_;
  std::mutex index_mu_;
  std::map<std::string, std::shared_ptr<LineIndex>> indexes_;
  TriageCache triage_;
};

}  // namespace

bool IsLoopbackHost(const std::string& host) { return IsLoopbackAddress(host); }

bool ParseListenAddress(const std::string& text, std::string* host, int* port) {
  std::string h = "127.0.0.1";
  std::string p = text;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else if (size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (colon > 0) h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) return false;
  int value = std::stoi(p);
  if (value > 65535) return false;
  // A numeric address (or localhost): names are not resolved.
  unsigned char buf[sizeof(in6_addr)];
  if (!IsLoopbackAddress(h) && inet_pton(AF_INET, h.c_str(), buf) != 1 && inet_pton(AF_INET6, h.c_str(), buf) != 1) {
    return false;
  }
  *host = h;
  *port = value;
  return true;
}

Status CheckListenAddress(const std::string& listen) {
  std::string host;
  int port;
  if (!ParseListenAddress(listen, &host, &port)) {
    return Status::InvalidArgument(
        fmt::format("{}: expected HOST:PORT with a numeric address (e.g. 127.0.0.1:8765)", listen));
  }
  HttpServerOptions o;
  o.host = host;
  o.port = port;
  auto probe = HttpServer::Start(std::move(o));
  if (!probe.ok()) return probe.status();
  (*probe)->Stop();
  return Status::Ok();
}

std::string GenerateToken() {
  unsigned char bytes[16] = {};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, bytes, sizeof(bytes));
    (void)n;
    close(fd);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

Result<std::unique_ptr<Dashboard>> StartDashboardFor(const std::string& listen, const std::string& run_dir,
                                                     std::string token, bool allow_control, std::ostream& out) {
  DashboardOptions o;
  o.run_dir = run_dir;
  o.allow_control = allow_control;
  if (!ParseListenAddress(listen, &o.host, &o.port)) {
    return Status::InvalidArgument(
        fmt::format("{}: expected HOST:PORT with a numeric address (e.g. 127.0.0.1:8765)", listen));
  }
  bool generated = !IsLoopbackHost(o.host) && token.empty();
  if (generated) token = GenerateToken();
  o.token = token;
  std::string host = o.host;
  auto d = Dashboard::Start(std::move(o));
  if (!d.ok()) return d.status();
  // Only once listening: a failed start prints no token.
  if (generated) {
    out << fmt::format("faultline: {} is not a loopback address: every request needs the token {} "
                       "(generated; --dashboard-token chooses it)\n",
                       host, token);
  }
  out << fmt::format("faultline: dashboard of {} at {}", run_dir, (*d)->url()) << std::endl;
  return d;
}

Result<std::unique_ptr<Dashboard>> Dashboard::Start(DashboardOptions options) {
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return Status::InvalidArgument(fmt::format("listening on {} needs a token", options.host));
  }
  if (options.port < 0 || options.port > 65535) return Status::InvalidArgument("port: 0..65535");
  if (options.refresh_seconds <= 0) options.refresh_seconds = 1.0;
  auto d = std::make_unique<DashboardImpl>(std::move(options));
  Status st = d->Init();
  if (!st.ok()) return st;
  return std::unique_ptr<Dashboard>(std::move(d));
}

}  // namespace faultline::web
