// What preflight needs to know about a model, read from its config.json
// (Hugging Face format) and model.safetensors.index.json: layer and head
// counts, which layers keep a per-token KV cache (full attention, sliding
// window, MLA) and which keep a constant state per sequence (linear
// attention / Gated DeltaNet / Mamba), MoE experts, dtype and quantization,
// and the weight bytes.
#ifndef FAULTLINE_PREFLIGHT_MODEL_FACTS_H_
#define FAULTLINE_PREFLIGHT_MODEL_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace faultline::preflight {

struct ModelFacts {
  std::string architecture;  // architectures[0]
  std::string model_type;
  int num_layers = 0;
  int64_t hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int64_t vocab_size = 0;
  int64_t intermediate_size = 0;
  bool tie_word_embeddings = false;
  bool attn_output_gate = false;

  // Context length as vLLM derives it (_get_and_verify_max_len): the smallest
  // of the length keys, times the RoPE scaling factor where vLLM applies it.
  int64_t derived_max_len = 0;
  std::string derived_max_len_key;  // "max_position_embeddings"

  // Layer kinds. full + sliding + linear == num_layers.
  int full_attention_layers = 0;  // per-token KV cache, whole context
  int sliding_layers = 0;         // per-token KV cache, capped at the window
  int64_t sliding_window = 0;
  int linear_layers = 0;      // constant state per sequence (GDN / Mamba / linear attention)
  std::string hybrid_layout;  // "layer_types", "full_attention_interval=4", ... ; empty when not hybrid

  // MLA (DeepSeek-V2/V3, Kimi K2): one compressed latent per token and layer.
  bool mla = false;
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;
  int q_lora_rank = 0;

  // Linear attention (Gated DeltaNet, Qwen3-Next / Qwen3.5).
  int linear_num_key_heads = 0;
  int linear_num_value_heads = 0;
  int linear_key_head_dim = 0;
  int linear_value_head_dim = 0;
  int linear_conv_kernel_dim = 0;
  // Mamba-2 (Nemotron-H, Granite-4, Jamba-style hybrids).
  int mamba_num_heads = 0;
  int mamba_head_dim = 0;
  int mamba_state_size = 0;
  int mamba_n_groups = 0;
  int mamba_conv_kernel = 0;

  // MoE.
  int num_experts = 0;  // routed experts
  int experts_per_token = 0;
  int shared_experts = 0;
  int64_t moe_intermediate_size = 0;
  int64_t shared_expert_intermediate_size = 0;
  int moe_layers = 0;

  // Weights.
  std::string checkpoint_dtype;  // torch_dtype / dtype: "bfloat16"
  std::string quant_method;      // "fp8", "awq", "gptq", "compressed-tensors", "mxfp4", ...
  int quant_bits = 0;            // 4 / 8 when known
  bool has_vision = false;
  int mtp_layers = 0;  // extra next-token-prediction layers in the checkpoint

  // Parameter counts estimated from the shapes above.
  uint64_t params_total = 0;
  uint64_t params_experts = 0;    // routed-expert part of params_total
  uint64_t params_embedding = 0;  // input embedding (+ untied lm_head)

  // model.safetensors.index.json metadata.total_size, when found.
  std::optional<uint64_t> checkpoint_bytes;
  std::string checkpoint_bytes_source;
  std::vector<std::string> notes;

  bool IsMoe() const { return num_experts > 0; }
  bool IsHybrid() const { return linear_layers > 0; }
};

// Parses config.json text. `origin` names the file in error messages.
// kInvalidArgument for malformed JSON or a config without layer/head counts.
Result<ModelFacts> ParseModelConfig(std::string_view json_text, const std::string& origin);

// Reads model.safetensors.index.json text: metadata.total_size and the shard
// file names. kInvalidArgument when malformed.
struct SafetensorsIndex {
  uint64_t total_size = 0;
  std::vector<std::string> shards;
};
Result<SafetensorsIndex> ParseSafetensorsIndex(std::string_view json_text, const std::string& origin);

// Bytes per element of a dtype name ("bfloat16" -> 2, "float32" -> 4,
// "fp8" -> 1); 0 when unknown.
double DtypeBytes(std::string_view dtype);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_MODEL_FACTS_H_
