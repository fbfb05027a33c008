// One job, many nodes: before ranking, the findings of several files are
// made comparable.
//
// Identity: a file whose path names its writer (input/job_layout.h: Slurm's
// slurm-%j-%t.out, torchelastic's attempt_N/<local_rank>/, a faultline run
// directory's node) gives its unprefixed lines that rank and a process of
// their own, so two nodes' unprefixed lines are never one process.
//
// Clock skew: each file's clock is anchored on an event every node logs at
// (nearly) the same moment. First choice, the earliest distributed-init phase
// line of each file (the rendezvous / NCCL or Gloo init: a collective, so
// every rank reaches it within the same second); else, when every file lies
// in a faultline run directory, the run's start (srun starts a step's tasks
// together). A file whose anchor is kSkewToleranceSeconds or more off the
// median of all anchors has its timestamps shifted by that difference, and a
// warning says so. Files without timestamps are ordered as before (by file).
#ifndef FAULTLINE_DIAGNOSIS_CROSS_NODE_H_
#define FAULTLINE_DIAGNOSIS_CROSS_NODE_H_

#include <vector>

#include "diagnosis/findings.h"
#include "input/input_files.h"

namespace faultline::diagnosis {

inline constexpr double kSkewToleranceSeconds = 2.0;

void AlignAcrossNodes(const std::vector<input::InputFile>& files, Findings* findings);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_CROSS_NODE_H_
