// What a path inside a job directory says about who wrote the log: the
// layouts multi-node jobs leave behind, mapped to ranks and nodes so that
// `faultline triage JOBDIR` can order many nodes' logs as one job.
//
//   slurm-<jobid>-<task>.out / .err   sbatch/srun --output=slurm-%j-%t.out: %t is the task (global rank)
//   .../attempt_<N>/<local_rank>/stdout.log|stderr.log|error.json
//                                     torchelastic's log_dir (the local rank on its node)
//   <run dir>/<service>.log           a faultline run directory (it holds live.jsonl); its
//                                     scheduler.json names the node (SLURM_NODEID) and task
//
// A faultline run directory's own records (live.jsonl, diagnosis.json,
// diagnosis.txt, scheduler.json) are faultline's output, not the job's logs.
#ifndef FAULTLINE_INPUT_JOB_LAYOUT_H_
#define FAULTLINE_INPUT_JOB_LAYOUT_H_

#include <cstdint>
#include <string>

namespace faultline::input {

struct FileIdentity {
  int rank = -1;              // global rank, when the layout says it
  int local_rank = -1;        // torchelastic's per-node rank directory
  int attempt = -1;           // torchelastic restart attempt
  std::string node;           // "3": the node (SLURM_NODEID) of a faultline run directory
  int64_t run_start_ms = -1;  // a run directory's first record, in that node's clock
  // "rank7", "node3/local_rank1", "node3": how reports name the writer; "" when unknown.
  std::string Tag() const;
};

FileIdentity IdentifyLogPath(const std::string& path);

// True for live.jsonl, diagnosis.json, diagnosis.txt and scheduler.json inside a faultline run directory.
bool IsFaultlineRecord(const std::string& path);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_JOB_LAYOUT_H_
