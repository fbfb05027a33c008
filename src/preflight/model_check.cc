// Model files present, head/expert counts divisible by the parallel sizes,
// dtype supported by the GPU.
#include <fmt/format.h>

#include <algorithm>

#include "preflight/check_context.h"

namespace faultline::preflight {
namespace {

std::string Divisors(int n, int limit) {
  std::string s;
  for (int d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) s += (s.empty() ? "" : ", ") + std::to_string(d);
  }
  return s;
}

// TP sizes that split `heads` evenly or replicate them evenly.
std::string KvChoices(int kv_heads, int limit) {
  std::string s;
  for (int tp = 1; tp <= limit; tp *= 2) {
    if (kv_heads % tp == 0 || tp % kv_heads == 0) s += (s.empty() ? "" : ", ") + std::to_string(tp);
  }
  return s;
}

}  // namespace

void CheckModelFiles(const CheckContext& ctx, PreflightReport* report) {
  if (ctx.cmd.launcher == Launcher::kTorchrun) return;
  const ModelLocation& loc = ctx.model;
  Finding f;
  f.check = "model-files";
  TemplateValues v{{"model", ctx.cmd.model}};
  switch (loc.kind) {
    case ModelLocation::Kind::kExplicit:
      f.severity = Severity::kOk;
      f.message = fmt::format("model facts from {}", loc.description);
      break;
    case ModelLocation::Kind::kLocalDir:
    case ModelLocation::Kind::kHubCache:
      if (!loc.missing_shards.empty()) {
        f.severity = Severity::kBlocking;
        v["missing"] = std::to_string(loc.missing_shards.size());
        CheckText t = ctx.texts->Render("model-files", "shards", v);
        f.message =
            fmt::format("{} of the weight shards listed in model.safetensors.index.json are missing (first: {})",
                        loc.missing_shards.size(), loc.missing_shards.front());
        f.tool_error = t.tool_error;
        f.source = t.source;
        f.fix = t.fix;
        f.numbers["missing_shards"] = static_cast<double>(loc.missing_shards.size());
      } else {
        f.severity = Severity::kOk;
        f.message = fmt::format("model files found: {}", loc.description);
      }
      break;
    case ModelLocation::Kind::kMissingPath: {
      f.severity = Severity::kBlocking;
      CheckText t = ctx.texts->Render("model-files", "missing", v);
      f.message = fmt::format("model {}: {}", ctx.cmd.model, loc.description);
      f.tool_error = t.tool_error;
      f.source = t.source;
      f.fix = t.fix;
      break;
    }
    case ModelLocation::Kind::kNotCached: {
      auto offline = ctx.env.find("HF_HUB_OFFLINE");
      bool is_offline = offline != ctx.env.end() && (offline->second == "1" || offline->second == "true");
      f.severity = is_offline ? Severity::kBlocking : Severity::kWarning;
      std::string searched;
      for (const std::string& s : loc.searched) searched += (searched.empty() ? "" : ", ") + s;
      f.message = fmt::format("{} is not in the local Hugging Face cache (looked in {}); {}", ctx.cmd.model,
                              searched.empty() ? "no cache directory" : searched,
                              is_offline ? "HF_HUB_OFFLINE is set, so it cannot be downloaded"
                                         : "it will be downloaded at start, and the model checks below are skipped");
      f.fix = fmt::format("download it first (huggingface-cli download {}), or pass --model-config FILE to check it",
                          ctx.cmd.model);
      break;
    }
  }
  report->Add(std::move(f));
}

void CheckDivisibility(const CheckContext& ctx, PreflightReport* report) {
  if (!ctx.model.facts || ctx.cmd.launcher == Launcher::kTorchrun) return;
  const ModelFacts& m = *ctx.model.facts;
  const int tp = ctx.layout.tp;
  std::vector<Finding> bad;
  if (m.num_heads % tp != 0) {
    Finding f;
    f.check = "divisibility";
    f.severity = Severity::kBlocking;
    CheckText t = ctx.texts->Render("divisibility", "heads",
                                    {{"heads", std::to_string(m.num_heads)},
                                     {"tp", std::to_string(tp)},
                                     {"tp_choices", Divisors(m.num_heads, 16)}});
    f.message = fmt::format("{} attention heads do not split over TP {}", m.num_heads, tp);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = t.fix;
    f.numbers["heads"] = m.num_heads;
    f.numbers["tensor_parallel_size"] = tp;
    bad.push_back(std::move(f));
  }
  if (!m.mla && m.num_kv_heads > 0 && m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) {
    Finding f;
    f.check = "divisibility";
    f.severity = Severity::kBlocking;
    CheckText t = ctx.texts->Render("divisibility", "kv-heads",
                                    {{"kv_heads", std::to_string(m.num_kv_heads)},
                                     {"tp", std::to_string(tp)},
                                     {"tp_choices", KvChoices(m.num_kv_heads, 16)}});
    f.message = fmt::format("{} KV heads neither split nor replicate evenly over TP {}", m.num_kv_heads, tp);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = t.fix;
    f.numbers["kv_heads"] = m.num_kv_heads;
    bad.push_back(std::move(f));
  }
  for (int heads : {m.linear_num_key_heads, m.linear_num_value_heads, m.mamba_num_heads}) {
    if (heads > 0 && heads % tp != 0) {
      Finding f;
      f.check = "divisibility";
      f.severity = Severity::kBlocking;
      CheckText t = ctx.texts->Render(
          "divisibility", "linear-heads",
          {{"heads", std::to_string(heads)}, {"tp", std::to_string(tp)}, {"tp_choices", Divisors(heads, 16)}});
      f.message = fmt::format("{} linear-attention heads do not split over TP {}", heads, tp);
      f.tool_error = t.tool_error;
      f.source = t.source;
      f.fix = t.fix;
      bad.push_back(std::move(f));
      break;
    }
  }
  if (m.IsMoe() && ctx.layout.expert_parallel && m.num_experts % ctx.layout.ep != 0) {
    Finding f;
    f.check = "divisibility";
    f.severity = Severity::kWarning;
    CheckText t = ctx.texts->Render(
        "divisibility", "experts", {{"experts", std::to_string(m.num_experts)}, {"ep", std::to_string(ctx.layout.ep)}});
    f.message = fmt::format("{} experts over EP {}: uneven split", m.num_experts, ctx.layout.ep);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = t.fix;
    bad.push_back(std::move(f));
  }
  if (bad.empty()) {
    Finding f;
    f.check = "divisibility";
    f.severity = Severity::kOk;
    std::string linear = m.linear_num_value_heads > 0 ? fmt::format(" / {}+{} linear-attention heads",
                                                                    m.linear_num_key_heads, m.linear_num_value_heads)
                                                      : "";
    std::string experts;
    if (m.IsMoe()) {
      experts = ctx.layout.expert_parallel ? fmt::format(" / {} experts over EP {}", m.num_experts, ctx.layout.ep)
                                           : fmt::format(" / {} experts", m.num_experts);
    }
    f.message = fmt::format("{} heads / {} KV heads{}{} split evenly over TP {}", m.num_heads,
                            m.mla ? 1 : m.num_kv_heads, linear, experts, tp);
    report->Add(std::move(f));
  }
  for (Finding& f : bad) report->Add(std::move(f));
}

void CheckDtype(const CheckContext& ctx, PreflightReport* report) {
  if (!ctx.model.facts || !ctx.memory || ctx.visible_gpus.empty()) return;
  const probe::GpuInfo& g = *ctx.visible_gpus.front();
  if (g.compute_major == 0) return;
  if (ctx.memory->runtime_dtype == "bfloat16" && g.compute_major < 8 && ctx.cmd.launcher == Launcher::kVllm) {
    Finding f;
    f.check = "dtype";
    f.severity = Severity::kBlocking;
    std::string compute = fmt::format("{}.{}", g.compute_major, g.compute_minor);
    CheckText t = ctx.texts->Render("dtype", "bf16", {{"gpu_name", g.name}, {"compute", compute}});
    f.message = fmt::format("the model runs in bfloat16, which {} (compute {}) does not support", g.name, compute);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = t.fix;
    report->Add(std::move(f));
  }
}

}  // namespace faultline::preflight
