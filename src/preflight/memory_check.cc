// Weights per GPU against the memory budget, the context length against the
// model's, and the KV cache against --max-model-len.
#include <fmt/format.h>

#include <cmath>

#include "preflight/check_context.h"
#include "preflight/units.h"

namespace faultline::preflight {
namespace {

// Smallest power-of-two TP that would bring the weights under the budget.
int TpThatFits(const MemoryEstimate& e, int tp) {
  double budget = e.requested_bytes - e.activation_bytes - e.non_torch_bytes;
  for (int t = tp * 2; t <= 64; t *= 2) {
    if (e.weights_per_gpu * tp / t < budget * 0.8) return t;
  }
  return tp * 2;
}

std::string Kilo(int64_t tokens) {
  if (tokens >= 10'000'000) return fmt::format("{:.1f}M", static_cast<double>(tokens) / 1e6);
  if (tokens >= 1'000'000) return fmt::format("{:.2f}M", static_cast<double>(tokens) / 1e6);
  if (tokens >= 10000) return fmt::format("{}k", (tokens + 500) / 1000);
  return WithCommas(tokens);
}

// Round down to a friendly length: a power of two when close, else 1024s.
int64_t FriendlyLen(int64_t len) {
  if (len <= 0) return 0;
  int64_t p = 1;
  while (p * 2 <= len) p *= 2;
  if (len - p < p / 4) return p;
  return len / 1024 * 1024;
}

}  // namespace

void CheckMemory(const CheckContext& ctx, PreflightReport* report) {
  if (!ctx.memory || !ctx.model.facts || ctx.visible_gpus.empty()) return;
  const MemoryEstimate& e = *ctx.memory;
  const ModelFacts& m = *ctx.model.facts;
  const probe::GpuInfo& gpu = *ctx.visible_gpus.front();
  const double total_gib = ToGiB(gpu.memory_total_bytes);
  const std::string fw = ctx.Framework();
  const std::string util_flag =
      ctx.cmd.launcher == Launcher::kSglang ? "--mem-fraction-static" : "--gpu-memory-utilization";

  // The fraction itself is checked by CheckCommandLine (blocking when outside
  // (0, 1]).
  if (e.utilization <= 0 || e.utilization > 1) return;

  // --- weights ---------------------------------------------------------------
  Finding w;
  w.check = "weights-fit";
  double wg = e.weights_per_gpu / kGiB;
  double budget = e.requested_bytes / kGiB;
  w.numbers["weights_gib_per_gpu"] = wg;
  w.numbers["weights_gib_total"] = e.weight_bytes_total / kGiB;
  w.numbers["budget_gib"] = budget;
  w.numbers["gpu_memory_gib"] = total_gib;
  std::string split = fmt::format("TP {}", ctx.layout.tp);
  if (ctx.layout.pp > 1) split += fmt::format(" x PP {}", ctx.layout.pp);
  if (ctx.layout.expert_parallel) split += fmt::format(", experts over EP {}", ctx.layout.ep);
  std::string what = m.quant_method.empty() ? e.runtime_dtype : m.quant_method;
  std::string cuda_total =
      gpu.memory_reserved_bytes > 0 && gpu.memory_reserved_bytes < gpu.memory_total_bytes
          ? fmt::format(" ({:.1f} GiB visible to CUDA)", ToGiB(gpu.memory_total_bytes - gpu.memory_reserved_bytes))
          : "";
  w.message = fmt::format(
      "weights {:.1f} GiB per GPU ({:.1f} GB {} / {}) on {:.1f} "
      "GiB GPUs{}; budget {:.1f} GiB at {} {}",
      wg, e.weight_bytes_total / 1e9, what, split, total_gib, cuda_total, budget, util_flag, e.utilization);
  if (e.weights_per_gpu > e.requested_bytes) {
    w.severity = Severity::kBlocking;
    CheckText t = ctx.texts->Render("weights-fit", fw, {{"tp_fit", std::to_string(TpThatFits(e, ctx.layout.tp))}});
    w.tool_error = t.tool_error;
    w.source = t.source;
    w.fix = t.fix;
  } else {
    w.severity = Severity::kOk;
  }
  report->Add(std::move(w));
  if (e.weights_per_gpu > e.requested_bytes) return;

  // --- max-model-len vs the model's
  // ---------------------------------------------
  if (ctx.max_model_len_given && m.derived_max_len > 0 && ctx.max_model_len > m.derived_max_len &&
      ctx.cmd.launcher == Launcher::kVllm) {
    auto allow = ctx.env.find("VLLM_ALLOW_LONG_MAX_MODEL_LEN");
    bool allowed = allow != ctx.env.end() && allow->second == "1";
    Finding f;
    f.check = "max-model-len";
    f.severity = allowed ? Severity::kWarning : Severity::kBlocking;
    CheckText t = ctx.texts->Render("max-model-len", fw,
                                    {{"max_model_len", std::to_string(ctx.max_model_len)},
                                     {"derived", std::to_string(m.derived_max_len)},
                                     {"derived_key", m.derived_max_len_key}});
    f.message = fmt::format("--max-model-len {} exceeds the model's {} ({})", ctx.max_model_len, m.derived_max_len,
                            m.derived_max_len_key);
    if (!allowed) {
      f.tool_error = t.tool_error;
      f.source = t.source;
    }
    f.fix = t.fix;
    f.numbers["max_model_len"] = static_cast<double>(ctx.max_model_len);
    f.numbers["derived_max_len"] = static_cast<double>(m.derived_max_len);
    report->Add(std::move(f));
  }

  // --- KV cache
  // ----------------------------------------------------------------
  Finding k;
  k.check = "kv-cache";
  double avail_gib = e.kv_available_bytes / kGiB;
  int64_t len = ctx.max_model_len;
  std::string len_desc = ctx.max_model_len_given ? fmt::format("--max-model-len {}", len)
                                                 : fmt::format("--max-model-len {} (model default)", len);
  if (ctx.cmd.launcher == Launcher::kSglang) {
    len_desc = ctx.max_model_len_given ? fmt::format("--context-length {}", len)
                                       : fmt::format("context length {} (model default)", len);
  }
  k.numbers["kv_cache_gib_per_gpu"] = avail_gib;
  k.numbers["activation_gib"] = e.activation_bytes / kGiB;
  k.numbers["non_torch_gib"] = e.non_torch_bytes / kGiB;
  k.numbers["kv_bytes_per_token"] = e.kv_bytes_per_token + e.sliding_bytes_per_token;
  k.numbers["max_model_len"] = static_cast<double>(len);
  std::string layers = m.IsHybrid()
                           ? fmt::format(" ({} of {} layers keep a KV cache, {} keep a {:.0f} MiB state per sequence)",
                                         m.full_attention_layers + m.sliding_layers, m.num_layers, m.linear_layers,
                                         e.state_bytes_per_seq / (1024.0 * 1024.0))
                           : "";
  if (e.kv_available_bytes <= 0) {
    k.severity = Severity::kBlocking;
    CheckText t = ctx.texts->Render("kv-cache", fw == "vllm" ? "vllm-none" : fw,
                                    {{"tp_fit", std::to_string(TpThatFits(e, ctx.layout.tp))}});
    k.message = fmt::format(
        "no memory left for the KV cache: {:.1f} GiB budget - {:.1f} weights - {:.1f} activations - "
        "{:.1f} other = {:.1f} GiB",
        budget, wg, e.activation_bytes / kGiB, e.non_torch_bytes / kGiB, avail_gib);
    k.tool_error = t.tool_error;
    k.source = t.source;
    k.fix = t.fix;
    report->Add(std::move(k));
    return;
  }
  int64_t tokens = e.TokenCapacity(len);
  k.numbers["kv_cache_tokens"] = static_cast<double>(tokens);
  double need = e.BytesForRequest(len);
  k.numbers["needed_gib"] = need / kGiB;
  if (len > 0 && need > e.kv_available_bytes) {
    int64_t fit = e.MaxFittingLen(len);
    int64_t suggest = FriendlyLen(fit);
    k.severity = Severity::kBlocking;
    CheckText t = ctx.texts->Render("kv-cache", fw,
                                    {{"max_model_len", std::to_string(len)},
                                     {"needed_gib", fmt::format("{:.2f}", need / kGiB)},
                                     {"available_gib", fmt::format("{:.2f}", avail_gib)},
                                     {"estimated_max_len", std::to_string(fit)},
                                     {"suggested_len", std::to_string(suggest)}});
    k.message = fmt::format(
        "KV cache ~{:.1f} GiB per GPU -> ~{} tokens{}; {} "
        "needs {:.1f} GiB for one request: "
        "does not fit by {:.1f} GiB, {} will refuse to "
        "start; the largest that fits is ~{}",
        avail_gib, Kilo(tokens), layers, len_desc, need / kGiB, (need - e.kv_available_bytes) / kGiB, ctx.DisplayName(),
        WithCommas(fit));
    k.numbers["margin_gib"] = (e.kv_available_bytes - need) / kGiB;
    k.tool_error = t.tool_error;
    k.source = t.source;
    k.fix = t.fix;
    k.numbers["estimated_max_len"] = static_cast<double>(fit);
    report->Add(std::move(k));
    return;
  }
  double concurrency = need > 0 ? e.kv_available_bytes / need : 0;
  k.severity = Severity::kOk;
  // The largest length one request could have (vLLM's estimate_max_model_len),
  // searched up to the model's own limit (or 4x the requested length).
  int64_t ceiling = std::max<int64_t>(len, m.derived_max_len > 0 ? m.derived_max_len : len * 4);
  int64_t largest = e.MaxFittingLen(ceiling);
  k.numbers["margin_gib"] = (e.kv_available_bytes - need) / kGiB;
  k.numbers["largest_fitting_len"] = static_cast<double>(largest);
  std::string largest_desc;
  if (largest < ceiling) {
    largest_desc = fmt::format("; the largest that fits is ~{}", WithCommas(largest));
  } else if (len < ceiling) {
    largest_desc = fmt::format("; the model's full {} fits too", WithCommas(ceiling));
  }
  k.message = fmt::format(
      "KV cache ~{:.1f} GiB per GPU -> ~{} tokens{}; {} fits with {:.1f} GiB "
      "to spare ({:.1f} requests of full "
      "length at once){}",
      avail_gib, Kilo(tokens), layers, len_desc, (e.kv_available_bytes - need) / kGiB, concurrency, largest_desc);
  if (concurrency < 1.2) {
    k.severity = Severity::kWarning;
    k.message += "; tight: a little more memory use elsewhere and it will not start";
    k.fix = fmt::format("--max-model-len {} leaves headroom", FriendlyLen(static_cast<int64_t>(len * 0.8)));
  }
  report->Add(std::move(k));
}

}  // namespace faultline::preflight
