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

}  // namespace
}  // namespace faultline::web
