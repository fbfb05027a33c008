#include "preflight/visible_devices.h"

#include <gtest/gtest.h>

namespace faultline::preflight {
namespace {

std::vector<probe::GpuInfo> Node(int n) {
  std::vector<probe::GpuInfo> gpus;
  for (int i = 0; i < n; ++i) {
    probe::GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H200";
    g.uuid =
        "GPU-" + std::string(1, static_cast<char>('a' + i)) + "1b2c3d4-0000-1111-2222-33334444555" + std::to_string(i);
    gpus.push_back(g);
  }
  return gpus;
}

TEST(VisibleDevicesTest, UnsetMeansAll) {
  VisibleDevices v = ResolveVisibleDevices(Node(8), {});
  EXPECT_EQ(v.node_indices.size(), 8u);
  EXPECT_FALSE(v.setting.has_value());
  EXPECT_EQ(v.Describe(8), "all 8 GPUs (CUDA_VISIBLE_DEVICES unset)");
}

TEST(VisibleDevicesTest, IndicesInTheGivenOrder) {
  VisibleDevices v = ResolveVisibleDevices(Node(8), {{"CUDA_VISIBLE_DEVICES", "3, 1"}});
  EXPECT_EQ(v.node_indices, (std::vector<int>{3, 1}));
  EXPECT_TRUE(v.problems.empty());
}

TEST(VisibleDevicesTest, UuidsAndUniquePrefixes) {
  std::vector<probe::GpuInfo> node = Node(4);
  VisibleDevices v = ResolveVisibleDevices(node, {{"CUDA_VISIBLE_DEVICES", node[2].uuid + ",GPU-d1b"}});
  EXPECT_EQ(v.node_indices, (std::vector<int>{2, 3}));
}

TEST(VisibleDevicesTest, StopsAtTheFirstInvalidEntry) {
  VisibleDevices v = ResolveVisibleDevices(Node(4), {{"CUDA_VISIBLE_DEVICES", "0,7,1"}});
  EXPECT_EQ(v.node_indices, (std::vector<int>{0}));
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("'7'"), std::string::npos);
  EXPECT_TRUE(v.truncated);
}

TEST(VisibleDevicesTest, RepeatedEntryHidesEveryGpu) {
  VisibleDevices v = ResolveVisibleDevices(Node(4), {{"CUDA_VISIBLE_DEVICES", "0,1,1,2"}});
  EXPECT_TRUE(v.node_indices.empty());
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("repeats GPU 1"), std::string::npos);
}

TEST(VisibleDevicesTest, EmptyMeansNone) {
  VisibleDevices v = ResolveVisibleDevices(Node(4), {{"CUDA_VISIBLE_DEVICES", ""}});
  EXPECT_TRUE(v.node_indices.empty());
  EXPECT_EQ(v.Describe(4), "CUDA_VISIBLE_DEVICES=\"\"");
}

TEST(VisibleDevicesTest, MixedModelsWithoutPciOrderAreNoted) {
  std::vector<probe::GpuInfo> node = Node(2);
  node[1].name = "NVIDIA L4";
  EXPECT_EQ(ResolveVisibleDevices(node, {}).notes.size(), 1u);
  EXPECT_TRUE(ResolveVisibleDevices(node, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}).notes.empty());
}

}  // namespace
}  // namespace faultline::preflight
