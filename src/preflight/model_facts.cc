#include "preflight/model_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

namespace faultline::preflight {
namespace {

using nlohmann::json;

// The first number of config.json that does not fit the integer it is read
// into (a float like 1e300, or a count above 2^31): ParseModelConfig turns it
// into an input error instead of converting it (float -> int conversion of an
// out-of-range value is undefined behaviour; int64 -> int truncates).
thread_local std::string g_range_error;

constexpr double kIntLimit = 2147483647.0;  // every count and dimension is read as a 32-bit int

void RangeError(const char* key, const json& v) {
  if (g_range_error.empty()) g_range_error = fmt::format("{} {} is out of range", key, v.dump());
}

int64_t GetInt(const json& o, const char* key, int64_t fallback = 0) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return fallback;
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(kIntLimit)) {
      RangeError(key, *it);
      return fallback;
    }
    return static_cast<int64_t>(u);
  }
  if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    if (v > static_cast<int64_t>(kIntLimit) || v < -static_cast<int64_t>(kIntLimit)) {
      RangeError(key, *it);
      return fallback;
    }
    return v;
  }
  if (it->is_number_float()) {
    double d = it->get<double>();
    if (!std::isfinite(d) || d > kIntLimit || d < -kIntLimit) {
      RangeError(key, *it);
      return fallback;
    }
    return static_cast<int64_t>(d);
  }
  return fallback;
}

double GetFloat(const json& o, const char* key, double fallback = 0) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

std::string GetStr(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

bool GetBool(const json& o, const char* key, bool fallback = false) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_boolean()) return fallback;
  return it->get<bool>();
}

// Lengths vLLM looks at (vllm/config/model.py, _get_and_verify_max_len).
constexpr const char* kLengthKeys[] = {
    "max_position_embeddings", "n_positions",    "max_seq_len", "seq_length",
    "max_sequence_length",     "max_seq_length", "seq_len",
};

void DeriveMaxLen(const json& c, ModelFacts* m) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const char* key : kLengthKeys) {
    int64_t v = GetInt(c, key, 0);
    if (v > 0 && v < best) {
      best = v;
      m->derived_max_len_key = key;
    }
  }
  if (best == std::numeric_limits<int64_t>::max()) return;
  // RoPE scaling: vLLM multiplies by the factor unless the type already
  // describes the long context (su, longrope, llama3); yarn starts from
  // original_max_position_embeddings.
  const json* rope = nullptr;
  if (c.contains("rope_scaling") && c["rope_scaling"].is_object()) rope = &c["rope_scaling"];
  if (rope) {
    std::string type = GetStr(*rope, "rope_type");
    if (type.empty()) type = GetStr(*rope, "type");
    double factor = GetFloat(*rope, "factor", 0);
    if (type != "su" && type != "longrope" && type != "llama3" && type != "mrope" && type != "default" && factor > 0) {
      if (type == "yarn") best = GetInt(*rope, "original_max_position_embeddings", best);
      double scaled = static_cast<double>(best) * factor;
      if (!std::isfinite(scaled) || scaled > 1e15) {
        if (g_range_error.empty()) g_range_error = fmt::format("rope_scaling factor {} is out of range", factor);
        return;
      }
      best = static_cast<int64_t>(scaled);
    }
  }
  m->derived_max_len = best;
}

void ClassifyLayers(const json& c, ModelFacts* m) {
  int n = m->num_layers;
  m->full_attention_layers = n;
  if (c.contains("layer_types") && c["layer_types"].is_array() && !c["layer_types"].empty()) {
    int full = 0, sliding = 0, linear = 0;
    for (const json& t : c["layer_types"]) {
      std::string s = t.is_string() ? t.get<std::string>() : "";
      if (s == "full_attention" || s == "attention")
        ++full;
      else if (s == "sliding_attention" || s == "chunked_attention")
        ++sliding;
      else
        ++linear;  // linear_attention, mamba, ...
    }
    if (full + sliding + linear == n) {
      m->full_attention_layers = full;
      m->sliding_layers = sliding;
      m->linear_layers = linear;
      if (linear > 0) m->hybrid_layout = "layer_types";
      return;
    }
    m->notes.push_back(fmt::format("layer_types has {} entries for {} layers; ignored", full + sliding + linear, n));
  }
  if (c.contains("attn_type_list") && c["attn_type_list"].is_array() &&
      static_cast<int>(c["attn_type_list"].size()) == n) {  // MiniMax: 1 softmax, 0 lightning (linear)
    int full = 0;
    for (const json& t : c["attn_type_list"]) full += (t.is_number() && t.get<int>() == 1);
    m->full_attention_layers = full;
    m->linear_layers = n - full;
    m->hybrid_layout = "attn_type_list";
    return;
  }
  int64_t interval = GetInt(c, "full_attention_interval", 0);
  if (interval > 0) {
    int full = 0;
    for (int i = 0; i < n; ++i) full += ((i + 1) % interval == 0);
    m->full_attention_layers = full;
    m->linear_layers = n - full;
    m->hybrid_layout = fmt::format("full_attention_interval={}", interval);
    return;
  }
  std::string pattern = GetStr(c, "hybrid_override_pattern");  // Nemotron-H: M mamba, * attention, - mlp
  if (!pattern.empty()) {
    int attn = static_cast<int>(std::count(pattern.begin(), pattern.end(), '*'));
    int mamba = static_cast<int>(std::count(pattern.begin(), pattern.end(), 'M'));
    m->num_layers = attn + mamba;  // MLP-only layers keep no cache
    m->full_attention_layers = attn;
    m->linear_layers = mamba;
    m->hybrid_layout = "hybrid_override_pattern";
    return;
  }
  int64_t period = GetInt(c, "attn_layer_period", 0);  // Jamba
  if (period > 0) {
    int64_t offset = GetInt(c, "attn_layer_offset", 0);
    int full = 0;
    for (int i = 0; i < n; ++i) full += (i % period == offset);
    m->full_attention_layers = full;
    m->linear_layers = n - full;
    m->hybrid_layout = fmt::format("attn_layer_period={}", period);
    return;
  }
  // Sliding window on every layer (Mistral-7B v0.1 style) unless disabled.
  int64_t window = GetInt(c, "sliding_window", 0);
  bool use_sliding = GetBool(c, "use_sliding_window", true);
  if (window > 0 && use_sliding && window < m->derived_max_len) {
    m->sliding_window = window;
    m->sliding_layers = n;
    m->full_attention_layers = 0;
  }
}

void ReadMoe(const json& c, ModelFacts* m) {
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}) {
    int64_t v = GetInt(c, key, 0);
    if (v > 1) {
      m->num_experts = static_cast<int>(v);
      break;
    }
  }
  if (!m->IsMoe()) return;
  m->experts_per_token = static_cast<int>(GetInt(c, "num_experts_per_tok", GetInt(c, "moe_topk", 0)));
  m->moe_intermediate_size = GetInt(c, "moe_intermediate_size", m->intermediate_size);
  m->shared_experts = static_cast<int>(GetInt(c, "n_shared_experts", 0));
  m->shared_expert_intermediate_size = GetInt(c, "shared_expert_intermediate_size", 0);
  if (m->shared_expert_intermediate_size == 0 && m->shared_experts > 0) {
    m->shared_expert_intermediate_size = m->shared_experts * m->moe_intermediate_size;
  }
  int64_t first_dense = GetInt(c, "first_k_dense_replace", 0);
  int64_t step = std::max<int64_t>(1, GetInt(c, "decoder_sparse_step", GetInt(c, "moe_layer_freq", 1)));
  int dense_only = 0;
  if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array()) {
    dense_only = static_cast<int>(c["mlp_only_layers"].size());
  }
  int moe = 0;
  for (int i = 0; i < m->num_layers; ++i) {
    if (i < first_dense) continue;
    if ((i + 1) % step != 0 && step > 1) continue;
    ++moe;
  }
  m->moe_layers = std::max(0, moe - dense_only);
}

void ReadQuantization(const json& top, const json& c, ModelFacts* m) {
  const json* q = nullptr;
  if (top.contains("quantization_config") && top["quantization_config"].is_object())
    q = &top["quantization_config"];
  else if (c.contains("quantization_config") && c["quantization_config"].is_object())
    q = &c["quantization_config"];
  if (!q) return;
  m->quant_method = GetStr(*q, "quant_method");
  m->quant_bits = static_cast<int>(GetInt(*q, "bits", GetInt(*q, "w_bit", 0)));
  if (m->quant_method == "fp8" || m->quant_method == "fbgemm_fp8") m->quant_bits = 8;
  if (m->quant_method == "mxfp4") m->quant_bits = 4;
  if (m->quant_method == "compressed-tensors" && q->contains("config_groups")) {
    for (const auto& [name, group] : (*q)["config_groups"].items()) {
      if (group.contains("weights") && group["weights"].is_object()) {
        m->quant_bits = static_cast<int>(GetInt(group["weights"], "num_bits", 0));
        break;
      }
    }
  }
}

// Parameters from shapes (weights vLLM loads; the vision tower is not counted).
void EstimateParams(ModelFacts* m) {
  const uint64_t h = m->hidden_size;
  uint64_t embed = static_cast<uint64_t>(m->vocab_size) * h;
  m->params_embedding = m->tie_word_embeddings ? embed : 2 * embed;
  uint64_t attn = 0;
  if (m->mla) {
    uint64_t qk = static_cast<uint64_t>(m->qk_nope_head_dim + m->qk_rope_head_dim);
    uint64_t q = m->q_lora_rank ? h * m->q_lora_rank + static_cast<uint64_t>(m->q_lora_rank) * m->num_heads * qk
                                : h * m->num_heads * qk;
    uint64_t kv_a = h * (m->kv_lora_rank + m->qk_rope_head_dim);
    uint64_t kv_b = static_cast<uint64_t>(m->kv_lora_rank) * m->num_heads * (m->qk_nope_head_dim + m->v_head_dim);
    uint64_t o = static_cast<uint64_t>(m->num_heads) * m->v_head_dim * h;
    attn = q + kv_a + kv_b + o;
  } else {
    uint64_t q = h * m->num_heads * m->head_dim * (m->attn_output_gate ? 2 : 1);
    uint64_t kv = 2 * h * m->num_kv_heads * m->head_dim;
    uint64_t o = static_cast<uint64_t>(m->num_heads) * m->head_dim * h;
    attn = q + kv + o;
  }
  uint64_t linear = 0;
  if (m->linear_num_value_heads > 0) {
    uint64_t key_dim = static_cast<uint64_t>(m->linear_num_key_heads) * m->linear_key_head_dim;
    uint64_t value_dim = static_cast<uint64_t>(m->linear_num_value_heads) * m->linear_value_head_dim;
    linear = h * (2 * key_dim + 2 * value_dim) + h * 2 * m->linear_num_value_heads +
             (2 * key_dim + value_dim) * m->linear_conv_kernel_dim + value_dim * h;
  } else if (m->mamba_num_heads > 0) {
    uint64_t inner = static_cast<uint64_t>(m->mamba_num_heads) * m->mamba_head_dim;
    uint64_t gs = 2ULL * m->mamba_n_groups * m->mamba_state_size;
    linear = h * (2 * inner + gs + m->mamba_num_heads) + inner * h;
  } else {
    linear = attn;  // unknown mixer: assume attention-sized
  }
  uint64_t dense_mlp = 3 * h * m->intermediate_size;
  uint64_t expert = 3 * h * m->moe_intermediate_size;
  uint64_t routed = static_cast<uint64_t>(m->num_experts) * expert;
  uint64_t shared = 3 * h * m->shared_expert_intermediate_size;
  uint64_t router = h * m->num_experts;
  int attn_layers = m->full_attention_layers + m->sliding_layers;
  uint64_t total = m->params_embedding + attn_layers * attn + m->linear_layers * linear;
  int moe = m->IsMoe() ? m->moe_layers : 0;
  total += static_cast<uint64_t>(m->num_layers - moe) * dense_mlp;
  total += moe * (routed + shared + router);
  m->params_experts = moe * routed;
  m->params_total = total;
}

}  // namespace

double DtypeBytes(std::string_view d) {
  if (d == "bfloat16" || d == "float16" || d == "half" || d == "bf16" || d == "fp16") return 2;
  if (d == "float32" || d == "float" || d == "fp32") return 4;
  if (d.rfind("fp8", 0) == 0 || d == "float8_e4m3fn" || d == "int8") return 1;
  return 0;
}

Result<ModelFacts> ParseModelConfig(std::string_view json_text, const std::string& origin) {
  json top = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (top.is_discarded() || !top.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: not valid JSON (a model config.json is one JSON object)", origin));
  }
  // Multimodal wrappers keep the language model in text_config / llm_config.
  const json* c = &top;
  for (const char* key : {"text_config", "llm_config", "language_config"}) {
    if (top.contains(key) && top[key].is_object() && top[key].contains("num_hidden_layers")) {
      c = &top[key];
      break;
    }
  }
  g_range_error.clear();
  ModelFacts m;
  if (top.contains("architectures") && top["architectures"].is_array() && !top["architectures"].empty() &&
      top["architectures"][0].is_string()) {
    m.architecture = top["architectures"][0].get<std::string>();
  }
  m.model_type = GetStr(top, "model_type");
  m.has_vision = top.contains("vision_config");
  m.num_layers = static_cast<int>(GetInt(*c, "num_hidden_layers", GetInt(*c, "n_layer", GetInt(*c, "num_layers", 0))));
  m.hidden_size = GetInt(*c, "hidden_size", GetInt(*c, "n_embd", GetInt(*c, "d_model", 0)));
  m.num_heads = static_cast<int>(GetInt(*c, "num_attention_heads", GetInt(*c, "n_head", 0)));
  if (!g_range_error.empty()) {
    std::string what = g_range_error;
    g_range_error.clear();
    return Status::InvalidArgument(fmt::format("{}: {}", origin, what));
  }
  if (m.num_layers > 100000) {
    return Status::InvalidArgument(
        fmt::format("{}: num_hidden_layers {} is not a plausible layer count "
                    "(more than 100,000)",
                    origin, m.num_layers));
  }
  if (m.num_layers <= 0 || m.hidden_size <= 0 || m.num_heads <= 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: no num_hidden_layers / hidden_size / num_attention_heads: not a transformer config preflight can read",
        origin));
  }
  m.num_kv_heads =
      static_cast<int>(GetInt(*c, "num_key_value_heads", GetInt(*c, "multi_query_group_num", m.num_heads)));
  if (GetBool(*c, "multi_query", false)) m.num_kv_heads = 1;
  m.head_dim = static_cast<int>(GetInt(*c, "head_dim", m.hidden_size / m.num_heads));
  m.vocab_size = GetInt(*c, "vocab_size", GetInt(top, "vocab_size", 0));
  m.intermediate_size = GetInt(*c, "intermediate_size", GetInt(*c, "ffn_dim", 4 * m.hidden_size));
  m.tie_word_embeddings = GetBool(*c, "tie_word_embeddings", GetBool(top, "tie_word_embeddings", false));
  m.attn_output_gate = GetBool(*c, "attn_output_gate", false);
  m.checkpoint_dtype = GetStr(*c, "torch_dtype");
  if (m.checkpoint_dtype.empty()) m.checkpoint_dtype = GetStr(*c, "dtype");
  if (m.checkpoint_dtype.empty()) m.checkpoint_dtype = GetStr(top, "torch_dtype");
  if (m.checkpoint_dtype.empty()) m.checkpoint_dtype = GetStr(top, "dtype");
  m.kv_lora_rank = static_cast<int>(GetInt(*c, "kv_lora_rank", 0));
  if (m.kv_lora_rank > 0) {
    m.mla = true;
    m.qk_rope_head_dim = static_cast<int>(GetInt(*c, "qk_rope_head_dim", 0));
    m.qk_nope_head_dim = static_cast<int>(GetInt(*c, "qk_nope_head_dim", 0));
    m.v_head_dim = static_cast<int>(GetInt(*c, "v_head_dim", m.head_dim));
    m.q_lora_rank = static_cast<int>(GetInt(*c, "q_lora_rank", 0));
  }
  m.linear_num_key_heads = static_cast<int>(GetInt(*c, "linear_num_key_heads", 0));
  m.linear_num_value_heads = static_cast<int>(GetInt(*c, "linear_num_value_heads", 0));
  m.linear_key_head_dim = static_cast<int>(GetInt(*c, "linear_key_head_dim", 0));
  m.linear_value_head_dim = static_cast<int>(GetInt(*c, "linear_value_head_dim", 0));
  m.linear_conv_kernel_dim = static_cast<int>(GetInt(*c, "linear_conv_kernel_dim", 0));
  m.mamba_num_heads = static_cast<int>(GetInt(*c, "mamba_num_heads", GetInt(*c, "mamba_n_heads", 0)));
  m.mamba_head_dim = static_cast<int>(GetInt(*c, "mamba_head_dim", GetInt(*c, "mamba_d_head", 0)));
  m.mamba_state_size = static_cast<int>(GetInt(*c, "ssm_state_size", GetInt(*c, "mamba_d_state", 0)));
  m.mamba_n_groups = static_cast<int>(GetInt(*c, "n_groups", GetInt(*c, "mamba_n_groups", 1)));
  m.mamba_conv_kernel = static_cast<int>(GetInt(*c, "conv_kernel", GetInt(*c, "mamba_d_conv", 4)));
  m.mtp_layers = static_cast<int>(GetInt(*c, "num_nextn_predict_layers", GetInt(*c, "mtp_num_hidden_layers", 0)));
  DeriveMaxLen(*c, &m);
  ClassifyLayers(*c, &m);
  ReadMoe(*c, &m);
  ReadQuantization(top, *c, &m);
  if (!g_range_error.empty()) {
    std::string what = g_range_error;
    g_range_error.clear();
    return Status::InvalidArgument(fmt::format("{}: {}", origin, what));
  }
  EstimateParams(&m);
  if (m.has_vision)
    m.notes.push_back(
        "the checkpoint includes a vision encoder: its weights count only when model.safetensors.index.json gives the "
        "checkpoint size");
  return m;
}

Result<SafetensorsIndex> ParseSafetensorsIndex(std::string_view json_text, const std::string& origin) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(fmt::format("{}: not valid JSON", origin));
  SafetensorsIndex idx;
  if (j.contains("metadata") && j["metadata"].is_object()) {
    const json& md = j["metadata"];
    if (md.contains("total_size")) {
      const json& t = md["total_size"];
      if (t.is_number_unsigned()) {
        idx.total_size = t.get<uint64_t>();
      } else if (t.is_number_float() && std::isfinite(t.get<double>()) && t.get<double>() > 0 &&
                 t.get<double>() < 1.8e19) {
        idx.total_size = static_cast<uint64_t>(t.get<double>());
      } else if (t.is_string()) {
        std::string text = t.get<std::string>();
        char* end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(text.c_str(), &end, 10);
        if (!text.empty() && *end == '\0' && errno == 0 && text[0] != '-') idx.total_size = v;
      }
    }
  }
  if (j.contains("weight_map") && j["weight_map"].is_object()) {
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      if (!file.is_string()) continue;
      std::string f = file.get<std::string>();
      if (std::find(idx.shards.begin(), idx.shards.end(), f) == idx.shards.end()) idx.shards.push_back(f);
    }
  }
  if (idx.total_size == 0) return Status::InvalidArgument(fmt::format("{}: no metadata.total_size", origin));
  return idx;
}

}  // namespace faultline::preflight
