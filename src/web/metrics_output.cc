#include "web/metrics_output.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "web/dashboard.h"
#include "web/http_server.h"

#ifndef FAULTLINE_VERSION
#define FAULTLINE_VERSION "unknown"
#endif

namespace faultline::metrics {
namespace {

constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class OutputImpl : public MetricsOutput {
 public:
  OutputImpl(Identity id, std::string textfile_dir) : metrics_(std::move(id)), dir_(std::move(textfile_dir)) {}

  ~OutputImpl() override { Stop(); }

  Status Listen(const std::string &listen, std::ostream &out) {
    std::string host;
    int port = 0;
    if (!web::ParseListenAddress(listen, &host, &port)) {
      return Status::InvalidArgument(fmt::format("--metrics {}: expected HOST:PORT (e.g. 0.0.0.0:9464)", listen));
    }
    web::HttpServerOptions o;
    o.host = host;
    o.port = port;
    o.any_host = true;  // read-only, scraped from other machines by whatever name they know this one
    o.handler = [this](const web::HttpRequest &req) {
      web::HttpResponse res;
      res.content_type = kContentType;
      if (req.path != "/metrics") {
        res.status = req.path == "/" ? 200 : 404;
        res.content_type = "text/plain; charset=utf-8";
        res.body = "faultline metrics: /metrics\n";
        return res;
      }
      bool after_end;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++scrapes_;
        after_end = finishing_;
      }
      res.body = metrics_.Render();
      if (after_end) {
        res.on_done = [this](bool sent) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (sent) ++final_scrapes_sent_;
          }
          scraped_.notify_all();
        };
      }
      return res;
    };
    auto server = web::HttpServer::Start(std::move(o));
    if (!server.ok()) return Status::IoError(fmt::format("--metrics {}: {}", listen, server.status().message()));
    server_ = std::move(*server);
    port_ = server_->port();
    std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    out << fmt::format("faultline: metrics at http://{}:{}/metrics", shown, port_) << std::endl;
    return Status::Ok();
  }

  Status CheckDir() const {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir_, ec)) {
      return Status::InvalidArgument(fmt::format("--metrics-textfile {}: not a directory", dir_));
    }
    if (access(dir_.c_str(), W_OK) != 0) {
      return Status::InvalidArgument(fmt::format("--metrics-textfile {}: not writable", dir_));
    }
    return Status::Ok();
  }

  void Apply(const nlohmann::json &record) override {
    metrics_.Apply(record);
    if (dir_.empty()) return;
    bool status = record.is_object() && record.value("type", "") == "status";
    double now = MonotonicSeconds();
    if (status && now - last_write_ < 1.0) return;
    last_write_ = now;
    WriteTextfile();
  }

  void Finish(double linger_seconds) override {
    if (!dir_.empty()) WriteTextfile();
    if (!server_) return;
    // Done when a scrape that began after the last Apply() has been sent in
    // full: one already rendering when the run ended still shows the state
    // before the end, and stopping the server the moment a handler returns
    // would cut its response off (Prometheus records a failed scrape, and the
    // death never shows before the series go stale).
    std::unique_lock<std::mutex> lock(mu_);
    finishing_ = true;
    if (scrapes_ > 0 && linger_seconds > 0) {
      scraped_.wait_for(lock, std::chrono::duration<double>(linger_seconds), [&] { return final_scrapes_sent_ > 0; });
    }
    lock.unlock();
    Stop();
  }

  const RunMetrics &metrics() const override { return metrics_; }
  int port() const override { return port_; }

 private:
  void WriteTextfile() {
    std::string final_path = dir_ + "/" + TextfileName(metrics_.identity().run_id);
    // node_exporter reads only *.prom: the temporary name is invisible to it
    // until the rename.
    std::string tmp = final_path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << metrics_.Render();
      if (!f) return;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, final_path, ec);
  }

  void Stop() {
    if (!server_) return;
    server_->Stop();
    server_.reset();
  }

  RunMetrics metrics_;
  std::string dir_;
  double last_write_ = -1e18;
  std::unique_ptr<web::HttpServer> server_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable scraped_;
  int64_t scrapes_ = 0;
  bool finishing_ = false;
  int64_t final_scrapes_sent_ = 0;
};

}  // namespace

Identity LocalIdentity(std::string run_id, std::string pipeline, std::vector<std::string> phases) {
  Identity id;
  id.run_id = std::move(run_id);
  id.pipeline = std::move(pipeline);
  id.phases = std::move(phases);
  id.version = FAULTLINE_VERSION;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) id.hostname = host;
  id.scheduler = SchedulerLabels([](const char *name) {
    const char *v = std::getenv(name);
    return std::string(v ? v : "");
  });
  return id;
}

std::string TextfileName(const std::string &run_id) {
  std::string out = "faultline_";
  for (char c : run_id) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  return out + ".prom";
}

Result<std::unique_ptr<MetricsOutput>> MetricsOutput::Start(const std::string &listen, const std::string &textfile_dir,
                                                            Identity identity, std::ostream &out) {
  auto o = std::make_unique<OutputImpl>(std::move(identity), textfile_dir);
  if (!textfile_dir.empty()) {
    Status st = o->CheckDir();
    if (!st.ok()) return st;
  }
  if (!listen.empty()) {
    Status st = o->Listen(listen, out);
    if (!st.ok()) return st;
  }
  return std::unique_ptr<MetricsOutput>(std::move(o));
}

}  // namespace faultline::metrics
