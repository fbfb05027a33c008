// nvidia-smi parsing on output recorded from the device machine's H200
// (tests/fixtures/nvidia-smi/, see its README).
#include "probe/gpu_smi.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "probe/gpu_fake.h"

namespace faultline::probe {
namespace {

std::string Recording(const std::string& name) {
  return std::string(FAULTLINE_SOURCE_DIR) + "/tests/fixtures/nvidia-smi/" + name;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char* kUuid = "GPU-a74cc3c6-9853-af36-c1fb-dc3030e49b6d";

TEST(GpuSmiTest, HeaderFormWithUnits) {
  Result<SmiTable> t = ParseSmiCsv(Read(Recording("query-gpu-header.csv")));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->Cell(0, "memory.total"), "143771 MiB");
  EXPECT_EQ(t->Cell(0, "pci.bus_id"), "00000000:00:06.0");
  Result<GpuInventory> inv = InventoryFromSmi(*t, SmiTable{});
  ASSERT_TRUE(inv.ok());
  ASSERT_EQ(inv->gpus.size(), 1u);
  const GpuInfo& g = inv->gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_EQ(g.uuid, kUuid);
  EXPECT_EQ(g.memory_total_bytes, 143771ULL << 20);
  EXPECT_EQ(g.memory_used_bytes, 0u);
}

TEST(GpuSmiTest, NoHeaderNoUnitsWithCallerColumns) {
  Result<SmiTable> gpus = ParseSmiCsv(Read(Recording("query-gpu-busy.csv")),
                                      {"index", "uuid", "name", "memory.total", "memory.used", "utilization.gpu"});
  ASSERT_TRUE(gpus.ok());
  Result<SmiTable> apps =
      ParseSmiCsv(Read(Recording("query-compute-apps-busy.csv")), {"pid", "used_memory", "gpu_uuid"});
  ASSERT_TRUE(apps.ok());
  Result<GpuInventory> inv = InventoryFromSmi(*gpus, *apps);
  ASSERT_TRUE(inv.ok());
  const GpuInfo& g = inv->gpus[0];
  EXPECT_EQ(g.memory_used_bytes, 8811ULL << 20);
  ASSERT_EQ(g.processes.size(), 1u);
  EXPECT_EQ(g.processes[0].pid, 1614);
  EXPECT_EQ(g.processes[0].used_bytes, 8802ULL << 20);
}

TEST(GpuSmiTest, EmptyComputeAppsIsNoProcess) {
  Result<SmiTable> apps =
      ParseSmiCsv(Read(Recording("query-compute-apps-idle.csv")), {"pid", "used_memory", "gpu_uuid"});
  ASSERT_TRUE(apps.ok());
  EXPECT_TRUE(apps->rows.empty());
}

TEST(GpuSmiTest, RecordedSourceJoinsProcessesByUuid) {
  std::unique_ptr<GpuInventorySource> src =
      NewRecordedSmiSource(Recording("query-gpu-header.csv"), Recording("query-compute-apps-busy-header.csv"));
  Result<GpuInventory> inv = src->Read();
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  ASSERT_EQ(inv->gpus.size(), 1u);
  ASSERT_EQ(inv->gpus[0].processes.size(), 1u);
  EXPECT_EQ(inv->gpus[0].processes[0].name, "python3");
  EXPECT_EQ(inv->gpus[0].processes[0].used_bytes, 8802ULL << 20);
}

TEST(GpuSmiTest, MemoryCells) {
  EXPECT_EQ(ParseSmiMemory("143771 MiB"), 143771ULL << 20);
  EXPECT_EQ(ParseSmiMemory("[N/A]"), 0u);
  EXPECT_EQ(ParseSmiMemory("[Not Supported]"), 0u);
  EXPECT_EQ(ParseSmiMemory("80"), 80ULL << 20);
}

TEST(GpuSmiTest, MalformedRowsAreErrors) {
  EXPECT_FALSE(ParseSmiCsv("index, name\n0\n").ok());
  EXPECT_FALSE(ParseSmiCsv("", {}).ok());
  EXPECT_FALSE(NewRecordedSmiSource("/nonexistent.csv", "")->Read().ok());
}

TEST(GpuSmiTest, NvmlSourceFailsCleanlyWithoutTheDriver) {
  // On machines without libnvidia-ml.so.1 the source reports kNotFound; on a
  // GPU machine it reads the GPUs. Either way it must not crash.
  Result<GpuInventory> inv = NewNvmlSource()->Read();
  if (!inv.ok()) {
    EXPECT_NE(inv.status().message().find("libnvidia-ml.so.1"), std::string::npos) << inv.status().message();
  } else {
    EXPECT_EQ(inv->source, "nvml");
  }
}

}  // namespace
}  // namespace faultline::probe
