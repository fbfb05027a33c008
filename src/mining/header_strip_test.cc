#include "mining/header_strip.h"

#include <gtest/gtest.h>

namespace faultline::mining {
namespace {

TEST(StripHeader, NoneKeepsTheLine) {
  EXPECT_EQ(StripHeader("INFO 05-09 15:14:43 [model.py:549] Resolved architecture", HeaderMode::kNone),
            "INFO 05-09 15:14:43 [model.py:549] Resolved architecture");
}

TEST(StripHeader, VllmLines) {
  // Lines from tests/golden/vllm-seed-dp-rank/vllm.log.
  EXPECT_EQ(StripHeader("INFO 05-09 15:14:43 [model.py:1678] Using max model len 32768", HeaderMode::kAuto),
            "Using max model len 32768");
  EXPECT_EQ(StripHeader("(EngineCore_DP1 pid=6688) ERROR 05-09 15:15:10 [core.py:1136]     raise e from None",
                        HeaderMode::kAuto),
            "raise e from None");
}

TEST(StripHeader, TorchrunGlogLine) {
  // From tests/golden/torchrun-collective-timeout/train.log.
  EXPECT_EQ(StripHeader("W1129 08:47:19.233000 570 torch/distributed/elastic/multiprocessing/api.py:1012] "
                        "Sending process 1049 closing signal SIGTERM",
                        HeaderMode::kAuto),
            "Sending process 1049 closing signal SIGTERM");
}

TEST(StripHeader, HdfsComponentColon) {
  EXPECT_EQ(StripHeader("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block "
                        "blk_38865049064139660 terminating",
                        HeaderMode::kAuto),
            "PacketResponder 1 for block blk_38865049064139660 terminating");
}

TEST(StripHeader, BareMessageIsKept) {
  EXPECT_EQ(StripHeader("step 3/20 loss 0.7049 lr 0.0500", HeaderMode::kAuto), "step 3/20 loss 0.7049 lr 0.0500");
  EXPECT_EQ(StripHeader("rank 0: process group initialized (gloo, world size 2)", HeaderMode::kAuto),
            "rank 0: process group initialized (gloo, world size 2)");
}

TEST(StripHeader, NeverDropsTheWholeLine) {
  EXPECT_EQ(StripHeader("INFO 05-09 15:14:31", HeaderMode::kAuto), "15:14:31");
  EXPECT_EQ(StripHeader("", HeaderMode::kAuto), "");
}

}  // namespace
}  // namespace faultline::mining
