#include "preflight/preflight.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "preflight/check_context.h"
#include "preflight/gpu_catalog.h"
#include "preflight/launch_command.h"
#include "preflight/memory_estimate.h"
#include "preflight/model_locator.h"
#include "preflight/units.h"

namespace faultline::preflight {
namespace {

ParallelLayout LayoutFor(const LaunchCommand& cmd, int visible) {
  ParallelLayout l;
  l.nnodes = static_cast<int>(std::max<int64_t>(1, cmd.Int("nnodes", 1)));
  l.node_rank = static_cast<int>(cmd.Int("node_rank", 0));
  switch (cmd.launcher) {
    case Launcher::kVllm: {
      l.tp = static_cast<int>(std::max<int64_t>(1, cmd.Int("tensor_parallel_size", 1)));
      l.pp = static_cast<int>(std::max<int64_t>(1, cmd.Int("pipeline_parallel_size", 1)));
      l.pcp = static_cast<int>(std::max<int64_t>(1, cmd.Int("prefill_context_parallel_size", 1)));
      l.dp = static_cast<int>(std::max<int64_t>(1, cmd.Int("data_parallel_size", 1)));
      if (cmd.Has("data_parallel_size_local")) {
        l.dp_local = static_cast<int>(std::max<int64_t>(0, cmd.Int("data_parallel_size_local", l.dp)));
      } else if (cmd.Has("data_parallel_rank")) {
        l.dp_local = 1;  // external load balancing: one DP rank per process
      } else if (l.nnodes > 1 && l.dp > 1) {
        l.dp_local = std::max(1, l.dp / l.nnodes);
      } else {
        l.dp_local = l.dp;
      }
      int world = l.tp * l.pp * l.pcp;
      if (l.dp == 1 && l.nnodes > 1) {
        l.needed_local = (world + l.nnodes - 1) / l.nnodes;
      } else {
        l.needed_local = world * l.dp_local;
      }
      l.expert_parallel = cmd.Bool("enable_expert_parallel");
      l.ep = l.expert_parallel ? l.tp * l.dp * l.pcp : 1;
      l.ray = cmd.Str("distributed_executor_backend") == "ray" || cmd.Str("data_parallel_backend") == "ray";
      l.formula = fmt::format("TP {} x PP {} x DP {}", l.tp, l.pp, l.dp_local);
      if (l.pcp > 1) l.formula = fmt::format("TP {} x PP {} x PCP {} x DP {}", l.tp, l.pp, l.pcp, l.dp_local);
      if (l.dp_local != l.dp) l.formula += fmt::format(" local of DP {}", l.dp);
      if (l.dp == 1 && l.nnodes > 1) l.formula += fmt::format(" over {} nodes", l.nnodes);
      break;
    }
    case Launcher::kSglang: {
      l.tp = static_cast<int>(std::max<int64_t>(1, cmd.Int("tensor_parallel_size", 1)));
      l.pp = static_cast<int>(std::max<int64_t>(1, cmd.Int("pipeline_parallel_size", 1)));
      l.dp = static_cast<int>(std::max<int64_t>(1, cmd.Int("data_parallel_size", 1)));
      int ep = static_cast<int>(std::max<int64_t>(1, cmd.Int("expert_parallel_size", 1)));
      l.expert_parallel = ep > 1;
      l.ep = ep;
      bool dp_attention = cmd.Bool("enable_dp_attention");
      int total = l.tp * l.pp * (dp_attention ? 1 : l.dp);
      l.needed_local = (total + l.nnodes - 1) / l.nnodes;
      l.dp_local = dp_attention ? 1 : l.dp;
      l.base_gpu_id = static_cast<int>(cmd.Int("base_gpu_id", 0));
      l.gpu_id_step = static_cast<int>(std::max<int64_t>(1, cmd.Int("gpu_id_step", 1)));
      l.formula = dp_attention ? fmt::format("TP {} x PP {}, DP {} inside TP (--enable-dp-attention)", l.tp, l.pp, l.dp)
                               : fmt::format("TP {} x PP {} x DP {}", l.tp, l.pp, l.dp);
      if (l.nnodes > 1) l.formula += fmt::format(" over {} nodes", l.nnodes);
      break;
    }
    case Launcher::kTorchrun: {
      std::string nodes = cmd.Str("nnodes_range", "1");
      l.nnodes = std::max(1, std::atoi(nodes.c_str()));  // "1:4" -> 1 (the minimum)
      std::string nproc = cmd.Str("nproc_per_node", "1");
      if (nproc == "gpu" || nproc == "auto") {
        l.needed_local = std::max(1, visible);
        l.formula = fmt::format("--nproc-per-node {} = one process per visible GPU", nproc);
      } else if (nproc == "cpu") {
        l.gpu_free = true;
        l.needed_local = 0;
        l.formula = "--nproc-per-node cpu";
      } else {
        l.needed_local = std::max(1, std::atoi(nproc.c_str()));
        l.formula = fmt::format("--nproc-per-node {}", l.needed_local);
      }
      l.dp = l.needed_local * l.nnodes;
      break;
    }
  }
  return l;
}

Result<probe::GpuInventory> PlannedNode(const PreflightRequest& req) {
  const CatalogGpu* type = nullptr;
  if (!req.plan_gpu_type.empty()) {
    type = GpuCatalog::Builtin().Find(req.plan_gpu_type);
    if (!type) {
      std::string known;
      for (const CatalogGpu& g : GpuCatalog::Builtin().gpus()) {
        known += (known.empty() ? "" : ", ") + (g.aliases.empty() ? g.name : g.aliases.front());
      }
      return Status::InvalidArgument(
          fmt::format("--gpu-type {}: not in the GPU catalog (rules/gpus.yaml); known: {}; or give --gpu-memory SIZE",
                      req.plan_gpu_type, known));
    }
  }
  if (!req.plan_gpus) return Status::InvalidArgument("--gpu-type / --gpu-memory describe the GPUs: also give --gpus N");
  if (*req.plan_gpus <= 0) return Status::InvalidArgument("--gpus must be at least 1");
  uint64_t memory = req.plan_gpu_memory.value_or(type ? type->memory_mib * 1024ULL * 1024ULL : 0);
  if (memory == 0) return Status::InvalidArgument("--gpus N needs --gpu-memory SIZE or --gpu-type NAME");
  probe::GpuInventory inv;
  inv.source = "plan";
  for (int i = 0; i < *req.plan_gpus; ++i) {
    probe::GpuInfo g;
    g.index = i;
    g.name = type ? type->name : fmt::format("GPU with {:.1f} GiB", ToGiB(memory));
    g.memory_total_bytes = memory;
    // The catalog knows how much of it CUDA reports (the rest is
    // driver-reserved).
    if (type && !req.plan_gpu_memory && type->cuda_memory_mib > 0 && type->cuda_memory_mib < type->memory_mib) {
      g.memory_reserved_bytes = (type->memory_mib - type->cuda_memory_mib) * 1024ULL * 1024ULL;
    }
    if (type && std::isdigit(static_cast<unsigned char>(type->compute.empty() ? 'x' : type->compute[0]))) {
      std::sscanf(type->compute.c_str(), "%d.%d", &g.compute_major, &g.compute_minor);
    }
    inv.gpus.push_back(std::move(g));
  }
  return inv;
}

std::string PlanDescription(const PreflightRequest& req, const probe::GpuInventory& inv) {
  double gib = inv.gpus.empty() ? 0 : ToGiB(inv.gpus.front().memory_total_bytes);
  std::string type = req.plan_gpu_type.empty() ? "" : fmt::format(" {}", inv.gpus.front().name);
  return fmt::format("plan: {} x{} {:.1f} GiB (--gpus{}{})", inv.gpus.size(), type, gib,
                     req.plan_gpu_memory ? " --gpu-memory" : "", req.plan_gpu_type.empty() ? "" : " --gpu-type");
}

}  // namespace

Result<PreflightReport> RunPreflight(const PreflightRequest& req) {
  Result<LaunchCommand> cmd = ParseLaunchCommand(req.command);
  if (!cmd.ok()) return cmd.status();

  CheckContext ctx;
  ctx.cmd = *cmd;
  ctx.env = req.env;
  for (const auto& [k, v] : ctx.cmd.env) ctx.env[k] = v;
  ctx.check_port = req.check_port;

  // --- GPUs of the node ------------------------------------------------------
  bool planning = req.plan_gpus || req.plan_gpu_memory || !req.plan_gpu_type.empty();
  PreflightReport report;
  if (planning) {
    Result<probe::GpuInventory> plan = PlannedNode(req);
    if (!plan.ok()) return plan.status();
    ctx.node = *plan;
    ctx.planned = true;
    ctx.check_port = false;
    report.gpu_source = PlanDescription(req, ctx.node);
  } else {
    Result<probe::GpuInventory> inv = req.gpu_source ? req.gpu_source->Read() : probe::ReadLocalGpus();
    if (!inv.ok()) {
      return Status::NotFound(
          fmt::format("{}; to plan for another machine give --gpus N --gpu-memory SIZE (or --gpu-type NAME)",
                      inv.status().message()));
    }
    ctx.node = *inv;
    report.gpu_source = fmt::format("{}: {} GPU(s){}", inv->source, inv->gpus.size(),
                                    inv->driver_version.empty() ? "" : ", driver " + inv->driver_version);
  }
  ctx.visible = ResolveVisibleDevices(ctx.node.gpus, ctx.env);
  for (int idx : ctx.visible.node_indices) {
    for (const probe::GpuInfo& g : ctx.node.gpus) {
      if (g.index == idx) ctx.visible_gpus.push_back(&g);
    }
  }
  ctx.layout = LayoutFor(ctx.cmd, static_cast<int>(ctx.visible_gpus.size()));

  // --- Model -----------------------------------------------------------------
  if (ctx.cmd.launcher != Launcher::kTorchrun) {
    LocateRequest lr;
    lr.model = ctx.cmd.model;
    lr.model_config = req.model_config;
    lr.hf_config_path = ctx.cmd.Str("hf_config_path");
    lr.download_dir = ctx.cmd.Str("download_dir");
    lr.revision = ctx.cmd.Str("revision");
    lr.env = ctx.env;
    Result<ModelLocation> loc = LocateModel(lr);
    if (!loc.ok()) return loc.status();
    ctx.model = *loc;
    if (ctx.model.facts) {
      report.model_config = ctx.model.config_path;
      for (const std::string& n : ctx.model.facts->notes) report.notes.push_back(n);
      std::optional<int64_t> given = ctx.cmd.OptInt("max_model_len");
      ctx.max_model_len_given = given.has_value();
      ctx.max_model_len = given.value_or(ctx.model.facts->derived_max_len);
      const probe::GpuInfo* gpu = !ctx.visible_gpus.empty() ? ctx.visible_gpus.front()
                                  : !ctx.node.gpus.empty()  ? &ctx.node.gpus.front()
                                                            : nullptr;
      if (gpu) {
        MemoryInputs in;
        in.launcher = ctx.cmd.launcher;
        in.tp = ctx.layout.tp;
        in.pp = ctx.layout.pp;
        in.dp = ctx.layout.dp;
        in.expert_parallel = ctx.layout.expert_parallel;
        // What CUDA reports as the device total: NVML's total less the
        // driver-reserved memory (NVML v2; the catalog for planned GPUs).
        in.gpu_total_bytes = gpu->memory_total_bytes > gpu->memory_reserved_bytes
                                 ? gpu->memory_total_bytes - gpu->memory_reserved_bytes
                                 : gpu->memory_total_bytes;
        in.gpu_name = gpu->name;
        if (ctx.cmd.Has("gpu_memory_utilization")) in.utilization = ctx.cmd.Float("gpu_memory_utilization", 0.9);
        in.max_num_batched_tokens = ctx.cmd.OptInt("max_num_batched_tokens");
        in.max_num_seqs = ctx.cmd.OptInt("max_num_seqs");
        in.dtype = ctx.cmd.Str("dtype", "auto");
        in.kv_cache_dtype = ctx.cmd.Str("kv_cache_dtype", "auto");
        in.quantization = ctx.cmd.Str("quantization");
        in.cpu_offload_gb = ctx.cmd.Float("cpu_offload_gb", 0);
        in.kv_cache_memory_bytes = ctx.cmd.OptInt("kv_cache_memory_bytes");
        in.enforce_eager = ctx.cmd.Bool("enforce_eager");
        in.vllm_version = req.vllm_version;
        auto env_bool = [&](const char* name) -> std::optional<bool> {
          auto it = ctx.env.find(name);
          if (it == ctx.env.end() || it->second.empty()) return std::nullopt;
          return !(it->second == "0" || it->second == "false" || it->second == "False");
        };
        in.flashinfer_sampler = env_bool("VLLM_USE_FLASHINFER_SAMPLER");
        in.estimate_cudagraphs = env_bool("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS");
        ctx.memory = EstimateMemory(*ctx.model.facts, in);
      }
    }
  }

  // --- Checks ----------------------------------------------------------------
  report.launcher = ctx.Framework();
  report.entry = ctx.cmd.entry;
  report.model = ctx.cmd.launcher == Launcher::kTorchrun
                     ? (ctx.cmd.script_args.empty() ? "" : ctx.cmd.script_args.front())
                     : ctx.cmd.model;
  report.visible_setting = ctx.visible.Describe(ctx.node.gpus.size());
  for (size_t i = 0; i < ctx.visible_gpus.size(); ++i) {
    const probe::GpuInfo& g = *ctx.visible_gpus[i];
    report.gpus.push_back(GpuLine{g.index, static_cast<int>(i), g.name, g.uuid, ToGiB(g.memory_total_bytes),
                                  ToGiB(g.memory_used_bytes), static_cast<int>(g.processes.size())});
  }
  for (const std::string& n : ctx.cmd.notes) report.notes.push_back(n);
  if (ctx.cmd.Has("speculative_config")) {
    report.notes.push_back(
        "speculative decoding is on: the draft model's weights and KV cache are not in these estimates");
  }
  for (const std::string& n : ctx.visible.notes) report.notes.push_back(n);
  if (ctx.memory) {
    for (const std::string& n : ctx.memory->assumptions) report.notes.push_back(n);
  }

  CheckCommandLine(ctx, &report);
  CheckTopology(ctx, &report);
  CheckMultiNode(ctx, &report);
  CheckGpuBusy(ctx, &report);
  CheckModelFiles(ctx, &report);
  CheckDivisibility(ctx, &report);
  CheckDtype(ctx, &report);
  CheckMemory(ctx, &report);
  CheckPort(ctx, &report);
  CheckEnvironment(ctx, &report);

  Estimates& e = report.estimates;
  e.gpus_needed = ctx.layout.needed_local;
  e.gpus_visible = static_cast<int64_t>(ctx.visible_gpus.size());
  if (ctx.model.facts) e.max_model_len = ctx.max_model_len;
  if (ctx.memory) {
    const MemoryEstimate& m = *ctx.memory;
    e.weights_gib_per_gpu = m.weights_per_gpu / kGiB;
    e.kv_cache_gib_per_gpu = std::max(0.0, m.kv_available_bytes / kGiB);
    e.kv_cache_tokens = m.TokenCapacity(ctx.max_model_len);
    e.activation_gib_per_gpu = m.activation_bytes / kGiB;
    e.gpu_memory_utilization = m.utilization;
  }
  if (!ctx.visible_gpus.empty()) e.gpu_memory_gib = ToGiB(ctx.visible_gpus.front()->memory_total_bytes);
  return report;
}

}  // namespace faultline::preflight
