// Everything the individual checks look at, resolved once by the
// orchestrator (preflight.cc): the parsed command, the parallel layout, the
// GPUs visible to the launcher, the model facts and the memory estimate.
#ifndef FAULTLINE_PREFLIGHT_CHECK_CONTEXT_H_
#define FAULTLINE_PREFLIGHT_CHECK_CONTEXT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "preflight/check_text.h"
#include "preflight/launch_command.h"
#include "preflight/memory_estimate.h"
#include "preflight/model_locator.h"
#include "preflight/report.h"
#include "preflight/visible_devices.h"
#include "probe/gpu_inventory.h"

namespace faultline::preflight {

// How many GPUs the launch uses on this node, and why.
struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, dp_local = 1, pcp = 1;
  int nnodes = 1, node_rank = 0;
  int ep = 1;  // expert-parallel size (1: experts split by TP only)
  bool expert_parallel = false;
  bool ray = false;                      // ray places workers itself: GPUs may be on other nodes
  int base_gpu_id = 0, gpu_id_step = 1;  // sglang
  int needed_local = 1;                  // GPUs this node's processes open
  bool gpu_free = false;                 // torchrun --nproc-per-node cpu
  std::string formula;                   // "TP 2 x PP 1 x DP 2"
};

struct CheckContext {
  LaunchCommand cmd;
  ParallelLayout layout;
  std::map<std::string, std::string> env;  // process env + VAR=VALUE words of the command
  probe::GpuInventory node;                // all GPUs of the node
  bool planned = false;                    // --gpus / --gpu-type: not this machine
  VisibleDevices visible;
  std::vector<const probe::GpuInfo*> visible_gpus;  // in CUDA order
  ModelLocation model;                              // facts when found
  std::optional<MemoryEstimate> memory;
  int64_t max_model_len = 0;  // effective: flag or model default
  bool max_model_len_given = false;
  bool check_port = true;
  const CheckTexts* texts = &CheckTexts::Builtin();

  std::string Framework() const { return LauncherName(cmd.launcher); }
  std::string DisplayName() const {
    return cmd.launcher == Launcher::kVllm ? "vLLM" : cmd.launcher == Launcher::kSglang ? "SGLang" : "torchrun";
  }
};

void CheckCommandLine(const CheckContext& ctx, PreflightReport* report);
void CheckTopology(const CheckContext& ctx, PreflightReport* report);
void CheckMultiNode(const CheckContext& ctx, PreflightReport* report);
void CheckGpuBusy(const CheckContext& ctx, PreflightReport* report);
void CheckModelFiles(const CheckContext& ctx, PreflightReport* report);
void CheckDivisibility(const CheckContext& ctx, PreflightReport* report);
void CheckDtype(const CheckContext& ctx, PreflightReport* report);
void CheckMemory(const CheckContext& ctx, PreflightReport* report);
void CheckPort(const CheckContext& ctx, PreflightReport* report);
void CheckEnvironment(const CheckContext& ctx, PreflightReport* report);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_CHECK_CONTEXT_H_
