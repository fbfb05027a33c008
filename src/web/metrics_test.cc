#include "web/metrics.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "web/metrics_output.h"
#include "web/test_http_client.h"

namespace faultline::metrics {
namespace {

using nlohmann::json;

Identity TestIdentity() {
  Identity id;
  id.run_id = "20261201-101500-seed \"pipe\"";
  id.pipeline = "seed";
  id.hostname = "node-3";
  id.version = "0.1.0";
  id.scheduler = {{"job_id", "4242"}, {"node_id", "3"}, {"rank", "3"}};
  id.phases = {"process-start", "distributed-init", "weight-loading", "training"};
  return id;
}

// The records `faultline run` writes (docs/live.schema.json), in order.
std::vector<json> RunRecords() {
  return {
      json::parse(
          R"({"schema":"faultline.live/1","type":"event","event":"started","service":"trainer",
        "time":"2026-12-01T10:15:00.000Z","pid":100,"command":["python3","train.py"]})"),
      json::parse(
          R"({"schema":"faultline.live/1","type":"status","service":"trainer","time":"2026-12-01T10:15:10.000Z",
        "elapsed_s":10.0,"phase":"distributed-init","progress":{"seconds_since":2.5,"last":["log +1 KiB"]},
        "processes":[{"pid":100,"ppid":1,"comm":"python3","cpu_seconds":4.0,"rss_bytes":1000},
                     {"pid":101,"ppid":100,"comm":"python3","cpu_seconds":6.0,"rss_bytes":3000}],
        "log":{"bytes":2048,"lines":20},
        "gpu":{"available":true,"source":"fake",
               "devices":[{"index":0,"memory_used_bytes":100,"memory_total_bytes":200,"utilization_percent":50,
                           "uuid":"GPU-abc","name":"NVIDIA H200"}],
               "processes":[{"pid":101,"gpu":0,"memory_used_bytes":64},{"pid":999,"gpu":0,"memory_used_bytes":36}]}})"),
      // pid 101 exited: its CPU seconds stay counted.
      json::parse(
          R"({"schema":"faultline.live/1","type":"status","service":"trainer","time":"2026-12-01T10:15:20.000Z",
        "elapsed_s":20.0,"phase":"training","progress":{"seconds_since":0.0,"last":[]},
        "processes":[{"pid":100,"ppid":1,"comm":"python3","cpu_seconds":5.0,"rss_bytes":1000}],
        "log":{"bytes":4096,"lines":40},"gpu":{"available":false,"source":"none","devices":[],"processes":[]}})"),
      json::parse(
          R"({"schema":"faultline.live/1","type":"event","event":"exited","service":"trainer",
        "time":"2026-12-01T10:15:21.000Z","pid":100,"exit_code":1,"signal":null})"),
      json::parse(
          R"({"schema":"faultline.live/1","type":"diagnosis","service":"trainer","time":"2026-12-01T10:15:21.500Z",
        "outcome":"died","exit_code":1})"),
  };
}

bool Has(const std::string &text, const std::string &line) { return text.find(line + "\n") != std::string::npos; }

TEST(MetricsTest, RunRecordsBecomeSeries) {
  RunMetrics m(TestIdentity());
  auto records = RunRecords();
  for (size_t i = 0; i < 2; ++i) m.Apply(records[i]);
  std::string text = m.Render();
  const std::string l =
      "run_id=\"20261201-101500-seed "
      "\\\"pipe\\\"\",job_id=\"4242\",node_id=\"3\",rank=\"3\"";
  const std::string ls = l + ",service=\"trainer\"";
  EXPECT_TRUE(Has(text, "faultline_build_info{" + l + ",version=\"0.1.0\"} 1")) << text;
  EXPECT_TRUE(Has(text, "faultline_service_state{" + ls + ",state=\"running\"} 1"));
  EXPECT_TRUE(Has(text, "faultline_service_state{" + ls + ",state=\"died\"} 0"));
  EXPECT_TRUE(Has(text, "faultline_service_phase{" + ls + ",phase=\"distributed-init\"} 1"));
  EXPECT_TRUE(Has(text, "faultline_service_phase{" + ls + ",phase=\"training\"} 0"));
  EXPECT_TRUE(Has(text, "faultline_service_start_time_seconds{" + ls + "} 1796120100"));
  EXPECT_TRUE(Has(text, "faultline_service_last_progress_timestamp_seconds{" + ls + "} 1796120107.5"));
  EXPECT_TRUE(Has(text, "faultline_service_cpu_seconds_total{" + ls + "} 10"));
  EXPECT_TRUE(Has(text, "faultline_service_resident_memory_bytes{" + ls + "} 4000"));
  EXPECT_TRUE(Has(text, "faultline_service_log_bytes_total{" + ls + "} 2048"));
  // Only the service's own processes count; pid 999 is someone else's.
  EXPECT_TRUE(Has(text, "faultline_service_gpu_memory_used_bytes{" + ls + "} 64"));
  EXPECT_TRUE(Has(text, "faultline_gpu_process_memory_used_bytes{" + ls +
                            ",pid=\"101\",gpu=\"0\",UUID=\"GPU-abc\",modelName="
                            "\"NVIDIA H200\",Hostname=\"node-3\"} 64"));
  EXPECT_EQ(text.find("pid=\"999\""), std::string::npos);
  EXPECT_TRUE(Has(text, "faultline_gpu_utilization_ratio{" + l +
                            ",gpu=\"0\",UUID=\"GPU-abc\",modelName=\"NVIDIA "
                            "H200\",Hostname=\"node-3\"} 0.5"));
  EXPECT_TRUE(Has(text, "faultline_run_outcome{" + l + ",outcome=\"running\"} 1"));
  EXPECT_EQ(text.find("faultline_service_exit_code{"),
            std::string::npos);  // not exited
  EXPECT_EQ(text.find("faultline_service_pid"),
            std::string::npos);  // no pid as a value
  EXPECT_FALSE(m.ended());

  for (size_t i = 2; i < records.size(); ++i) m.Apply(records[i]);
  text = m.Render();
  EXPECT_TRUE(Has(text, "faultline_service_cpu_seconds_total{" + ls + "} 11"));  // 5 + 6: never falls
  EXPECT_TRUE(Has(text, "faultline_service_state{" + ls + ",state=\"died\"} 1")) << text;
  EXPECT_TRUE(Has(text, "faultline_service_state{" + ls + ",state=\"running\"} 0"));
  EXPECT_TRUE(Has(text, "faultline_service_exit_code{" + ls + "} 1"));
  EXPECT_TRUE(Has(text, "faultline_service_end_time_seconds{" + ls + "} 1796120121"));
  EXPECT_TRUE(Has(text, "faultline_run_outcome{" + l + ",outcome=\"died\"} 1"));
  EXPECT_TRUE(Has(text, "faultline_last_update_timestamp_seconds{" + l + "} 1796120121.5"));
  EXPECT_TRUE(m.ended());
  // Each family's samples follow its own TYPE line.
  EXPECT_LT(text.find("# TYPE faultline_gpu_memory_total_bytes"), text.find("faultline_gpu_memory_total_bytes{"));
}

TEST(MetricsTest, StallClassAndWatchWithoutStartedEvent) {
  RunMetrics m(TestIdentity());
  m.Apply(json::parse(
      R"({"type":"status","service":"pid 7","time":"2026-12-01T10:00:30.000Z","elapsed_s":30.0,
    "phase":null,"progress":{"seconds_since":30.0,"last":[]},"processes":[{"pid":7,"cpu_seconds":1.0,"rss_bytes":5}],
    "log":null})"));
  m.Apply(json::parse(
      R"({"type":"diagnosis","service":"pid 7","time":"2026-12-01T10:00:31.000Z","outcome":"stalled",
    "stall":{"class":"collective-hang","stalled_for_s":30.0}})"));
  std::string text = m.Render();
  EXPECT_NE(text.find("service=\"pid 7\",state=\"stalled\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("faultline_service_start_time_seconds{"), std::string::npos);
  EXPECT_NE(text.find("service=\"pid 7\",class=\"collective-hang\"} 1"), std::string::npos);
  EXPECT_NE(text.find("service=\"pid 7\",phase=\"training\"} 0"), std::string::npos);
}

TEST(MetricsTest, SchedulerLabelsFromTheEnvironment) {
  std::map<std::string, std::string> env = {
      {"SLURM_JOB_ID", "77"}, {"SLURM_NODEID", "2"}, {"SLURM_PROCID", "5"}, {"HOSTNAME", "x"}};
  auto get = [&](const char *k) { return env.count(k) ? env[k] : std::string(); };
  Labels l = SchedulerLabels(get);
  EXPECT_EQ(l, (Labels{{"job_id", "77"}, {"node_id", "2"}, {"rank", "5"}}));
  env = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
         {"HOSTNAME", "train-0-abc"},
         {"JOB_COMPLETION_INDEX", "0"},
         {"POD_NAMESPACE", "ml"}};
  EXPECT_EQ(SchedulerLabels(get), (Labels{{"pod", "train-0-abc"}, {"namespace", "ml"}, {"rank", "0"}}));
}

TEST(MetricsTest, TextfileNameIsSafe) {
  EXPECT_EQ(TextfileName("20261201-101500-seed pipe/../x"), "faultline_20261201-101500-seed_pipe_.._x.prom");
}

// promtool (Debian's prometheus package; scripts/bootstrap installs it) must
// accept the exposition: format and Prometheus's naming lint.
TEST(MetricsTest, PromtoolCheckMetricsPasses) {
  if (system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not installed (scripts/bootstrap)";
  RunMetrics m(TestIdentity());
  for (const auto &r : RunRecords()) m.Apply(r);
  m.Apply(json::parse(
      R"({"type":"diagnosis","service":"trainer","time":"2026-12-01T10:15:22.000Z",
    "outcome":"stalled","stall":{"class":"busy-spin"}})"));
  auto path = std::filesystem::temp_directory_path() / ("faultline-metrics-" + std::to_string(getpid()) + ".prom");
  std::ofstream(path) << m.Render();
  std::string cmd = "promtool check metrics < " + path.string() + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  std::filesystem::remove(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_EQ(out, "") << out;
}

// What a malformed live.jsonl or diagnosis.json can make of the run object:
// missing keys, wrong types, non-objects. No throw, no read of a missing key
// of a const object (undefined behaviour: a failed assertion in Debug).
TEST(MetricsTest, MalformedRecordsAreSafe) {
  // What a damaged live.jsonl or diagnosis.json can hold: wrong types everywhere.
  RunMetrics m(TestIdentity());
  for (const char *text :
       {"null", "12", "[]", R"({"type": 3})", R"({"type": "status"})", R"({"type": "status", "service": ["a"]})",
        R"({"type": "status", "service": "s", "time": 5, "processes": {"a": 1}, "log": 3, "progress": "p",
            "gpu": {"devices": [{"index": "zero", "memory_used_bytes": 1}, 3], "processes": [1, {"pid": "x"}]}})",
        R"({"type": "status", "service": "s", "time": "2026-13-99T99:99:99.999Z", "elapsed_s": "x",
            "processes": [5, {"pid": 1, "cpu_seconds": "c", "rss_bytes": []}], "phase": 2})",
        R"({"type": "event", "event": "exited", "service": "s", "exit_code": "one"})",
        R"({"type": "event", "event": 7})", R"({"type": "diagnosis", "outcome": 1})",
        R"({"type": "diagnosis", "service": 4, "outcome": "stalled", "stall": {"class": 3}})",
        R"({"type": "diagnosis", "service": "s", "outcome": "died", "stall": 1})"}) {
    EXPECT_NO_THROW(m.Apply(json::parse(text))) << text;
    std::string out;
    EXPECT_NO_THROW(out = m.Render()) << text;
    EXPECT_NE(out.find("# TYPE faultline_service_state gauge"), std::string::npos);
  }
  EXPECT_NE(m.Render().find("service=\"s\",state=\"died\"} 1"), std::string::npos) << m.Render();
}

}  // namespace
// Finish() keeps /metrics up until a scrape that began after the end has been
// sent in full, so Prometheus records the death before the series go stale;
// it does not wait for one when nobody ever scraped.
TEST(MetricsTest, FinishServesTheEndToOneMoreScrapeThenStops) {
  std::ostringstream printed;
  std::vector<json> records = RunRecords();
  // Several rounds: stopping the server the moment the last handler returned
  // cut that answer off now and then (a race with the sending thread).
  for (int round = 0; round < 10; ++round) {
    auto out = MetricsOutput::Start("127.0.0.1:0", "", TestIdentity(), printed);
    ASSERT_TRUE(out.ok()) << out.status().message();
    MetricsOutput &m = **out;
    for (size_t i = 0; i < 3; ++i) m.Apply(records[i]);
    std::string before = web::test_http::Get(m.port(), "/metrics");
    EXPECT_NE(before.find("state=\"running\"} 1"), std::string::npos) << before;
    for (size_t i = 3; i < records.size(); ++i) m.Apply(records[i]);

    std::atomic<bool> finished{false};
    std::thread finisher([&] {
      m.Finish(30);
      finished = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(round == 0 ? 300 : 20));
    EXPECT_FALSE(finished) << "Finish returned before anyone saw the end";
    std::string after = web::test_http::Get(m.port(), "/metrics");
    EXPECT_NE(after.find("state=\"died\"} 1"), std::string::npos) << "round " << round << ": " << after;
    for (int i = 0; i < 500 && !finished; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(finished) << "Finish still lingers after the end was scraped";
    finisher.join();
    EXPECT_LT(web::test_http::Connect(m.port()), 0) << "the endpoint still accepts after Finish";
  }

  auto never = MetricsOutput::Start("127.0.0.1:0", "", TestIdentity(), printed);
  ASSERT_TRUE(never.ok());
  auto t0 = std::chrono::steady_clock::now();
  (*never)->Finish(30);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace faultline::metrics
