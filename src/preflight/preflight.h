// faultline preflight: checks a vLLM / SGLang / torchrun launch against the
// GPUs (real ones through NVML / nvidia-smi, or planned with --gpus N
// --gpu-memory SIZE / --gpu-type NAME) and the model's config.json before it
// starts, and says what would fail, with the launcher's own error and a fix.
#ifndef FAULTLINE_PREFLIGHT_PREFLIGHT_H_
#define FAULTLINE_PREFLIGHT_PREFLIGHT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "preflight/memory_estimate.h"
#include "preflight/report.h"
#include "probe/gpu_inventory.h"
#include "util/status.h"

namespace faultline::preflight {

struct PreflightRequest {
  std::vector<std::string> command;         // the launch command line
  std::map<std::string, std::string> env;   // the environment it would run in
  std::optional<int> plan_gpus;             // --gpus N: the node's GPUs as if NVML reported them
  std::optional<uint64_t> plan_gpu_memory;  // --gpu-memory SIZE
  std::string plan_gpu_type;                // --gpu-type NAME
  std::string model_config;                 // --model-config FILE
  // Real inventory when no plan is given; nullptr = NVML, then nvidia-smi.
  probe::GpuInventorySource* gpu_source = nullptr;
  bool check_port = true;
  VllmVersion vllm_version;  // --vllm-version; unknown: the newest behaviour
};

// kInvalidArgument / kNotFound for input errors (unparseable command, unknown
// GPU type, unreadable or malformed --model-config, no GPU inventory and no
// plan): the CLI exits 2. Problems of the launch itself are findings.
Result<PreflightReport> RunPreflight(const PreflightRequest& request);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_PREFLIGHT_H_
