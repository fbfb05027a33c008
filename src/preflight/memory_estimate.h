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

// A vLLM release, "0.10.1.1" -> {0, 10, 1}. Unknown (all zero) means the
// newest behaviour the model knows.
struct VllmVersion {
  int major = 0, minor = 0, patch = 0;
  bool known() const { return major || minor || patch; }
  // Unknown counts as newer than everything.
  bool AtLeast(const VllmVersion& v) const;
  std::string ToString() const;
  static std::optional<VllmVersion> Parse(std::string_view text);  // "0.10.1", "v0.11.0rc1"
};

struct MemoryModelParams {
  double default_utilization = 0.9;
  double large_gpu_min_gib = 70;
  int64_t batched_tokens_large = 8192, batched_tokens_small = 2048;
  int64_t seqs_large = 1024, seqs_small = 256;
  int default_block_size = 16;
  double mlp_coef = 3, hidden_coef = 12, base_gib = 0;
  // Copies of the [seqs, vocab] float32 logits alive at the sampler's peak.
  double sampler_native_coef = 9.7, sampler_native_coef_new = 1.0, sampler_flashinfer_coef = 1.5;
  double new_forward_scale = 0.33;  // releases from new_profile_from
  double moe_coef = 2;              // fused-MoE caches: tokens x top-k x hidden, this many copies
  double non_torch_tp1_gib = 0.13, non_torch_tp_many_gib = 0.55;
  double cudagraph_estimate_gib = 0.6;
  double mxfp4_bits_per_param = 4.25, mxfp4_pad = 256;
  // Versions where vLLM's accounting changed (rules/preflight_memory.yaml).
  VllmVersion flashinfer_sampler_from{0, 10, 0}, flashinfer_sampler_until{0, 11, 0};
  VllmVersion new_profile_from{0, 21, 0};
  VllmVersion large_gpu_defaults_from{0, 11, 0};
  VllmVersion unknown_version_reference{0, 11, 0};
  VllmVersion cudagraph_profiling_from{0, 21, 0};
  VllmVersion hybrid_tokens_by_concurrency_from{0, 24, 0};
  double linear_state_bytes = 4;
  double sglang_mem_fraction = 0.85;

  static Result<MemoryModelParams> Load(std::string_view yaml_text);
  static const MemoryModelParams& Builtin();
};

struct MemoryInputs {
  Launcher launcher = Launcher::kVllm;
  int tp = 1, pp = 1, dp = 1;
  bool expert_parallel = false;       // experts split over TP x DP
  uint64_t gpu_total_bytes = 0;       // as CUDA reports it (NVML total less driver-reserved memory)
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
  VllmVersion vllm_version;                 // --vllm-version; unknown: the newest behaviour
  bool enforce_eager = false;               // --enforce-eager (SGLang --disable-cuda-graph)
  std::optional<bool> flashinfer_sampler;   // VLLM_USE_FLASHINFER_SAMPLER
  std::optional<bool> estimate_cudagraphs;  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
};

struct MemoryEstimate {
  double utilization = 0;
  double requested_bytes = 0;     // total x utilization
  double weight_bytes_total = 0;  // whole model in GPU memory (all ranks)
  double weights_per_gpu = 0;
  std::string weights_source;  // "model.safetensors.index.json" / "parameter count"
  double activation_bytes = 0;
  double forward_bytes = 0;  // the forward pass over batched_tokens
  double sampler_bytes = 0;  // the sampler over max_num_seqs rows of logits
  double non_torch_bytes = 0;
  double cudagraph_bytes = 0;            // reserved before the KV cache (vLLM >= 0.21 profiles CUDA graphs)
  bool cudagraphs_after_budget = false;  // captured after the KV cache, outside the budget
  bool tokens_over_all_layers = false;   // "GPU KV cache size" as num_blocks // groups * block_size
  int cache_layers = 0;
  double per_layer_token_bytes = 0;  // one attention layer, one token, this GPU                  // layers
                                     // that hold a cache page (full + sliding + linear) / PP
  double kv_available_bytes = 0;     // may be negative: nothing left
  double kv_bytes_per_token = 0;     // per GPU, layers whose cache grows with the context
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
