#include "input/job_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace faultline::input {
namespace {

namespace fs = std::filesystem;

TEST(JobLayoutTest, SlurmPerTaskFilesNameTheRank) {
  EXPECT_EQ(IdentifyLogPath("logs/slurm-4242-7.out").rank, 7);
  EXPECT_EQ(IdentifyLogPath("logs/slurm-4242-12.err").Tag(), "rank12");
  EXPECT_EQ(IdentifyLogPath("logs/slurm-4242.out").rank, -1);  // one file for the whole job
  EXPECT_EQ(IdentifyLogPath("logs/slurm-abc-3.out").rank, -1);
  EXPECT_EQ(IdentifyLogPath("train.log").Tag(), "");
}

TEST(JobLayoutTest, TorchelasticAttemptFoldersNameTheLocalRank) {
  FileIdentity id = IdentifyLogPath("/tmp/elastic/none_abc/attempt_1/3/stderr.log");
  EXPECT_EQ(id.local_rank, 3);
  EXPECT_EQ(id.attempt, 1);
  EXPECT_EQ(id.Tag(), "local_rank3");
  EXPECT_EQ(IdentifyLogPath("/tmp/x/attempt_one/3/stderr.log").local_rank, -1);
}

TEST(JobLayoutTest, RunDirectoriesNameTheirNodeAndHideTheirRecords) {
  fs::path run = fs::temp_directory_path() / ("faultline-job-" + std::to_string(getpid())) / "node3" / "runs" /
                 "20261201-120000-python3";
  fs::create_directories(run);
  std::ofstream(run / "live.jsonl") << R"({"schema":"faultline.live/1","type":"event","event":"started",)"
                                    << R"("service":"python3","time":"2026-12-01T12:00:00.250Z"})"
                                    << "\n";
  std::ofstream(run / "scheduler.json") << R"({"job_id": "4242", "node_id": "3", "rank": "3"})";
  std::ofstream(run / "python3.log") << "hello\n";
  FileIdentity id = IdentifyLogPath((run / "python3.log").string());
  EXPECT_EQ(id.node, "3");
  EXPECT_EQ(id.Tag(), "node3");
  EXPECT_EQ(id.run_start_ms, 1796126400250);
  EXPECT_TRUE(IsFaultlineRecord((run / "live.jsonl").string()));
  EXPECT_TRUE(IsFaultlineRecord((run / "scheduler.json").string()));
  EXPECT_FALSE(IsFaultlineRecord((run / "python3.log").string()));
  EXPECT_FALSE(IsFaultlineRecord("elsewhere/diagnosis.json"));  // not in a run directory
  fs::remove_all(run.parent_path().parent_path().parent_path());
}

}  // namespace
}  // namespace faultline::input
