#include "mining/masker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::mining {
namespace {

std::unique_ptr<Masker> Make(MaskOptions options = {}) {
  auto masker = Masker::Create(std::move(options));
  EXPECT_TRUE(masker.ok()) << masker.status().message();
  return std::move(masker.value());
}

std::string Masked(Masker& masker, std::string_view message) { return std::string(masker.Mask(message).key); }

TEST(Masker, NumbersAndUnits) {
  auto m = Make();
  EXPECT_EQ(Masked(*m, "step 3/20 loss 0.7049 lr 0.0500"), "step <*> loss <*> lr <*>");
  EXPECT_EQ(Masked(*m, "Timed out waiting 10000ms for recv operation to complete"),
            "Timed out waiting <*> for recv operation to complete");
  EXPECT_EQ(Masked(*m, "Using max model len 32768"), "Using max model len <*>");
}

TEST(Masker, RanksAndPidsKeepTheirKey) {
  auto m = Make();
  EXPECT_EQ(Masked(*m, "[startup] rank=1 local_rank=1 world_size=2 backend=gloo pid=1049"),
            "[startup] rank=<*> local_rank=<*> world_size=<*> backend=gloo pid=<*>");
  EXPECT_EQ(Masked(*m, "(EngineCore_DP1 pid=6688) [rank0]: failed (exitcode: 1) local_rank: 0 (pid: 1048)"),
            "(EngineCore_DP<*> pid=<*>) [rank<*>]: failed (exitcode: <*>) local_rank: <*> (pid: <*>)");
}

TEST(Masker, HexUuidIpPath) {
  auto m = Make();
  EXPECT_EQ(Masked(*m, "[instance: b9000564-fe1a-409b-b8cc-1e88b294cd1d] Terminating instance"),
            "[instance: <*>] Terminating instance");
  EXPECT_EQ(Masked(*m, "flg=0x18800000 token=Token{78af589 ActivityRecord{3b04890"),
            "flg=<*> token=Token{<*> ActivityRecord{<*>");
  EXPECT_EQ(Masked(*m, "connect to 10.0.0.1:29500 and node-1.cluster.local:29500"), "connect to <*> and <*>");
  EXPECT_EQ(Masked(*m, "File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/run.py\", line 83,"),
            "File \"<*>\", line <*>,");
}

TEST(Masker, HostNamesWithDigits) {
  auto m = Make();
  // From the loghub OpenSSH sample.
  EXPECT_EQ(Masked(*m, "rhost=ec2-52-80-34-196.cn-north-1.compute.amazonaws.com.cn user=root"), "rhost=<*> user=root");
  EXPECT_EQ(Masked(*m, "rhost=5.36.59.76.dynamic-dsl-ip.omantel.net.om"), "rhost=<*>");
  // A library name is not a host: its last label is a number.
  EXPECT_EQ(Masked(*m, "libcuda.so.1 com.apple.icloud.fmfd.heartbeat:"),
            "libcuda.so.<*> com.apple.icloud.fmfd.heartbeat:");
}

TEST(Masker, DigitRunsInsideWords) {
  auto m = Make();
  EXPECT_EQ(Masked(*m, "blk_-1608999687919862906 calvisitor-10-105-160-95 cuda:0 PCI 0000:02:0e.0[A]"),
            "blk_<*> calvisitor-<*>-<*>-<*>-<*> cuda:<*> PCI <*>:<*>:<*>.<*>[A]");
  // Letters next to digits that are not hex stay: these are names.
  EXPECT_EQ(Masked(*m, "Qwen3_5ForConditionalGeneration on sda1 ext4"), "Qwen3_5ForConditionalGeneration on sda1 ext4");
  // Short hex-looking names that start with a letter stay (interface ee0);
  // longer ones are ids.
  EXPECT_EQ(Masked(*m, "interface ee0 AppWindowToken{df0798e"), "interface ee0 AppWindowToken{<*>");
}

TEST(Masker, DateWords) {
  auto m = Make();
  EXPECT_EQ(Masked(*m, "connection from 1.2.3.4 () at Fri Jul  1 07:57:30 2005"),
            "connection from <*> () at <*> <*> <*> <*> <*>");
  MaskOptions no_date;
  no_date.date = false;
  auto plain = Make(no_date);
  EXPECT_EQ(Masked(*plain, "at Fri Jul 1"), "at Fri Jul <*>");
}

TEST(Masker, ClassesCanBeTurnedOff) {
  MaskOptions options;
  options.numbers = options.hex = options.ip = options.uuid = options.path = options.date = false;
  auto m = Make(options);
  EXPECT_EQ(Masked(*m, "rank=3 at 10.0.0.1 /tmp/x/y"), "rank=3 at 10.0.0.1 /tmp/x/y");
}

TEST(Masker, PatternsCollapseAndSeparators) {
  MaskOptions options;
  options.patterns = {R"(\(\d+(\.\d+)? [KMG]B\))"};
  options.collapse_wildcards = true;
  auto m = Make(options);
  // From the loghub Proxifier sample: the size in parentheses comes and goes.
  EXPECT_EQ(Masked(*m, "close, 1190 bytes (1.16 KB) sent, 1671 bytes (1.63 KB) received, lifetime 00:02"),
            "close, <*> bytes <*> sent, <*> bytes <*> received, lifetime <*>");

  MaskOptions rewrite;
  rewrite.patterns = {{R"(bytes( \([^)]*\))? sent)", "bytes <*> sent"}};
  auto r = Make(rewrite);
  EXPECT_EQ(Masked(*r, "0 bytes sent"), "<*> bytes <*> sent");
  EXPECT_EQ(Masked(*r, "1190 bytes (1.16 KB) sent"), "<*> bytes <*> sent");

  MaskOptions split;
  split.delimiters = "=,";
  auto s = Make(split);
  const MaskedMessage& masked = s->Mask("a=1, b=x");
  ASSERT_EQ(masked.tokens.size(), 4u);
  EXPECT_EQ(masked.tokens[1], "<*>");
  EXPECT_EQ(masked.separators[1], "=");
  EXPECT_EQ(masked.separators[2], ", ");
}

TEST(Masker, MaxTokensCutsTheTail) {
  MaskOptions options;
  options.max_tokens = 3;
  auto m = Make(options);
  EXPECT_EQ(Masked(*m, "a b c d e f"), "a b <*>");
  EXPECT_EQ(Masked(*m, "a b c"), "a b c");
}

TEST(Masker, BadPatternIsAnError) {
  MaskOptions options;
  options.patterns = {"(unclosed"};
  auto m = Masker::Create(options);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("(unclosed"), std::string::npos);
}

TEST(Masker, HasVariable) {
  EXPECT_TRUE(Masker::HasVariable("<*>"));
  EXPECT_TRUE(Masker::HasVariable("rank=<*>"));
  EXPECT_TRUE(Masker::HasVariable("rank0"));
  EXPECT_FALSE(Masker::HasVariable("Terminating"));
}

}  // namespace
}  // namespace faultline::mining
