// What the kernel says about a death: /dev/kmsg lines for the dead pid (OOM
// killer) or logged while the job ran (NVRM Xid GPU errors), matched by the
// kernel_messages: patterns of rules/stall.yaml, and the OOM-kill counter of
// faultline's memory cgroup (v2 memory.events, v1 memory.oom_control). Each
// source says when it is unreadable.
#ifndef FAULTLINE_SUPERVISE_KERNEL_EVIDENCE_H_
#define FAULTLINE_SUPERVISE_KERNEL_EVIDENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "supervise/stall_rules.h"

namespace faultline::supervise {

// oom_kill of this process's memory cgroup; -1 when unreadable.
int64_t CgroupOomKills(std::string* file = nullptr);

// Monotonic seconds as the kernel log stamps them.
double KernelClockSeconds();

struct KernelEvidence {
  std::string explain;             // "killed by the OOM killer", "" when nothing explains it
  std::vector<std::string> lines;  // "kernel: Out of memory: Killed process 41 (python3) ... anon-rss:..."
  std::vector<std::string> notes;  // unreadable sources, "no kernel record ..."
};

// since: KernelClockSeconds() when the job started; oom_kills_before: the
// CgroupOomKills() then.
KernelEvidence ExplainDeath(const std::vector<KernelMessage>& messages, int64_t pid, double since,
                            int64_t oom_kills_before);

// Matching over given kmsg text (records "PRI,SEQ,USEC,FLAGS;MESSAGE"), for tests.
KernelEvidence MatchKernelLog(const std::vector<KernelMessage>& messages, const std::string& kmsg, int64_t pid,
                              double since);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_KERNEL_EVIDENCE_H_
