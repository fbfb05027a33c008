// GPU count vs the parallel layout, and CUDA_VISIBLE_DEVICES problems.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "preflight/check_context.h"
#include "preflight/units.h"
#include "rules/redactor.h"

namespace faultline::preflight {
namespace {

// The visible GPUs, then other GPUs of the node, until `needed`.
std::string SuggestDevices(const CheckContext& ctx, int needed) {
  std::vector<int> pick = ctx.visible.node_indices;
  std::set<int> used(pick.begin(), pick.end());
  for (const probe::GpuInfo& g : ctx.node.gpus) {
    if (static_cast<int>(pick.size()) >= needed) break;
    if (!used.count(g.index)) pick.push_back(g.index);
  }
  if (static_cast<int>(pick.size()) > needed) pick.resize(needed);
  std::string s;
  for (size_t i = 0; i < pick.size(); ++i) s += (i ? "," : "") + std::to_string(pick[i]);
  return s;
}

}  // namespace

// "--hf-auth-token abc" -> "--hf-auth-token ***": values of flags whose name
// says they carry a secret never reach the report.
std::string RedactFlag(const std::string& flag) {
  size_t cut = flag.find_first_of(" =");
  if (cut == std::string::npos) return flag;
  std::string name = flag.substr(0, cut);
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"token", "key", "secret", "passw", "auth", "credential"}) {
    if (lower.find(word) != std::string::npos) return flag.substr(0, cut + 1) + "***";
  }
  return rules::Secrets().Text(flag);  // a secret-shaped value behind an innocent name
}

void CheckCommandLine(const CheckContext& ctx, PreflightReport* report) {
  // vllm/config/cache.py: gpu_memory_utilization is a pydantic Field(gt=0,
  // le=1); SGLang's --mem-fraction-static is a fraction of the GPU as well.
  // Checked here, not with the memory estimate, so that it blocks without model
  // facts.
  if (ctx.cmd.launcher != Launcher::kTorchrun && ctx.cmd.Has("gpu_memory_utilization")) {
    double u = ctx.cmd.Float("gpu_memory_utilization", 0.9);
    if (!(u > 0 && u <= 1)) {
      const bool sglang = ctx.cmd.launcher == Launcher::kSglang;
      const std::string flag = sglang ? "--mem-fraction-static" : "--gpu-memory-utilization";
      Finding f;
      f.check = "command-line";
      f.severity = Severity::kBlocking;
      f.message = fmt::format("{} {} is outside (0, 1]: it is a fraction of each GPU's memory", flag,
                              ctx.cmd.Str("gpu_memory_utilization"));
      if (!sglang) {
        f.tool_error = fmt::format(
            "pydantic ValidationError: 1 validation error for "
            "CacheConfig gpu_memory_utilization Input should be {}",
            u > 1 ? "less than or equal to 1" : "greater than 0");
        f.source = "vllm/config/cache.py (CacheConfig.gpu_memory_utilization)";
      }
      f.fix = fmt::format("{} {}", flag, sglang ? "0.85" : "0.9");
      f.numbers["gpu_memory_utilization"] = u;
      report->Add(std::move(f));
    }
  }
  if (ctx.cmd.unknown_flags.empty()) return;
  std::string list;
  for (const std::string& f : ctx.cmd.unknown_flags) list += (list.empty() ? "" : ", ") + RedactFlag(f);
  Finding f;
  f.check = "command-line";
  f.severity = Severity::kWarning;
  f.message =
      fmt::format("{} argument(s) preflight does not know, not checked: {}", ctx.cmd.unknown_flags.size(), list);
  f.fix = fmt::format("compare with `{} --help` of the installed version", ctx.cmd.entry);
  f.numbers["unknown_flags"] = static_cast<double>(ctx.cmd.unknown_flags.size());
  report->Add(std::move(f));
}

void CheckTopology(const CheckContext& ctx, PreflightReport* report) {
  const ParallelLayout& l = ctx.layout;
  const int visible = static_cast<int>(ctx.visible_gpus.size());
  const int node_count = static_cast<int>(ctx.node.gpus.size());
  std::string vis_desc = ctx.visible.Describe(node_count);

  for (const std::string& problem : ctx.visible.problems) {
    Finding f;
    f.check = "visible-devices";
    f.severity = Severity::kWarning;
    TemplateValues v{{"visible", std::to_string(visible)},
                     {"suggested_devices", SuggestDevices(ctx, std::max(l.needed_local, visible))}};
    CheckText t = ctx.texts->Render("visible-devices", "default", v);
    f.message = fmt::format("CUDA_VISIBLE_DEVICES={}: {}; {} GPU(s) visible", ctx.visible.setting.value_or(""), problem,
                            visible);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = t.fix;
    f.numbers["gpus_visible"] = visible;
    report->Add(std::move(f));
  }

  Finding f;
  f.check = "gpu-count";
  f.numbers["gpus_needed"] = l.needed_local;
  f.numbers["gpus_visible"] = visible;
  f.numbers["tensor_parallel_size"] = l.tp;
  f.numbers["pipeline_parallel_size"] = l.pp;
  f.numbers["data_parallel_size"] = l.dp;
  f.numbers["data_parallel_size_local"] = l.dp_local;
  if (l.gpu_free) {
    f.severity = Severity::kOk;
    f.message = "the launch asks for no GPU (--nproc-per-node cpu)";
    report->Add(std::move(f));
    return;
  }
  std::string where =
      l.nnodes > 1 ? fmt::format("on this node (node {} of {})", l.node_rank, l.nnodes) : "on this node";
  int max_gpu = l.base_gpu_id + (l.needed_local - 1) * l.gpu_id_step;  // sglang's highest device id
  bool too_few = l.needed_local > visible || (ctx.cmd.launcher == Launcher::kSglang && max_gpu >= visible);
  if (!too_few) {
    f.severity = Severity::kOk;
    f.message =
        fmt::format("{} GPU(s) needed {} ({}), {} visible ({})", l.needed_local, where, l.formula, visible, vis_desc);
    if (visible > l.needed_local && !l.ray) {
      f.message += fmt::format("; {} stay unused", visible - l.needed_local);
    }
    report->Add(std::move(f));
    return;
  }
  if (l.ray) {
    f.severity = Severity::kWarning;
    f.message = fmt::format("{} GPUs needed ({}), {} visible here ({}); with Ray the rest must come from other nodes",
                            l.needed_local, l.formula, visible, vis_desc);
    f.fix = "check `ray status` lists the GPUs";
    report->Add(std::move(f));
    return;
  }
  f.severity = Severity::kBlocking;
  int world = l.tp * l.pp * l.pcp;
  int per_replica = std::max(1, world);
  int dp_fit = std::max(1, visible / per_replica);
  int first_bad = visible;
  TemplateValues v{
      {"needed", std::to_string(l.needed_local)},
      {"visible", std::to_string(visible)},
      {"world_size", std::to_string(world)},
      {"max_local_rank", std::to_string(l.needed_local - 1)},
      {"first_bad_rank", std::to_string(first_bad)},
      {"dp_fit", std::to_string(dp_fit)},
      {"suggested_devices", SuggestDevices(ctx, l.needed_local)},
  };
  std::string variant = ctx.Framework();
  if (ctx.cmd.launcher == Launcher::kVllm && world <= visible && l.dp_local > 1) variant = "vllm-dp";
  CheckText t = ctx.texts->Render("gpu-count", variant, v);
  f.message =
      fmt::format("needs {} GPUs {} ({}), {} visible ({})", l.needed_local, where, l.formula, visible, vis_desc);
  if (ctx.cmd.launcher == Launcher::kSglang && l.needed_local <= visible) {
    f.message = fmt::format("GPU ids run up to {} (--base-gpu-id {} + {} x --gpu-id-step {}), {} visible ({})", max_gpu,
                            l.base_gpu_id, l.needed_local - 1, l.gpu_id_step, visible, vis_desc);
  }
  f.tool_error = t.tool_error;
  f.source = t.source;
  f.fix = t.fix;
  if (node_count < l.needed_local) {
    std::string change;
    if (variant == "vllm-dp") {
      change = fmt::format("--data-parallel-size {} (or more nodes)", dp_fit);
    } else if (ctx.cmd.launcher == Launcher::kTorchrun) {
      change = fmt::format("--nproc-per-node {} (or more nodes)", node_count);
    } else {
      change = fmt::format("a layout of at most {} GPUs per node (lower TP / PP / DP), or more nodes", node_count);
    }
    f.fix = fmt::format("this node has only {} GPU(s): {}", node_count, change);
  } else if (variant == "vllm-dp" && dp_fit >= 1) {
    f.fix =
        fmt::format("CUDA_VISIBLE_DEVICES={}, or --data-parallel-size {}", SuggestDevices(ctx, l.needed_local), dp_fit);
  }
  report->Add(std::move(f));
}

void CheckMultiNode(const CheckContext& ctx, PreflightReport* report) {
  const ParallelLayout& l = ctx.layout;
  const LaunchCommand& c = ctx.cmd;
  Finding f;
  f.check = "multi-node";
  f.severity = Severity::kWarning;
  if (c.launcher == Launcher::kVllm && l.dp_local < l.dp && !c.Has("data_parallel_rank") && !l.ray &&
      !c.Has("data_parallel_address")) {
    // vllm/engine/arg_utils.py: the DP coordinator listens on
    // --data-parallel-address, 127.0.0.1 unless given.
    f.message = fmt::format(
        "{} of the {} data-parallel ranks run on other nodes, but --data-parallel-address is not "
        "set: they would look for the head at 127.0.0.1 and wait forever",
        l.dp - l.dp_local, l.dp);
    f.fix =
        "--data-parallel-address HEAD_IP --data-parallel-rpc-port PORT on every node (and --headless "
        "--data-parallel-start-rank N on the others)";
  } else if (c.launcher == Launcher::kVllm && c.Bool("headless") && !c.Has("data_parallel_start_rank") &&
             !c.Has("node_rank")) {
    f.message = "--headless without --data-parallel-start-rank: this node would claim the head's DP ranks";
    f.fix = "--data-parallel-start-rank <first DP rank of this node>";
  } else if (c.launcher == Launcher::kSglang && l.nnodes > 1 && !c.Has("dist_init_addr")) {
    f.message = fmt::format("--nnodes {} without --dist-init-addr: the nodes cannot find each other", l.nnodes);
    f.fix = "--dist-init-addr HEAD_IP:PORT and --node-rank on every node";
  } else if (c.launcher == Launcher::kTorchrun && l.nnodes > 1 && !c.Has("rdzv_endpoint") && !c.Has("master_addr") &&
             ctx.env.count("MASTER_ADDR") == 0) {
    f.message = fmt::format(
        "--nnodes {} without --rdzv-endpoint or --master-addr: every node rendezvouses with "
        "itself at 127.0.0.1",
        l.nnodes);
    f.fix = "--rdzv-backend c10d --rdzv-endpoint HEAD_IP:29500 (same on every node)";
  } else {
    return;
  }
  report->Add(std::move(f));
}

void CheckGpuBusy(const CheckContext& ctx, PreflightReport* report) {
  if (ctx.planned || ctx.visible_gpus.empty() || ctx.layout.gpu_free) return;
  double util = ctx.memory ? ctx.memory->utilization : 0.9;
  int used_gpus = std::min<int>(ctx.layout.needed_local, static_cast<int>(ctx.visible_gpus.size()));
  bool any = false;
  for (int cuda = 0; cuda < used_gpus; ++cuda) {
    const probe::GpuInfo& g = *ctx.visible_gpus[cuda];
    // vLLM compares cudaMemGetInfo's free memory with its total (NVML's total
    // less the driver-reserved memory) times the utilization.
    double total = ToGiB(g.memory_total_bytes) - ToGiB(g.memory_reserved_bytes);
    double used = ToGiB(g.memory_used_bytes);
    double free = total - used;
    double requested = total * util;
    bool has_holders = !g.processes.empty();
    if (used < 1.0 && !has_holders) continue;
    any = true;
    std::string holders;
    for (const probe::GpuProcess& p : g.processes) {
      holders += fmt::format("{}pid {}{} ({:.1f} GiB)", holders.empty() ? "" : ", ", p.pid,
                             p.name.empty() ? "" : " " + p.name, ToGiB(p.used_bytes));
    }
    if (holders.empty()) holders = fmt::format("whatever holds {:.1f} GiB", used);
    Finding f;
    f.check = "gpu-busy";
    f.numbers["cuda_index"] = cuda;
    f.numbers["node_index"] = g.index;
    f.numbers["used_gib"] = used;
    f.numbers["free_gib"] = free;
    f.numbers["requested_gib"] = requested;
    f.numbers["processes"] = static_cast<double>(g.processes.size());
    f.message = fmt::format("GPU {} (cuda:{}) already has {:.1f} of {:.1f} GiB in use by {}", g.index, cuda, used,
                            total, holders);
    if (ctx.cmd.launcher != Launcher::kTorchrun && free < requested) {
      f.severity = Severity::kBlocking;
      double fit = std::floor((free / total - 0.01) * 100) / 100;
      TemplateValues v{{"cuda_index", std::to_string(cuda)},
                       {"free_gib", fmt::format("{:.2f}", free)},
                       {"total_gib", fmt::format("{:.2f}", total)},
                       {"utilization", fmt::format("{}", util)},
                       {"requested_gib", fmt::format("{:.2f}", requested)},
                       {"holders", holders},
                       {"utilization_fit", fmt::format("{:.2f}", std::max(0.0, fit))}};
      CheckText t = ctx.texts->Render("gpu-busy", ctx.Framework(), v);
      f.message += fmt::format("; {:.1f} GiB free < {:.1f} GiB requested (utilization {})", free, requested, util);
      f.tool_error = t.tool_error;
      f.source = t.source;
      f.fix = t.fix;
    } else {
      f.severity = Severity::kWarning;
      f.fix = "make sure the other processes stay small, or pick idle GPUs";
    }
    report->Add(std::move(f));
  }
  if (!any) {
    Finding f;
    f.check = "gpu-busy";
    f.severity = Severity::kOk;
    f.message = fmt::format("the {} GPU(s) used hold no other process", used_gpus);
    report->Add(std::move(f));
  }
}

}  // namespace faultline::preflight
