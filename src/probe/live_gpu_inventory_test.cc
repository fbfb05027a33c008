// The GPU usage adapter on nvidia-smi output recorded on an H200 (tests/fixtures/nvidia-smi).
#include "probe/live_gpu_inventory.h"

#include <gtest/gtest.h>

#include "probe/gpu_fake.h"

namespace faultline::probe {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/nvidia-smi/" + name;
}

TEST(InventoryGpuSourceTest, DevicesAndProcessesFromARealRecording) {
  FakeClock clock;
  InventoryGpuSource source(
      NewRecordedSmiSource(Fixture("query-gpu-header.csv"), Fixture("query-compute-apps-busy-header.csv")), "fake",
      &clock, 5.0, "");
  GpuUsage u = source.Sample();
  ASSERT_TRUE(u.available) << u.note;
  ASSERT_EQ(u.devices.size(), 1u);
  EXPECT_EQ(u.devices[0].memory_total_bytes, 143771LL << 20);
  EXPECT_EQ(u.devices[0].utilization_percent, -1);  // no nvidia-smi to ask
  ASSERT_EQ(u.processes.size(), 1u);
  EXPECT_EQ(u.processes[0].pid, 1614);
  EXPECT_EQ(u.processes[0].memory_used_bytes, 8802LL << 20);
}

TEST(InventoryGpuSourceTest, ReadsAreRateLimited) {
  FakeClock clock;
  GpuInventory first;
  first.source = "fake";
  first.gpus.push_back(GpuInfo{});
  first.gpus[0].memory_used_bytes = 716ULL << 20;
  InventoryGpuSource source(NewFixedSource(first), "fake", &clock, 5.0, "");
  EXPECT_EQ(source.Sample().devices[0].memory_used_bytes, 716LL << 20);
  clock.Advance(1);
  EXPECT_EQ(source.Sample().devices[0].memory_used_bytes, 716LL << 20);  // cached
}

TEST(InventoryGpuSourceTest, NoGpuHereSaysWhy) {
  auto source = NewLocalGpuUsageSource(RealClock());
  GpuUsage u = source->Sample();
  if (!u.available) EXPECT_FALSE(u.note.empty());
}

}  // namespace
}  // namespace faultline::probe
