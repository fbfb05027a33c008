#include "mining/template_miner.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "mining/header_strip.h"

namespace faultline::mining {
namespace {

std::unique_ptr<TemplateMiner> Make(MinerOptions options) {
  auto miner = TemplateMiner::Create(std::move(options));
  EXPECT_TRUE(miner.ok()) << miner.status().message();
  return std::move(miner.value());
}

TEST(TemplateMiner, SameLineFromEveryRankIsOneTemplate) {
  TemplateMiner miner;
  TemplateId first = kNoTemplate;
  for (int rank = 0; rank < 64; ++rank) {
    TemplateId id =
        miner.Add(fmt::format("[rank{}]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:{}, "
                              "unhandled system error (run with NCCL_DEBUG=INFO for details), "
                              "NCCL version 2.{}.3",
                              rank, 1970 + rank % 2, 20 + rank % 3));
    if (rank == 0) first = id;
    EXPECT_EQ(id, first);
  }
  ASSERT_EQ(miner.size(), 1u);
  const Template& t = miner.Get(first);
  EXPECT_EQ(t.count(), 64u);
  EXPECT_EQ(t.text(),
            "[rank<*>]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:<*>, unhandled system error (run with "
            "NCCL_DEBUG=INFO for details), NCCL version <*>");
  EXPECT_EQ(miner.messages(), 64u);
}

TEST(TemplateMiner, DifferentMessagesStayApart) {
  TemplateMiner miner;
  TemplateId a = miner.Add("Loading weights took 12.31 seconds");
  TemplateId b = miner.Add("Memory profiling takes 3.10 seconds");
  TemplateId c = miner.Add("Loading weights took 11.02 seconds");
  EXPECT_NE(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(miner.Get(a).text(), "Loading weights took <*> seconds");
  EXPECT_EQ(miner.Get(a).count(), 2u);
  EXPECT_EQ(miner.Get(b).count(), 1u);
}

TEST(TemplateMiner, DrainGeneralizesADifferingWord) {
  MinerOptions options;
  options.variant_values = 0;
  auto miner = Make(options);
  TemplateId a = miner->Add("Invalid user webmaster from 173.234.31.186");
  TemplateId b = miner->Add("Invalid user test9 from 52.80.34.196");
  EXPECT_EQ(a, b);
  EXPECT_EQ(miner->Get(a).text(), "Invalid user <*> from <*>");
}

TEST(TemplateMiner, FewValuesAreVariantsManyAreVariables) {
  MinerOptions options;
  options.variant_values = 2;
  auto miner = Make(options);
  TemplateId root = miner->Add("Disconnecting: Too many authentication failures for root [preauth]");
  TemplateId admin = miner->Add("Disconnecting: Too many authentication failures for admin [preauth]");
  EXPECT_NE(root, admin);
  EXPECT_EQ(miner->Add("Disconnecting: Too many authentication failures for root [preauth]"), root);
  EXPECT_EQ(miner->Get(admin).text(), "Disconnecting: Too many authentication failures for admin [preauth]");
  EXPECT_EQ(miner->size(), 2u);

  // A third value makes the position a variable: the variants merge and the
  // younger id forwards to the older one.
  TemplateId guest = miner->Add("Disconnecting: Too many authentication failures for guest [preauth]");
  EXPECT_EQ(guest, root);
  EXPECT_EQ(miner->size(), 1u);
  ASSERT_NE(miner->Find(admin), nullptr);
  EXPECT_EQ(miner->Find(admin)->id(), root);
  EXPECT_EQ(miner->Get(root).text(), "Disconnecting: Too many authentication failures for <*> [preauth]");
  EXPECT_EQ(miner->Get(root).count(), 4u);
  EXPECT_EQ(miner->Get(root).merged_ids(), std::vector<TemplateId>{admin});
}

TEST(TemplateMiner, AMaskedValueMakesAVariableAtOnce) {
  MinerOptions options;
  options.variant_values = 3;
  auto miner = Make(options);
  // From the loghub OpenSSH sample: "0" is masked, so "admin" is a value of
  // the same variable, not a second event.
  TemplateId a = miner->Add("Failed none for invalid user 0 from 5.188.10.180 port 49811 ssh2");
  TemplateId b = miner->Add("Failed none for invalid user admin from 5.188.10.180 port 52631 ssh2");
  EXPECT_EQ(a, b);
  EXPECT_EQ(miner->Get(a).text(), "Failed none for invalid user <*> from <*> port <*> ssh2");
  // Behind a common key too.
  TemplateId c = miner->Add(
      "authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=5.36.59.76.dynamic-dsl-ip.omantel.net.om");
  TemplateId d = miner->Add("authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=csnsu.nsuok.edu");
  EXPECT_EQ(c, d);
  // But a masked part inside a constant does not: (uid=<*>) vs LOGIN(uid=<*>).
  TemplateId e = miner->Add("session opened for user cyrus by (uid=0)");
  TemplateId f = miner->Add("session opened for user root by LOGIN(uid=0)");
  EXPECT_NE(e, f);
}

TEST(TemplateMiner, SimilarityThresholdSplits) {
  MinerOptions options;
  options.similarity = 0.8;
  options.prefix_tokens = 1;
  options.variant_values = 0;  // plain Drain: only the threshold decides
  auto miner = Make(options);
  TemplateId a = miner->Add("Failed to get next element [HRESULT = 0x800f080d - CBS_E_MANIFEST_INVALID_ITEM]");
  TemplateId b = miner->Add("Failed to internally open package. [HRESULT = 0x800f0805 - CBS_E_INVALID_PACKAGE]");
  EXPECT_NE(a, b);
  options.similarity = 0.4;
  auto loose = Make(options);
  TemplateId c = loose->Add("Failed to get next element [HRESULT = 0x800f080d - CBS_E_MANIFEST_INVALID_ITEM]");
  TemplateId d = loose->Add("Failed to internally open package. [HRESULT = 0x800f0805 - CBS_E_INVALID_PACKAGE]");
  EXPECT_EQ(c, d);
  EXPECT_EQ(loose->Get(c).text(), "Failed to <*> <*> <*> [HRESULT = <*> - CBS_E_<*>]");
}

TEST(TemplateMiner, AVariableKeepsWhatItsValuesShare) {
  TemplateMiner miner;
  // From the loghub Thunderbird sample: the comma and the key survive.
  TemplateId a = miner.Add("synchronized to 10.100.20.250, stratum 3");
  TemplateId b = miner.Add("synchronized to LOCAL(0), stratum 10");
  EXPECT_EQ(a, b);
  EXPECT_EQ(miner.Get(a).text(), "synchronized to <*>, stratum <*>");
  TemplateId c = miner.Add("data_thread() got not answer from any [Thunderbird_A8] datasource");
  for (const char* node : {"B3", "C1", "D7", "E2"}) {
    miner.Add(fmt::format("data_thread() got not answer from any [Thunderbird_{}] datasource", node));
  }
  // Past variant_values (3) node names the position is a variable.
  EXPECT_EQ(miner.size(), 2u);
  EXPECT_EQ(miner.Get(c).count(), 5u);
  EXPECT_EQ(miner.Get(c).text(), "data_thread() got not answer from any [Thunderbird_<*>] datasource");
}

TEST(TemplateMiner, LengthsNeverMix) {
  TemplateMiner miner;
  EXPECT_NE(miner.Add("worker 3 exited"), miner.Add("worker 3 exited with code 1"));
}

TEST(TemplateMiner, CapEvictsLeastRecentlyMatched) {
  MinerOptions options;
  options.max_templates = 2;
  auto miner = Make(options);
  TemplateId a = miner->Add("alpha started");
  TemplateId b = miner->Add("beta node joined the ring");
  EXPECT_EQ(miner->Add("alpha started"), a);  // a is now the most recent
  TemplateId c = miner->Add("gamma shard moved to another host now");
  EXPECT_EQ(miner->size(), 2u);
  EXPECT_EQ(miner->evicted(), 1u);
  EXPECT_EQ(miner->Find(b), nullptr);
  ASSERT_NE(miner->Find(a), nullptr);
  ASSERT_NE(miner->Find(c), nullptr);
  // An evicted template comes back under a new id, counted from zero.
  TemplateId b2 = miner->Add("beta node joined the ring");
  EXPECT_NE(b2, b);
  EXPECT_EQ(miner->Get(b2).count(), 1u);
  EXPECT_EQ(miner->size(), 2u);
}

TEST(TemplateMiner, CacheOffGivesTheSameGroups) {
  MinerOptions cached;
  MinerOptions uncached;
  uncached.cache_entries = 0;
  auto a = Make(cached);
  auto b = Make(uncached);
  const char* lines[] = {"step 1/20 loss 0.7146 lr 0.0500", "rank 0: process group initialized (gloo, world size 2)",
                         "step 2/20 loss 0.6900 lr 0.0500", "rank 1: process group initialized (gloo, world size 2)",
                         "step 1/20 loss 0.7146 lr 0.0500"};
  for (const char* line : lines) EXPECT_EQ(a->Add(line), b->Add(line));
  EXPECT_EQ(a->size(), b->size());
}

TEST(TemplateMiner, BadPatternFailsCreate) {
  MinerOptions options;
  options.mask.patterns = {"[z-a]"};
  EXPECT_FALSE(TemplateMiner::Create(options).ok());
}

TEST(TemplateMiner, RealTorchrunLog) {
  // A real torchrun run (two ranks, a gloo collective timeout).
  std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) + "/tests/golden/torchrun-collective-timeout/train.log");
  ASSERT_TRUE(in) << "fixture missing";
  TemplateMiner miner;
  std::map<TemplateId, std::string> first_line;
  std::string line;
  size_t lines = 0;
  TemplateId step = kNoTemplate;
  while (std::getline(in, line)) {
    ++lines;
    TemplateId id = miner.Add(StripHeader(line, HeaderMode::kAuto));
    first_line.emplace(id, line);
    if (line.starts_with("step 1/20")) step = id;
  }
  ASSERT_NE(step, kNoTemplate);
  EXPECT_EQ(miner.Get(step).text(), "step <*> loss <*> lr <*>");
  EXPECT_GE(miner.Get(step).count(), 4u);
  EXPECT_LT(miner.size(), lines);  // it does collapse
  uint64_t total = 0;
  for (const Template* t : miner.Templates()) total += t->count();
  EXPECT_EQ(total, lines);
}

}  // namespace
}  // namespace faultline::mining
