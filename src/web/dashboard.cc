#include "web/dashboard.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "web/api.h"
#include "web/assets.h"
#include "web/line_index.h"
#include "web/metrics.h"
#include "web/run_dir.h"
#include "web/triage_cache.h"

namespace faultline::web {
namespace {

using nlohmann::json;

constexpr char kJson[] = "application/json; charset=utf-8";
constexpr char kCookie[] = "faultline_token";

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string CookieValue(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    size_t b = part.find_first_not_of(' ');
    if (b != std::string::npos) part = part.substr(b);
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

void SendJson(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, {{"error", message}}, status);
}

int64_t IntParam(const httplib::Request& req, const char* key, int64_t fallback) {
  if (!req.has_param(key)) return fallback;
  try {
    return std::stoll(req.get_param_value(key));
  } catch (const std::exception&) {
    return fallback;
  }
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
    Routes();
    bool bound;
    if (options_.port == 0) {
      port_ = server_.bind_to_any_port(options_.host);
      bound = port_ > 0;
    } else {
      port_ = options_.port;
      bound = server_.bind_to_port(options_.host, options_.port);
    }
    if (!bound) {
      return Status::IoError(fmt::format("cannot listen on {}:{} (in use, or not an address of this host)",
                                         options_.host, options_.port));
    }
    listener_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the listen loop runs would be lost: wait for it.
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
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
    server_.stop();
    if (listener_.joinable()) listener_.join();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  // Every request: the token when there is one; the Host header otherwise
  // (a loopback server answers only to loopback names: no DNS rebinding).
  bool Allowed(const httplib::Request& req, httplib::Response& res) {
    if (options_.token.empty()) {
      std::string host = req.get_header_value("Host");
      std::string name = host.empty() ? host : host[0] == '[' ? host.substr(0, host.find(']') + 1) : host.substr(0, host.rfind(':'));
      if (!host.empty() && !IsLoopbackHost(name)) {
        SendError(res, 403, "this dashboard answers only to 127.0.0.1 / localhost");
        return false;
      }
      return true;
    }
    std::string given;
    std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0) {
      given = auth.substr(7);
    } else if (req.has_param("token")) {
      given = req.get_param_value("token");
    } else {
      given = CookieValue(req.get_header_value("Cookie"), kCookie);
    }
    if (!ConstantTimeEquals(given, options_.token)) {
      SendError(res, 401, "a token is required: open the URL faultline printed (…/?token=…)");
      return false;
    }
    if (req.has_param("token")) {
      res.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict", kCookie, options_.token));
    }
    return true;
  }

  void Routes() {
    // Small answers on kept-alive connections: without this, Nagle and delayed
    // ACKs add ~40 ms to a response written in two pieces.
    server_.set_tcp_nodelay(true);
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      return Allowed(req, res) ? httplib::Server::HandlerResponse::Unhandled : httplib::Server::HandlerResponse::Handled;
    });
    server_.Get(R"(/(|index\.html|app\.js|style\.css))", [](const httplib::Request& req, httplib::Response& res) {
      const Asset* a = FindAsset(req.path);
      if (!a) return SendError(res, 404, "no such page");
      res.set_header("Content-Security-Policy",
                     "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'");
      res.set_content(std::string(a->body), std::string(a->content_type).c_str());
    });
    server_.Get("/api/run", [this](const httplib::Request&, httplib::Response& res) { SendJson(res, RunJson()); });
    server_.Get("/api/samples", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(run_mu_);
      SendJson(res, run_->SamplesJson());
    });
    server_.Get("/api/diagnosis", [this](const httplib::Request&, httplib::Response& res) {
      SendJson(res, DiagnosisJson());
    });
    server_.Get("/api/triage", [this](const httplib::Request& req, httplib::Response& res) {
      std::string name = req.get_param_value("service");
      std::string path;
      int64_t bytes;
      json record;
      {
        std::lock_guard<std::mutex> lock(run_mu_);
        const ServiceState* s = run_->service(name);
        if (!s) return SendError(res, 404, fmt::format("no service {}", name));
        path = s->log_path;
        bytes = s->log_bytes;
        record = run_->diagnosis();
      }
      SendJson(res, TriageFor(name, path, bytes, record));
    });
    server_.Get("/api/log", [this](const httplib::Request& req, httplib::Response& res) { LogEndpoint(req, res); });
    server_.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) { Events(res); });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      json run = RunJson();
      json diag;
      {
        std::lock_guard<std::mutex> lock(run_mu_);
        diag = run_->diagnosis();
      }
      res.set_content(PrometheusText(run, diag), "text/plain; version=0.0.4; charset=utf-8");
    });
    server_.Post("/api/control/stop", [this](const httplib::Request& req, httplib::Response& res) {
      if (!options_.allow_control) {
        return SendError(res, 403, "control is off: start the dashboard with --allow-control");
      }
      if (!options_.stop_service) {
        return SendError(res, 501, "this dashboard serves a run directory; it has no processes to stop");
      }
      Status st = options_.stop_service(req.get_param_value("service"));
      if (!st.ok()) return SendError(res, 400, st.message());
      SendJson(res, {{"stopping", req.get_param_value("service")}});
    });
    server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) SendError(res, res.status, "not found");
    });
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
      for (const auto& s : run_->services()) logs.push_back({s.name, {s.log_path, s.log_bytes}});
    }
    if (record.is_object()) {
      std::string name = record.value("service", "");
      json t = nullptr;
      bool pending = false;
      for (const auto& [n, log] : logs) {
        if (n != name) continue;
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

  void LogEndpoint(const httplib::Request& req, httplib::Response& res) {
    std::string name = req.get_param_value("service");
    std::string path;
    {
      std::lock_guard<std::mutex> lock(run_mu_);
      const ServiceState* s = run_->service(name);
      if (!s) return SendError(res, 404, fmt::format("no service {}", name));
      path = s->log_path;
    }
    LogQuery q;
    q.before = IntParam(req, "before", -1);
    q.after = IntParam(req, "after", -1);
    q.line = IntParam(req, "line", 0);
    q.lines = static_cast<size_t>(std::max<int64_t>(1, IntParam(req, "lines", 200)));
    q.query = req.get_param_value("q");
    if (!ParseLineLevel(req.get_param_value("level"), &q.min_level)) {
      return SendError(res, 400, "level: one of all, info, warning, error");
    }
    auto out = LogWindowJson(path, Index(path).get(), q);
    if (!out.ok()) {
      return SendError(res, out.status().code() == StatusCode::kNotFound ? 404 : 409, out.status().message());
    }
    (*out)["service"] = name;
    SendJson(res, *out);
  }

  // Server-Sent Events: an `update` event carrying the /api/run object when
  // something changed, a comment every 15 s to keep proxies from closing it.
  void Events(httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_header("X-Accel-Buffering", "no");
    auto last = std::make_shared<uint64_t>(0);
    auto first = std::make_shared<bool>(true);
    res.set_chunked_content_provider("text/event-stream", [this, last, first](size_t, httplib::DataSink& sink) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (!*first) {
          cv_.wait_for(lock, std::chrono::seconds(15), [&] { return stopping_ || version_.load() != *last; });
        }
        if (stopping_) {
          sink.done();
          return false;
        }
      }
      std::string msg;
      uint64_t v = version_.load();
      if (*first || v != *last) {
        *last = v;
        msg = fmt::format("event: update\nid: {}\ndata: {}\n\n", v,
                          RunJson().dump(-1, ' ', false, json::error_handler_t::replace));
      } else {
        msg = ": keep-alive\n\n";
      }
      if (*first) msg = "retry: 2000\n" + msg;
      *first = false;
      if (!sink.is_writable() || !sink.write(msg.data(), msg.size())) return false;
      return true;
    });
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
        for (const auto& s : run_->services()) logs.push_back(s.log_path);
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
    }
  }

  DashboardOptions options_;
  httplib::Server server_;
  int port_ = 0;
  std::thread listener_;
  std::thread watcher_;
  std::mutex mu_;  // stopping_, and the wait of the event streams
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

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

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
  *host = h;
  *port = value;
  return true;
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
    return Status::InvalidArgument(fmt::format("{}: expected HOST:PORT (e.g. 127.0.0.1:8765)", listen));
  }
  if (!IsLoopbackHost(o.host) && token.empty()) {
    token = GenerateToken();
    out << fmt::format("faultline: {} is not a loopback address: every request needs the token {} "
                       "(generated; --dashboard-token chooses it)\n",
                       o.host, token);
  }
  o.token = std::move(token);
  auto d = Dashboard::Start(std::move(o));
  if (!d.ok()) return d.status();
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
