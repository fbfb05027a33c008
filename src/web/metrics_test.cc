#include "web/metrics.h"

#include <gtest/gtest.h>

namespace faultline::web {
namespace {

TEST(MetricsTest, PrometheusTextOfARun) {
  auto run = nlohmann::json::parse(R"({
    "name": "seed \"pipe\"",
    "services": [{"name": "vllm", "state": "stalled", "pid": 42, "phase": "distributed-init", "uptime_s": 12.5,
                  "exit_code": null, "cpu_percent": 99.0, "rss_bytes": 1024, "progress": {"seconds_since": 7.0, "last": []},
                  "log": {"bytes": 9749}}],
    "gpu": {"available": true, "devices": [{"index": 0, "memory_used_bytes": 100, "memory_total_bytes": 200,
                                            "utilization_percent": 3}]}})");
  auto diag = nlohmann::json::parse(R"({"service": "vllm", "stall": {"class": "busy-spin", "stalled_for_s": 7.0}})");
  std::string text = PrometheusText(run, diag);
  const std::string l = "run=\"seed \\\"pipe\\\"\",service=\"vllm\"";
  EXPECT_NE(text.find("# TYPE faultline_service_state gauge"), std::string::npos);
  EXPECT_NE(text.find("faultline_service_state{" + l + ",state=\"stalled\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("faultline_service_state{" + l + ",state=\"running\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("faultline_service_phase{" + l + ",phase=\"distributed-init\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("faultline_service_pid{" + l + "} 42\n"), std::string::npos);
  EXPECT_NE(text.find("faultline_service_seconds_without_progress{" + l + "} 7\n"), std::string::npos);
  EXPECT_EQ(text.find("faultline_service_exit_code{"), std::string::npos);  // not exited
  EXPECT_NE(text.find("faultline_stall_seconds{" + l + ",class=\"busy-spin\"} 7\n"), std::string::npos);
  EXPECT_NE(text.find("faultline_gpu_memory_used_bytes{run=\"seed \\\"pipe\\\"\",gpu=\"0\"} 100\n"), std::string::npos);
  EXPECT_NE(text.find("faultline_gpu_utilization_percent{run=\"seed \\\"pipe\\\"\",gpu=\"0\"} 3\n"), std::string::npos);
  // Each family's samples follow its own TYPE line.
  EXPECT_LT(text.find("# TYPE faultline_gpu_memory_total_bytes"), text.find("faultline_gpu_memory_total_bytes{"));
  EXPECT_GT(text.find("# TYPE faultline_gpu_memory_total_bytes"), text.find("faultline_gpu_memory_used_bytes{"));
}

// What a malformed live.jsonl or diagnosis.json can make of the run object:
// missing keys, wrong types, non-objects. No throw, no read of a missing key
// of a const object (undefined behaviour: a failed assertion in Debug).
TEST(MetricsTest, MalformedRunsAndDiagnosesAreSafe) {
  for (const char* run_text :
       {R"({"services": [{"name": "x"}]})", R"({"services": [5, "s", null, [], {"log": 3, "progress": "p"}]})",
        R"({"name": 7, "services": {"a": 1}, "gpu": {"devices": [{"index": "zero", "memory_used_bytes": 1}, 3]}})",
        R"({"services": [{"name": ["a"], "state": 1, "phase": 2, "pid": "p", "log": {"bytes": "b"}}]})", "[]", "null",
        "12"}) {
    auto run = nlohmann::json::parse(run_text);
    for (const char* diag_text : {"null", R"({"stall": 1})", R"({"stall": {"stalled_for_s": "x", "class": 3}})",
                                  R"({"service": 4, "stall": {}})", "[1]"}) {
      std::string text;
      EXPECT_NO_THROW(text = PrometheusText(run, nlohmann::json::parse(diag_text))) << run_text << " / " << diag_text;
      EXPECT_NE(text.find("# TYPE faultline_stall_seconds gauge"), std::string::npos);
    }
  }
  auto one = PrometheusText(nlohmann::json::parse(R"({"services": [{"name": "x"}]})"), nullptr);
  EXPECT_NE(one.find("faultline_service_state{run=\"\",service=\"x\",state=\"unknown\"} 1"), std::string::npos) << one;
  EXPECT_NE(one.find("faultline_service_log_bytes{run=\"\",service=\"x\"} 0"), std::string::npos) << one;
}

}  // namespace
}  // namespace faultline::web
