// The dashboard server over HTTP: the token and Host checks, the control
// switch, the API on a run directory holding the seed's real vLLM crash log,
// /metrics, and the first Server-Sent Event.
#include "web/dashboard.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

namespace faultline::web {
namespace {

namespace fs = std::filesystem;

class DashboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("dashboard_test_" + std::to_string(getpid()) + "-seed");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(fs::path(FAULTLINE_SOURCE_DIR) / "examples/seed-vllm-dp-rank/vllm.log", dir_ / "vllm.log");
    std::ofstream(dir_ / "trainer.log") << "step 1/20 loss 0.6990 lr 0.0500\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Dashboard> Start(DashboardOptions o) {
    o.run_dir = dir_.string();
    o.port = 0;
    o.refresh_seconds = 0.2;
    auto d = Dashboard::Start(std::move(o));
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? std::move(*d) : nullptr;
  }

  fs::path dir_;
};

nlohmann::json GetJson(httplib::Client& c, const std::string& path) {
  auto r = c.Get(path.c_str());
  EXPECT_TRUE(r) << path;
  if (!r) return nullptr;
  EXPECT_EQ(r->status, 200) << path << ": " << r->body;
  return nlohmann::json::parse(r->body, nullptr, false);
}

TEST_F(DashboardTest, ServesThePageTheApiAndMetricsOnLoopback) {
  auto d = Start({});
  ASSERT_TRUE(d);
  httplib::Client c("127.0.0.1", d->port());
  auto page = c.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<script src=\"app.js\""), std::string::npos);
  auto js = c.Get("/app.js");
  ASSERT_TRUE(js);
  EXPECT_NE(js->body.find("EventSource"), std::string::npos);
  EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);

  auto run = GetJson(c, "/api/run");
  EXPECT_EQ(run["state"], "logs-only");
  ASSERT_EQ(run["services"].size(), 2u);
  EXPECT_EQ(run["services"][1]["name"], "vllm");
  EXPECT_EQ(run["services"][1]["log"]["bytes"], 27662);

  // The tail, a window around the root-cause line with line numbers, a search.
  auto tail = GetJson(c, "/api/log?service=vllm&lines=5");
  ASSERT_EQ(tail["lines"].size(), 5u);
  EXPECT_EQ(tail["lines"][4]["n"], 212);
  auto around = GetJson(c, "/api/log?service=vllm&line=41&lines=10");
  bool found = false;
  for (const auto& l : around["lines"]) {
    if (l["n"] == 41) {
      found = true;
      EXPECT_NE(l["text"].get<std::string>().find("AssertionError: DP adjusted local rank 3 is out of bounds."),
                std::string::npos);
      EXPECT_EQ(l["level"], "error");
    }
  }
  EXPECT_TRUE(found) << around.dump();
  auto search = GetJson(c, "/api/log?service=vllm&q=out%20of%20bounds&level=error");
  EXPECT_EQ(search["lines"].size(), 2u);  // rank 3 and rank 2
  auto bad_level = c.Get("/api/log?service=vllm&level=loud");
  ASSERT_TRUE(bad_level);
  EXPECT_EQ(bad_level->status, 400);
  auto missing = c.Get("/api/log?service=nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  // With no diagnosis.json, the logs are triaged in the background.
  nlohmann::json diag;
  for (int i = 0; i < 600; ++i) {
    diag = GetJson(c, "/api/diagnosis");
    if (diag["triage"].is_object() && !diag["pending"].get<bool>()) break;
    usleep(100000);
  }
  EXPECT_EQ(diag["service"], "vllm");
  EXPECT_EQ(diag["triage"]["root_cause"]["line"], 41);
  EXPECT_EQ(diag["triage"]["root_cause"]["rule"], "vllm.dp-local-rank-out-of-bounds");

  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  std::string run_label = "run_id=\"" + dir_.filename().string() + "\"";
  EXPECT_NE(metrics->body.find("faultline_service_log_bytes_total{" + run_label + ",service=\"vllm\"} 27662"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("faultline_service_state{" + run_label + ",service=\"vllm\",state=\"unknown\"} 1"),
            std::string::npos);

  // No control without --allow-control.
  auto stop = c.Post("/api/control/stop?service=vllm");
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->status, 403);

  // A foreign Host header (DNS rebinding) is refused on a token-less server.
  auto rebound = c.Get("/api/run", {{"Host", "evil.example:80"}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
}

TEST_F(DashboardTest, EventsStreamSendsTheRunAndThenChanges) {
  auto d = Start({});
  ASSERT_TRUE(d);
  httplib::Client c("127.0.0.1", d->port());
  c.set_read_timeout(10, 0);
  std::string received;
  int events = 0;
  std::thread writer;
  auto r = c.Get("/api/events", [&](const char* data, size_t n) {
    received.append(data, n);
    size_t count = 0;
    for (size_t p = 0; (p = received.find("event: update", p)) != std::string::npos; ++p) ++count;
    if (count == 1 && events == 0) {
      events = 1;
      // Something changes in the run directory: a second event follows.
      std::ofstream(dir_ / "trainer.log", std::ios::app) << "step 2/20 loss 0.5\n";
    }
    return count < 2;
  });
  EXPECT_NE(received.find("retry: 2000"), std::string::npos);
  size_t first = received.find("data: ");
  ASSERT_NE(first, std::string::npos);
  auto run = nlohmann::json::parse(received.substr(first + 6, received.find('\n', first) - first - 6), nullptr, false);
  EXPECT_EQ(run["name"], fs::path(dir_).filename().string());
  EXPECT_NE(received.find("event: update", first), std::string::npos);
  size_t second = received.find("data: ", first + 1);
  ASSERT_NE(second, std::string::npos) << received;
  auto later = nlohmann::json::parse(received.substr(second + 6, received.find('\n', second) - second - 6), nullptr, false);
  EXPECT_GT(later["version"].get<int>(), run["version"].get<int>());
  EXPECT_EQ(later["services"][0]["log"]["bytes"], 51);
}

TEST_F(DashboardTest, ATokenGuardsEveryRequest) {
  DashboardOptions o;
  o.token = "s3cret";
  auto d = Start(o);
  ASSERT_TRUE(d);
  EXPECT_NE(d->url().find("?token=s3cret"), std::string::npos);
  httplib::Client c("127.0.0.1", d->port());
  for (const char* path : {"/", "/app.js", "/api/run", "/api/log?service=vllm", "/metrics", "/api/events"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
  }
  auto wrong = c.Get("/api/run?token=s3creT");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto query = c.Get("/?token=s3cret");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->status, 200);
  EXPECT_NE(query->get_header_value("Set-Cookie").find("faultline_token=s3cret"), std::string::npos);
  auto bearer = c.Get("/api/run", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(bearer);
  EXPECT_EQ(bearer->status, 200);
  auto cookie = c.Get("/style.css", {{"Cookie", "a=b; faultline_token=s3cret"}});
  ASSERT_TRUE(cookie);
  EXPECT_EQ(cookie->status, 200);
}

TEST_F(DashboardTest, OptionsAreChecked) {
  DashboardOptions o;
  o.run_dir = dir_.string();
  o.host = "0.0.0.0";
  auto no_token = Dashboard::Start(o);
  EXPECT_FALSE(no_token.ok());
  EXPECT_NE(no_token.status().message().find("token"), std::string::npos);
  o.host = "127.0.0.1";
  o.run_dir = (dir_ / "missing").string();
  EXPECT_FALSE(Dashboard::Start(o).ok());
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  std::string host;
  int port = 0;
  EXPECT_TRUE(ParseListenAddress("0.0.0.0:9000", &host, &port));
  EXPECT_EQ(host, "0.0.0.0");
  EXPECT_EQ(port, 9000);
  EXPECT_TRUE(ParseListenAddress("[::1]:0", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_TRUE(ParseListenAddress("8766", &host, &port));
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 8766);
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:99999", &host, &port));
  EXPECT_FALSE(ParseListenAddress("host:http", &host, &port));
  std::ostringstream out;
  EXPECT_FALSE(StartDashboardFor("nowhere", dir_.string(), "", false, out).ok());
  auto open = StartDashboardFor("0.0.0.0:0", dir_.string(), "", false, out);
  ASSERT_TRUE(open.ok()) << open.status().message();
  EXPECT_NE(out.str().find("needs the token"), std::string::npos);
  EXPECT_NE(out.str().find("faultline: dashboard of " + dir_.string() + " at http://127.0.0.1:"), std::string::npos);
  EXPECT_NE(out.str().find("?token="), std::string::npos);
  (*open)->Stop();
  EXPECT_EQ(GenerateToken().size(), 32u);
  EXPECT_NE(GenerateToken(), GenerateToken());
}

TEST_F(DashboardTest, ControlNeedsTheFlagAndAHook) {
  DashboardOptions o;
  o.allow_control = true;
  std::string stopped;
  o.stop_service = [&](const std::string& s) {
    stopped = s;
    return Status::Ok();
  };
  auto d = Start(o);
  ASSERT_TRUE(d);
  httplib::Client c("127.0.0.1", d->port());
  auto r = c.Post("/api/control/stop?service=vllm");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(stopped, "vllm");
}

// A live.jsonl naming a file outside the run directory, or a log symlinked
// out of it, is not served by /api/log nor triaged by /api/triage.
TEST_F(DashboardTest, OnlyFilesInsideTheRunDirectoryAreServed) {
  std::ofstream(dir_ / "live.jsonl")
      << R"({"type":"event","event":"started","service":"shadow","log_path":"/etc/passwd","time":"2026-11-29T09:26:47.750Z"})"
      << "\n";
  fs::create_symlink("/etc/passwd", dir_ / "link.log");
  auto d = Start({});
  ASSERT_TRUE(d);
  httplib::Client c("127.0.0.1", d->port());
  for (const char* path : {"/api/log?service=link", "/api/triage?service=link"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path << ": " << r->body;
    EXPECT_EQ(r->body.find("root:"), std::string::npos);
  }
  // The record's foreign path was not taken: the service's log is its own (missing).
  auto shadow = c.Get("/api/log?service=shadow");
  ASSERT_TRUE(shadow);
  EXPECT_EQ(shadow->body.find("root:"), std::string::npos) << shadow->body;
  auto ok = c.Get("/api/log?service=vllm&lines=1");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

// A failed start prints no token; names are not resolved.
TEST_F(DashboardTest, AFailedStartPrintsNoToken) {
  std::ostringstream out;
  auto d = StartDashboardFor("8.8.8.8:80", dir_.string(), "", false, out);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("not an address of this machine"), std::string::npos) << d.status().message();
  EXPECT_EQ(out.str(), "");
  std::string host;
  int port;
  EXPECT_FALSE(ParseListenAddress("nonsense", &host, &port));
  EXPECT_FALSE(ParseListenAddress("example.com:80", &host, &port));
  EXPECT_TRUE(ParseListenAddress("localhost:80", &host, &port));
}

// A second dashboard on a port in use is refused (no SO_REUSEPORT sharing).
TEST_F(DashboardTest, APortInUseIsRefused) {
  auto d = Start({});
  ASSERT_TRUE(d);
  std::ostringstream out;
  auto second = StartDashboardFor("127.0.0.1:" + std::to_string(d->port()), dir_.string(), "", false, out);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("is in use"), std::string::npos) << second.status().message();
}

// Secrets in a run directory (an older faultline wrote them in clear, or
// the log holds them) leave through the redaction choke point: /api/run,
// /api/log, the event stream and /metrics never carry them.
TEST_F(DashboardTest, SecretsAreRedactedInEveryAnswer) {
  std::ofstream(dir_ / "live.jsonl")
      << R"({"type":"event","event":"started","service":"vllm","command":["vllm","serve","m","--api-key","sk-local-0123456789abcdefXYZ"],"time":"2026-11-29T09:26:47.750Z"})"
      << "\n"
      << R"({"type":"status","service":"vllm","time":"2026-11-29T09:26:49.750Z","log":{"last_line":"export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234"},"progress":{"last":["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234"]}})"
      << "\n";
  std::ofstream(dir_ / "vllm.log", std::ios::app) << "wandb: WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n";
  auto d = Start({});
  ASSERT_TRUE(d);
  httplib::Client c("127.0.0.1", d->port());
  c.set_read_timeout(10, 0);
  for (const char* path : {"/api/run", "/api/log?service=vllm&lines=3", "/metrics"}) {
    auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    for (const char* secret : {"0123456789abcdefXYZ", "abcdefghijklmnopqrstuvwxyz1234", "0123456789abcdef0123456789"}) {
      EXPECT_EQ(r->body.find(secret), std::string::npos) << path << " leaks " << secret << ": " << r->body;
    }
  }
  auto run = GetJson(c, "/api/run");
  EXPECT_NE(run.dump().find("--api-key"), std::string::npos);  // which secret it was stays visible
  std::string received;
  c.Get("/api/events", [&](const char* data, size_t n) {
    received.append(data, n);
    return received.find("\n\n", received.find("data: ")) == std::string::npos;
  });
  ASSERT_NE(received.find("data: "), std::string::npos);
  EXPECT_EQ(received.find("0123456789abcdefXYZ"), std::string::npos) << received;
  EXPECT_EQ(received.find("abcdefghijklmnopqrstuvwxyz1234"), std::string::npos) << received;
}

}  // namespace
}  // namespace faultline::web
