#include "web/run_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace faultline::web {
namespace {

namespace fs = std::filesystem;

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("run_dir_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    dir_ = root_ / "20261129-092647-seed-pipeline";
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Append(const std::string& line) { std::ofstream(dir_ / "live.jsonl", std::ios::app) << line << "\n"; }

  fs::path root_;
  fs::path dir_;
};

TEST_F(RunDirTest, FollowsEventsStatusAndTheEnd) {
  std::ofstream(dir_ / "vllm.log") << "INFO starting\n";
  RunDir run(dir_.string());
  EXPECT_TRUE(run.Refresh());
  ASSERT_EQ(run.services().size(), 1u);
  EXPECT_EQ(run.services()[0].state, "unknown");
  EXPECT_EQ(run.RunJson(0)["state"], "logs-only");
  EXPECT_EQ(run.name(), "seed-pipeline");

  Append(R"({"command":["vllm","serve"],"event":"started","gpus":[0,1],"log_path":")" + (dir_ / "vllm.log").string() +
         R"(","pid":1905,"schema":"faultline.live/1","service":"vllm","time":"2026-11-29T09:26:47.750Z","type":"event"})");
  // A record cut mid-line (being written) waits for its newline.
  std::ofstream(dir_ / "live.jsonl", std::ios::app)
      << R"({"schema":"faultline.live/1","type":"status","time":"2026-11-29T09:26:50.750Z","service":"vllm","elapsed_s":3.0,"phase":"distributed-init",)";
  EXPECT_TRUE(run.Refresh());
  EXPECT_EQ(run.services()[0].state, "running");
  EXPECT_EQ(*run.services()[0].pid, 1905);
  EXPECT_TRUE(run.services()[0].last_status.is_null());
  Append(R"("progress":{"seconds_since":2.0,"last":["log +1 KiB"]},"processes":[{"pid":1905,"ppid":1,"comm":"python3","state":"R","cpu_percent":98.5,"rss_bytes":1048576,"threads":4},{"pid":1906,"ppid":1905,"comm":"python3","state":"S","cpu_percent":1.5,"rss_bytes":2097152,"threads":2}],"log":null,"caches":[],"gpu":{"available":true,"source":"fake","devices":[{"index":0,"memory_used_bytes":1000,"memory_total_bytes":8000,"utilization_percent":50}],"processes":[{"pid":1905,"gpu":0,"memory_used_bytes":1000}]}})");
  EXPECT_TRUE(run.Refresh());
  EXPECT_FALSE(run.Refresh());  // nothing new
  auto j = run.RunJson(ParseIsoMillis("2026-11-29T09:26:57.750Z"));
  EXPECT_EQ(j["state"], "running");
  const auto& s = j["services"][0];
  EXPECT_EQ(s["phase"], "distributed-init");
  EXPECT_DOUBLE_EQ(s["cpu_percent"].get<double>(), 100.0);
  EXPECT_EQ(s["rss_bytes"], 3145728);
  EXPECT_DOUBLE_EQ(s["uptime_s"].get<double>(), 10.0);
  EXPECT_EQ(s["processes"].size(), 2u);
  auto samples = run.SamplesJson();
  EXPECT_EQ(samples["services"]["vllm"].size(), 1u);
  EXPECT_EQ(samples["gpu"][0]["devices"][0]["utilization_percent"], 50);

  Append(R"({"event":"exited","exit_code":1,"pid":1905,"schema":"faultline.live/1","service":"vllm","signal":null,"time":"2026-11-29T09:26:59.750Z","type":"event"})");
  Append(R"({"detail":"exited with code 1","elapsed_s":12.0,"exit_code":1,"log_path":null,"outcome":"died","pid":1905,"schema":"faultline.live/1","service":"vllm","signal":null,"stall":null,"time":"2026-11-29T09:27:00.000Z","triage":null,"type":"diagnosis"})");
  Append(R"({"event":"stopped","killed_after_grace":[],"schema":"faultline.live/1","seconds":0.02,"service":"seed-pipeline","signalled":1,"time":"2026-11-29T09:27:01.180Z","type":"event"})");
  EXPECT_TRUE(run.Refresh());
  j = run.RunJson(ParseIsoMillis("2026-11-29T09:30:00.000Z"));
  EXPECT_EQ(j["state"], "finished");
  EXPECT_EQ(j["services"][0]["state"], "died");
  EXPECT_EQ(j["services"][0]["exit_code"], 1);
  EXPECT_DOUBLE_EQ(j["services"][0]["uptime_s"].get<double>(), 12.0);  // until it exited, not now
  EXPECT_EQ(j["outcome"]["outcome"], "died");
  EXPECT_EQ(run.diagnosis()["service"], "vllm");
}

TEST_F(RunDirTest, ResolvesTheNewestRunOfARunsDirectory) {
  fs::create_directories(root_ / "20261129-100000-later");
  std::ofstream(root_ / "20261129-100000-later" / "live.jsonl") << "";
  std::ofstream(dir_ / "live.jsonl") << "";
  EXPECT_EQ(ResolveRunDir(root_.string()), (root_ / "20261129-100000-later").string());
  EXPECT_EQ(ResolveRunDir(dir_.string()), dir_.string());
  EXPECT_EQ(ResolveRunDir((root_ / "nope").string()), "");
  EXPECT_EQ(ParseIsoMillis("1970-01-01T00:00:01.250Z"), 1250);
  EXPECT_EQ(ParseIsoMillis("garbage"), -1);
}

// Records of the wrong shape are skipped without stopping the reader; a
// log_path outside the run directory is not taken.
TEST_F(RunDirTest, MalformedRecordsAndForeignLogPathsAreSkipped) {
  Append(R"({"type": 5, "service": "a"})");
  Append(R"({"type": "event", "event": "started", "service": ["x"]})");
  Append(R"({"type": "event", "event": "started", "service": "vllm", "log_path": "/etc/shadow", "command": "x"})");
  Append(R"({"type": "event", "event": "started", "service": "vllm", "log_path": "../../etc/shadow"})");
  Append(R"({"type": "status", "service": "vllm", "processes": [{"pid": "one", "cpu_percent": "x"}, 3], "progress": 1})");
  Append(R"({"type": "diagnosis", "service": "vllm", "outcome": "died", "stall": 3, "triage": {"x": 1}})");
  Append(R"({"type": "event", "event": "started", "service": "ok", "log_path": "sub/ok.log"})");
  RunDir run(dir_.string());
  EXPECT_NO_THROW(run.Refresh());
  const ServiceState* v = run.service("vllm");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->log_path, (dir_ / "vllm.log").string());
  ASSERT_NE(run.service("ok"), nullptr);
  EXPECT_EQ(run.service("ok")->log_path, (dir_ / "sub/ok.log").string());
  nlohmann::json j;
  EXPECT_NO_THROW(j = run.RunJson(0));
  EXPECT_EQ(j["outcome"]["outcome"], "died");
}

}  // namespace
}  // namespace faultline::web
