// Per-GPU memory of an inference server before it starts: weights, the
// activation peak of vLLM's profiling run, non-torch memory, the KV-cache
// budget that is left under --gpu-memory-utilization, and how many tokens of
// context it holds. Follows vLLM V1 (gpu_worker.determine_available_memory,
// kv_cache_utils); coefficients come from rules/preflight_memory.yaml.
// The derivation and its sources are in docs/memory-model.md.
#ifndef FAULTLINE_PREFLIGHT_MEMORY_ESTIMATE_H_
#define FAULTLINE_PREFLIGHT_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "preflight/launch_command.h"
#include "preflight/model_facts.h"
#include "util/status.h"

namespace faultline::preflight {

struct MemoryModelParams {
  double default_utilization = 0.9;
  double large_gpu_min_gib = 70;
  int64_t batched_tokens_large = 8192, batched_tokens_small = 2048;
  int64_t seqs_large = 1024, seqs_small = 256;
  int default_block_size = 16;
  double mlp_coef = 1, hidden_coef = 16, sampler_coef = 0, base_gib = 0.7;
  double non_torch_tp1_gib = 0.25, non_torch_tp_many_gib = 0.5;
  double linear_state_bytes = 4;
  double sglang_mem_fraction = 0.85;

  static Result<MemoryModelParams> Load(std::string_view yaml_text);
  static const MemoryModelParams& Builtin();
};

struct MemoryInputs {
  Launcher launcher = Launcher::kVllm;
  int tp = 1, pp = 1, dp = 1;
  bool expert_parallel = false;  // experts split over TP x DP
  uint64_t gpu_total_bytes = 0;
  std::string gpu_name;               // for the "large GPU" defaults (A100 excluded)
  std::optional<double> utilization;  // --gpu-memory-utilization / --mem-fraction-static
  std::optional<int64_t> max_num_batched_tokens;
  std::optional<int64_t> max_num_seqs;
  std::string dtype = "auto";  // --dtype
  std::string kv_cache_dtype = "auto";
  std::string quantization;  // --quantization
  double cpu_offload_gb = 0;
  std::optional<int64_t> kv_cache_memory_bytes;
  int block_size = 0;
};

struct MemoryEstimate {
  double utilization = 0;
  double requested_bytes = 0;     // total x utilization
  double weight_bytes_total = 0;  // whole model in GPU memory (all ranks)
  double weights_per_gpu = 0;
  std::string weights_source;  // "model.safetensors.index.json" / "parameter count"
  double activation_bytes = 0;
  double non_torch_bytes = 0;
  double kv_available_bytes = 0;  // may be negative: nothing left
  double kv_bytes_per_token = 0;  // per GPU, layers whose cache grows with the context
  double sliding_bytes_per_token = 0;
  int64_t sliding_cap_tokens = 0;  // tokens a sliding layer keeps per request
  double state_bytes_per_seq = 0;  // per GPU, linear-attention / Mamba state of one sequence
  int64_t batched_tokens = 0;
  int64_t max_num_seqs = 0;
  std::string runtime_dtype;  // "bfloat16"
  double kv_dtype_bytes = 2;
  std::vector<std::string> assumptions;

  // vLLM's need for one request of `len` tokens (sum over layers of
  // spec.max_memory_usage_bytes), per GPU.
  double BytesForRequest(int64_t len) const;
  // Tokens the cache holds at `max_model_len` (vLLM >= 0.11 reports
  // max_concurrency x max_model_len as "GPU KV cache size").
  int64_t TokenCapacity(int64_t max_model_len) const;
  // Largest length whose one request fits (vLLM's estimate_max_model_len).
  int64_t MaxFittingLen(int64_t upper) const;
};

MemoryEstimate EstimateMemory(const ModelFacts& model, const MemoryInputs& in,
                              const MemoryModelParams& params = MemoryModelParams::Builtin());

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_MEMORY_ESTIMATE_H_
