// PipelineSpec: pipeline.yaml in memory — services (long-running, with a
// ready probe) and jobs (run to completion), their commands, environments,
// GPU sets, readiness probes and dependencies. The format follows
// docker-compose / process-compose where they fit (services:/processes:,
// command, environment, working_dir, depends_on with condition); see
// docs/pipeline.md. As in compose: x-* keys are ignored, YAML anchors and
// merge keys (<<: *defaults) work, ${VAR}, ${VAR:-default}, ${VAR-default},
// ${VAR:?message} and $$ are replaced in values, env_file loads KEY=VALUE
// files, relative paths (working_dir, env_file) and the default working
// directory are the pipeline file's directory, and a bare depends_on on a
// service without a probe means "started". Parsing checks everything a run
// would trip over later and reports every mistake of the file at once (one
// per line of the error message): unknown keys, overlapping GPU sets,
// ambiguous gpus:, unknown or cyclic dependencies, waiting for readiness of a
// service that has no probe.
#ifndef FAULTLINE_SUPERVISE_PIPELINE_SPEC_H_
#define FAULTLINE_SUPERVISE_PIPELINE_SPEC_H_

#include <map>
#include <string>
#include <vector>

#include "supervise/ready_probe.h"
#include "util/status.h"

namespace faultline::supervise {

struct Dependency {
  enum class Condition { kStarted, kReady, kCompleted };
  std::string name;
  Condition condition = Condition::kReady;
};
const char* ConditionName(Dependency::Condition c);

struct ServiceSpec {
  std::string name;
  bool is_job = false;            // kind: job (exit 0 = done) or service
  std::vector<std::string> argv;  // a string command becomes sh -c
  std::map<std::string, std::string> env;
  std::string working_dir;
  std::vector<int> gpus;  // -> CUDA_VISIBLE_DEVICES
  bool gpus_set = false;
  bool gpus_all = false;  // gpus: all (CUDA_VISIBLE_DEVICES left as it is)
  ReadySpec ready;
  std::vector<Dependency> depends_on;
  double stall_after = -1;  // -1: the pipeline's
};

struct PipelineSpec {
  std::string name;
  std::string source;  // file name
  double stall_after = 300;
  double grace_period = 10;
  std::vector<ServiceSpec> services;  // in file order
  // What the file means that it does not say, for run to print once
  // ("trainer starts once vllm has started: vllm has no ready: probe").
  std::vector<std::string> notes;
};

Result<PipelineSpec> ParsePipeline(const std::string& yaml_text, const std::string& source);
Result<PipelineSpec> LoadPipelineFile(const std::string& path);
// GPU indexes the pipeline names that a node with gpu_count GPUs lacks; every
// one, one per line.
Status CheckGpusOnNode(const PipelineSpec& spec, int gpu_count);
// One command as a one-job pipeline (`faultline run -- CMD...`).
PipelineSpec SingleCommandPipeline(const std::vector<std::string>& argv, double stall_after, double grace);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_PIPELINE_SPEC_H_
