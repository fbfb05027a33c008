#include "preflight/memory_estimate.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "preflight/embedded_rules.h"
#include "preflight/units.h"

namespace faultline::preflight {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The dtype vLLM computes in for `--dtype` (vllm/config/model.py,
// _get_and_verify_dtype): "auto" keeps fp16/bf16 checkpoints as they are and
// runs fp32 checkpoints in bf16.
std::string RuntimeDtype(const std::string& flag, const std::string& checkpoint) {
  std::string d = Lower(flag);
  if (d == "half" || d == "float16") return "float16";
  if (d == "bfloat16") return "bfloat16";
  if (d == "float" || d == "float32") return "float32";
  if (checkpoint == "float16") return "float16";
  return "bfloat16";
}

// Quantized linear weights: int4 (AWQ/GPTQ, group 128) carries a 16-bit scale
// and a 4-bit zero per group (~3%); 8-bit formats (fp8 blocks of 128x128,
// per-channel int8) carry well under 1%.
double WeightBytesPerParam(int bits) { return bits <= 0 ? 0 : bits / 8.0 * (bits <= 4 ? 1.03 : 1.005); }

}  // namespace

bool VllmVersion::AtLeast(const VllmVersion& v) const {
  if (!known()) return true;
  if (major != v.major) return major > v.major;
  if (minor != v.minor) return minor > v.minor;
  return patch >= v.patch;
}

std::string VllmVersion::ToString() const { return known() ? fmt::format("{}.{}.{}", major, minor, patch) : "unknown"; }

std::optional<VllmVersion> VllmVersion::Parse(std::string_view text) {
  std::string t(text);
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t.erase(0, 1);
  VllmVersion v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    size_t start = pos;
    while (pos < t.size() && std::isdigit(static_cast<unsigned char>(t[pos])) && pos - start < 6) ++pos;
    if (pos == start) {
      if (i < 2) return std::nullopt;  // at least MAJOR.MINOR
      break;
    }
    *parts[i] = std::stoi(t.substr(start, pos - start));
    if (i < 2) {
      if (pos >= t.size() || t[pos] != '.') {
        if (i == 0) return std::nullopt;
        break;
      }
      ++pos;
    } else {
      break;
    }
  }
  if (!v.known()) return std::nullopt;
  return v;
}

Result<MemoryModelParams> MemoryModelParams::Load(std::string_view yaml_text) {
  MemoryModelParams p;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    YAML::Node v = root["vllm"];
    p.default_utilization = v["default_gpu_memory_utilization"].as<double>();
    p.large_gpu_min_gib = v["large_gpu_min_gib"].as<double>();
    p.batched_tokens_large = v["max_num_batched_tokens"]["large"].as<int64_t>();
    p.batched_tokens_small = v["max_num_batched_tokens"]["small"].as<int64_t>();
    p.seqs_large = v["max_num_seqs"]["large"].as<int64_t>();
    p.seqs_small = v["max_num_seqs"]["small"].as<int64_t>();
    p.default_block_size = v["default_block_size"].as<int>();
    p.mlp_coef = v["activation"]["mlp_coef"].as<double>();
    p.hidden_coef = v["activation"]["hidden_coef"].as<double>();
    p.base_gib = v["activation"]["base_gib"].as<double>();
    p.sampler_native_coef = v["sampler"]["native_coef"].as<double>();
    p.sampler_native_coef_new = v["sampler"]["native_coef_new"].as<double>();
    p.new_forward_scale = v["activation"]["new_forward_scale"].as<double>();
    p.moe_coef = v["activation"]["moe_coef"].as<double>();
    p.sampler_flashinfer_coef = v["sampler"]["flashinfer_coef"].as<double>();
    p.non_torch_tp1_gib = v["non_torch_gib"]["tp1"].as<double>();
    p.non_torch_tp_many_gib = v["non_torch_gib"]["tp_many"].as<double>();
    p.cudagraph_estimate_gib = v["cudagraph_estimate_gib"].as<double>();
    p.mxfp4_bits_per_param = v["mxfp4_bits_per_param"].as<double>();
    p.mxfp4_pad = v["mxfp4_pad"].as<double>();
    p.linear_state_bytes = v["linear_state_bytes"].as<double>();
    auto version = [&](const char* key) {
      std::optional<VllmVersion> ver = VllmVersion::Parse(v["versions"][key].as<std::string>());
      if (!ver) throw YAML::Exception(YAML::Mark::null_mark(), std::string("versions.") + key + ": not a version");
      return *ver;
    };
    p.flashinfer_sampler_from = version("flashinfer_sampler_from");
    p.flashinfer_sampler_until = version("flashinfer_sampler_until");
    p.new_profile_from = version("new_profile_from");
    p.large_gpu_defaults_from = version("large_gpu_defaults_from");
    p.unknown_version_reference = version("unknown_version_reference");
    p.cudagraph_profiling_from = version("cudagraph_profiling_from");
    p.hybrid_tokens_by_concurrency_from = version("hybrid_tokens_by_concurrency_from");
    p.sglang_mem_fraction = root["sglang"]["default_mem_fraction_static"].as<double>();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("rules/preflight_memory.yaml: {}", e.what()));
  }
  return p;
}

const MemoryModelParams& MemoryModelParams::Builtin() {
  static const MemoryModelParams* p = [] {
    Result<MemoryModelParams> r = Load(EmbeddedMemoryModel());
    return new MemoryModelParams(r.ok() ? *r : MemoryModelParams());
  }();
  return *p;
}

double MemoryEstimate::BytesForRequest(int64_t len) const {
  double l = static_cast<double>(len);
  double sliding = sliding_bytes_per_token * static_cast<double>(std::min<int64_t>(len, sliding_cap_tokens));
  return kv_bytes_per_token * l + sliding + state_bytes_per_seq;
}

int64_t MemoryEstimate::TokenCapacity(int64_t max_model_len) const {
  if (kv_available_bytes <= 0) return 0;
  if (tokens_over_all_layers && (sliding_bytes_per_token > 0 || state_bytes_per_seq > 0)) {
    // Older vLLM: num_blocks // len(kv_cache_groups) * block_size, i.e. the
    // budget spread over every cache-holding layer as if each were attention.
    double per_token = per_layer_token_bytes * cache_layers;
    return per_token > 0 ? static_cast<int64_t>(kv_available_bytes / per_token) : 0;
  }
  if (sliding_bytes_per_token == 0 && state_bytes_per_seq == 0) {
    return kv_bytes_per_token > 0 ? static_cast<int64_t>(kv_available_bytes / kv_bytes_per_token) : 0;
  }
  double per_request = BytesForRequest(max_model_len);
  if (per_request <= 0) return 0;
  return static_cast<int64_t>(kv_available_bytes / per_request * static_cast<double>(max_model_len));
}

int64_t MemoryEstimate::MaxFittingLen(int64_t upper) const {
  if (BytesForRequest(1) > kv_available_bytes) return 0;
  int64_t lo = 1, hi = upper;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (BytesForRequest(mid) <= kv_available_bytes)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

MemoryEstimate EstimateMemory(const ModelFacts& m, const MemoryInputs& in, const MemoryModelParams& p) {
  MemoryEstimate e;
  const int tp = std::max(1, in.tp), pp = std::max(1, in.pp), dp = std::max(1, in.dp);
  const double total = static_cast<double>(in.gpu_total_bytes);  // as CUDA reports it
  const bool large_gpu = total >= p.large_gpu_min_gib * kGiB && Lower(in.gpu_name).find("a100") == std::string::npos;

  e.runtime_dtype = RuntimeDtype(in.dtype, m.checkpoint_dtype);
  const double act_bytes = DtypeBytes(e.runtime_dtype);
  std::string kvd = Lower(in.kv_cache_dtype);
  e.kv_dtype_bytes = (kvd.rfind("fp8", 0) == 0) ? 1 : act_bytes;

  // --- Weights -------------------------------------------------------------
  const bool checkpoint_quantized = !m.quant_method.empty();
  const std::string online_quant = checkpoint_quantized ? "" : Lower(in.quantization);
  const double params = static_cast<double>(std::max<uint64_t>(m.params_total, 1));
  const double expert_fraction = static_cast<double>(m.params_experts) / params;
  const double embed_fraction = static_cast<double>(m.params_embedding) / params;
  const int expert_split = in.expert_parallel ? tp * dp : tp;
  double w = 0;
  // Bytes of the routed experts and of everything else, in GPU memory.
  double expert_w = 0, other_w = 0;
  if (m.checkpoint_bytes) {
    w = static_cast<double>(*m.checkpoint_bytes);
    e.weights_source = "model.safetensors.index.json total_size";
    double ckpt_bytes = DtypeBytes(m.checkpoint_dtype);
    if (!checkpoint_quantized && ckpt_bytes > 0 && ckpt_bytes != act_bytes) {
      w *= act_bytes / ckpt_bytes;
      e.assumptions.push_back(fmt::format("checkpoint is {}, vLLM runs it in {}", m.checkpoint_dtype, e.runtime_dtype));
    }
    if (m.mtp_layers > 0) {
      // MTP (next-token-prediction) layers ship in the checkpoint but are
      // loaded only for speculative decoding.
      double per_layer = w * (1 - embed_fraction) / (m.num_layers + m.mtp_layers);
      w -= per_layer * m.mtp_layers;
      e.assumptions.push_back(fmt::format("{} MTP layer(s) in the checkpoint not loaded", m.mtp_layers));
    }
    if (online_quant.rfind("fp8", 0) == 0 && act_bytes == 2) {
      w = w * embed_fraction + w * (1 - embed_fraction) * 0.5;
      e.assumptions.push_back("--quantization fp8 stores linear weights in one byte");
    }
    expert_w = w * expert_fraction;
    other_w = w - expert_w;
  } else {
    e.weights_source = "parameter count from config.json";
    const double experts = static_cast<double>(m.params_experts);
    const double embed = static_cast<double>(m.params_embedding);
    const double dense_linear = std::max(0.0, params - experts - embed);
    double linear_bytes = checkpoint_quantized ? WeightBytesPerParam(m.quant_bits ? m.quant_bits : 4) : act_bytes;
    if (online_quant.rfind("fp8", 0) == 0 && act_bytes == 2) {
      linear_bytes = 1.005;
      e.assumptions.push_back("--quantization fp8 stores linear weights in one byte");
    }
    double expert_bytes = linear_bytes, dense_bytes = linear_bytes;
    if (m.quant_method == "mxfp4") {
      // Only the experts are MXFP4 (attention, router, embeddings stay 16-bit);
      // each expert's intermediate width per GPU is padded for the kernels.
      dense_bytes = act_bytes;
      expert_bytes = p.mxfp4_bits_per_param / 8;
      double part = static_cast<double>(m.moe_intermediate_size) / (in.expert_parallel ? 1 : tp);
      if (part > 0 && p.mxfp4_pad > 0) expert_bytes *= std::ceil(part / p.mxfp4_pad) * p.mxfp4_pad / part;
    }
    expert_w = experts * expert_bytes;
    other_w = dense_linear * dense_bytes + embed * act_bytes;
    w = expert_w + other_w;
  }
  e.weight_bytes_total = w;
  double per_gpu = other_w / tp + expert_w / expert_split;
  per_gpu /= pp;
  // The rotary embedding's cos/sin cache (max positions x rotary dim, in the
  // model dtype) is allocated with the model on every GPU and counted in
  // "Model loading took" (Llama-3.1-8B: 131072 x 128 x 2 bytes = 32 MiB).
  if (m.derived_max_len > 0) {
    double rotary_dim = m.mla ? m.qk_rope_head_dim : m.head_dim;
    per_gpu += static_cast<double>(std::min<int64_t>(m.derived_max_len, 1 << 24)) * rotary_dim * act_bytes;
  }
  per_gpu -= in.cpu_offload_gb * kGiB;
  e.weights_per_gpu = std::max(0.0, per_gpu);

  // --- Budget ----------------------------------------------------------------
  // vLLM multiplies what CUDA reports as the device total (cudaMemGetInfo;
  // NVML's total less the driver-reserved part) by the utilization.
  double util_default = in.launcher == Launcher::kSglang ? p.sglang_mem_fraction : p.default_utilization;
  e.utilization = in.utilization.value_or(util_default);
  e.requested_bytes = total * e.utilization;
  // Without --vllm-version: the accounting of one reference release (most
  // public startup logs come from it), said in a note.
  const VllmVersion ver = in.vllm_version.known() ? in.vllm_version : p.unknown_version_reference;
  if (!in.vllm_version.known() && in.launcher == Launcher::kVllm) {
    e.assumptions.push_back(
        fmt::format("vLLM release unknown: memory accounting of vLLM {} assumed (--vllm-version X.Y.Z to choose; newer "
                    "releases reserve less for the profiling run and subtract CUDA graphs)",
                    p.unknown_version_reference.ToString()));
  }
  // vLLM >= large_gpu_defaults_from gives GPUs of >= 70 GiB (not A100) the
  // larger scheduler defaults; earlier V1 releases use 2048 / 256 everywhere.
  const bool large_defaults = large_gpu && ver.AtLeast(p.large_gpu_defaults_from);
  e.batched_tokens =
      in.max_num_batched_tokens.value_or(large_defaults ? p.batched_tokens_large : p.batched_tokens_small);
  e.max_num_seqs = in.max_num_seqs.value_or(large_defaults ? p.seqs_large : p.seqs_small);
  int64_t seqs = std::min(e.max_num_seqs, e.batched_tokens);

  if (in.launcher == Launcher::kVllm) {
    // Profiling run (gpu_model_runner.profile_run): the forward pass over
    // batched_tokens, then the sampler over `seqs` rows of float32 logits;
    // torch's peak is the larger of the two.
    double inter_gpu = static_cast<double>(m.intermediate_size) / tp;
    if (m.IsMoe()) {
      inter_gpu =
          static_cast<double>(m.experts_per_token * m.moe_intermediate_size + m.shared_expert_intermediate_size) / tp;
    }
    const double tokens = static_cast<double>(e.batched_tokens);
    double forward = tokens * (p.mlp_coef * inter_gpu + p.hidden_coef * static_cast<double>(m.hidden_size)) * act_bytes;
    if (m.IsMoe()) {
      // fused_moe keeps per-(token, expert) intermediate caches: the expert
      // outputs before the weighted sum are tokens x top-k x hidden.
      forward += tokens * m.experts_per_token * static_cast<double>(m.hidden_size) * act_bytes * p.moe_coef;
    }
    const double logits = static_cast<double>(seqs) * static_cast<double>(m.vocab_size) * 4;
    struct Profile {
      double forward, sampler, cudagraph;
      bool graphs_after_budget;
    };
    // What one release reserves before the KV cache.
    auto profile = [&](const VllmVersion& v) {
      Profile r{};
      const bool new_profile = v.AtLeast(p.new_profile_from);
      bool flashinfer = in.flashinfer_sampler.value_or(v.known() && v.AtLeast(p.flashinfer_sampler_from) &&
                                                       !v.AtLeast(p.flashinfer_sampler_until));
      r.forward = forward * (new_profile ? p.new_forward_scale : 1.0);
      r.sampler = logits * (flashinfer    ? p.sampler_flashinfer_coef
                            : new_profile ? p.sampler_native_coef_new
                                          : p.sampler_native_coef);
      // CUDA graphs: since v0.21 the profiler reserves their memory before the
      // KV cache (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, default on);
      // earlier releases capture them after the KV cache, on top of the budget.
      if (!in.enforce_eager) {
        bool profiled = in.estimate_cudagraphs.value_or(v.AtLeast(p.cudagraph_profiling_from));
        r.cudagraph = profiled ? p.cudagraph_estimate_gib * kGiB : 0;
        r.graphs_after_budget = !profiled;
      }
      return r;
    };
    Profile pr = profile(ver);
    e.forward_bytes = pr.forward;
    e.sampler_bytes = pr.sampler;
    e.activation_bytes = std::max(e.forward_bytes, e.sampler_bytes) + p.base_gib * kGiB;
    e.non_torch_bytes = (tp * pp == 1 ? p.non_torch_tp1_gib : p.non_torch_tp_many_gib) * kGiB;
    e.cudagraph_bytes = pr.cudagraph;
    e.cudagraphs_after_budget = pr.graphs_after_budget;
  }
  e.kv_available_bytes =
      e.requested_bytes - e.weights_per_gpu - e.activation_bytes - e.non_torch_bytes - e.cudagraph_bytes;
  if (in.kv_cache_memory_bytes) {
    e.kv_available_bytes = static_cast<double>(*in.kv_cache_memory_bytes);
    e.assumptions.push_back("--kv-cache-memory-bytes fixes the KV budget (gpu_memory_utilization ignored)");
  }
  e.tokens_over_all_layers = in.launcher == Launcher::kVllm && !ver.AtLeast(p.hybrid_tokens_by_concurrency_from);

  // --- KV cache per token ----------------------------------------------------
  double per_layer_token = 0;
  if (m.mla) {
    per_layer_token = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * e.kv_dtype_bytes;
  } else {
    int64_t heads_gpu = std::max<int64_t>(1, (static_cast<int64_t>(m.num_kv_heads) + tp - 1) / tp);
    per_layer_token = 2.0 * static_cast<double>(heads_gpu) * m.head_dim * e.kv_dtype_bytes;
  }
  e.per_layer_token_bytes = per_layer_token;
  e.cache_layers = (m.full_attention_layers + m.sliding_layers + m.linear_layers) / pp;
  e.kv_bytes_per_token = per_layer_token * m.full_attention_layers / pp;
  if (m.sliding_layers > 0) {
    e.sliding_bytes_per_token = per_layer_token * m.sliding_layers / pp;
    e.sliding_cap_tokens = m.sliding_window + e.batched_tokens;
  }
  if (m.linear_layers > 0) {
    double state = 0;
    if (m.linear_num_value_heads > 0) {
      double conv_dim = 2.0 * m.linear_num_key_heads * m.linear_key_head_dim +
                        static_cast<double>(m.linear_num_value_heads) * m.linear_value_head_dim;
      state = conv_dim / tp * std::max(0, m.linear_conv_kernel_dim - 1) * act_bytes +
              static_cast<double>(m.linear_num_value_heads) / tp * m.linear_key_head_dim * m.linear_value_head_dim *
                  p.linear_state_bytes;
    } else if (m.mamba_num_heads > 0) {
      double inner = static_cast<double>(m.mamba_num_heads) * m.mamba_head_dim;
      double conv_dim = inner + 2.0 * m.mamba_n_groups * m.mamba_state_size;
      state = conv_dim / tp * std::max(0, m.mamba_conv_kernel - 1) * act_bytes +
              static_cast<double>(m.mamba_num_heads) / tp * m.mamba_head_dim * m.mamba_state_size * act_bytes;
    } else {
      // Lightning / linear attention without extra dims (MiniMax): one
      // head_dim x head_dim state per head.
      state = static_cast<double>(m.num_heads) / tp * m.head_dim * m.head_dim * p.linear_state_bytes;
    }
    // vLLM makes the attention page and the state page the same size: the
    // state occupies a whole number of 16-token attention pages.
    double page = 16 * per_layer_token;
    if (page > 0 && state > 0) state = std::ceil(state / page) * page;
    e.state_bytes_per_seq = state * m.linear_layers / pp;
    if (state == 0) e.assumptions.push_back("linear-attention state size unknown; counted as zero");
  }
  return e;
}

}  // namespace faultline::preflight
