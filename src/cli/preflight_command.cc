// faultline preflight [--json] [--gpus N --gpu-memory SIZE | --gpu-type NAME]
//                     [--model-config FILE] -- COMMAND...
// Checks a vLLM / SGLang / torchrun launch before it starts. Exit 0: no
// blocking problem; 1: a blocking problem; 2: usage or input error.
// `--list-gpus` prints the GPU inventory instead (NVML or nvidia-smi).
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "preflight/calibration.h"
#include "preflight/preflight.h"
#include "preflight/report_writer.h"
#include "preflight/units.h"
#include "probe/gpu_inventory.h"

extern char** environ;

namespace faultline::cli {
namespace {

struct PreflightOptions {
  bool json = false;
  int gpus = 0;
  std::string gpu_memory;
  std::string gpu_type;
  std::string model_config;
  std::string gpu_source = "auto";
  bool no_port_check = false;
  bool list_gpus = false;
  std::string vllm_version;
  std::string calibration;
  std::vector<std::string> command;
};

std::map<std::string, std::string> ProcessEnv() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

Result<probe::GpuInventory> ReadInventory(const std::string& source) {
  if (source == "nvml") return probe::NewNvmlSource()->Read();
  if (source == "nvidia-smi") return probe::NewNvidiaSmiSource()->Read();
  return probe::ReadLocalGpus();
}

int ListGpus(const PreflightOptions& opt) {
  Result<probe::GpuInventory> inv = ReadInventory(opt.gpu_source);
  if (!inv.ok()) {
    std::cerr << "faultline preflight: " << inv.status().message() << "\n";
    return kExitUsage;
  }
  nlohmann::ordered_json j;
  j["source"] = inv->source;
  j["driver_version"] = inv->driver_version;
  j["gpus"] = nlohmann::ordered_json::array();
  for (const probe::GpuInfo& g : inv->gpus) {
    nlohmann::ordered_json o;
    o["index"] = g.index;
    o["name"] = g.name;
    o["uuid"] = g.uuid;
    o["pci_bus_id"] = g.pci_bus_id;
    o["memory_total_mib"] = g.memory_total_bytes / (1024 * 1024);
    o["memory_used_mib"] = g.memory_used_bytes / (1024 * 1024);
    o["compute_capability"] = g.compute_major ? fmt::format("{}.{}", g.compute_major, g.compute_minor) : "";
    o["nvlinks_active"] = g.nvlinks_active;
    o["processes"] = nlohmann::ordered_json::array();
    for (const probe::GpuProcess& p : g.processes) {
      o["processes"].push_back({{"pid", p.pid}, {"used_mib", p.used_bytes / (1024 * 1024)}, {"name", p.name}});
    }
    j["gpus"].push_back(o);
  }
  if (opt.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} GPU(s) via {}{}\n", inv->gpus.size(), inv->source,
                             inv->driver_version.empty() ? "" : ", driver " + inv->driver_version);
    for (const probe::GpuInfo& g : inv->gpus) {
      std::cout << fmt::format("  {}  {:<28} {:>7.1f} / {:>7.1f} GiB used  {}  {} process(es){}\n", g.index, g.name,
                               preflight::ToGiB(g.memory_used_bytes), preflight::ToGiB(g.memory_total_bytes), g.uuid,
                               g.processes.size(),
                               g.nvlinks_active >= 0 ? fmt::format(", {} NVLinks up", g.nvlinks_active) : "");
    }
  }
  return kExitHealthy;
}

int RunPreflightCommand(const PreflightOptions& opt) {
  if (opt.list_gpus) return ListGpus(opt);
  if (!opt.calibration.empty()) {
    // The model configs of the points live in ../models beside the file
    // (tests/fixtures/calibration/ -> tests/fixtures/models/).
    std::string dir = opt.calibration.substr(0, opt.calibration.find_last_of('/') + 1);
    Result<preflight::CalibrationSummary> cal =
        preflight::RunCalibration(opt.calibration, (dir.empty() ? std::string("./") : dir) + "../models");
    if (!cal.ok()) {
      std::cerr << "faultline preflight: --calibration " << cal.status().message() << "\n";
      return kExitUsage;
    }
    std::cout << cal->Table();
    return kExitHealthy;
  }
  if (opt.command.empty()) {
    std::cerr << "faultline preflight: give the launch command after --, e.g.\n"
                 "  faultline preflight -- vllm serve Qwen/Qwen3-8B "
                 "--tensor-parallel-size 2\n";
    return kExitUsage;
  }
  preflight::PreflightRequest req;
  req.command = opt.command;
  req.env = ProcessEnv();
  if (opt.gpus > 0) req.plan_gpus = opt.gpus;
  if (!opt.gpu_memory.empty()) {
    Result<uint64_t> bytes = preflight::ParseByteSize(opt.gpu_memory);
    if (!bytes.ok()) {
      std::cerr << "faultline preflight: --gpu-memory " << bytes.status().message() << "\n";
      return kExitUsage;
    }
    req.plan_gpu_memory = *bytes;
  }
  req.plan_gpu_type = opt.gpu_type;
  req.model_config = opt.model_config;
  req.check_port = !opt.no_port_check;
  if (!opt.vllm_version.empty()) {
    std::optional<preflight::VllmVersion> v = preflight::VllmVersion::Parse(opt.vllm_version);
    if (!v) {
      std::cerr << "faultline preflight: --vllm-version " << opt.vllm_version << ": expected a release like 0.11.0\n";
      return kExitUsage;
    }
    req.vllm_version = *v;
  }
  std::unique_ptr<probe::GpuInventorySource> source;
  if (opt.gpu_source == "nvml") source = probe::NewNvmlSource();
  if (opt.gpu_source == "nvidia-smi") source = probe::NewNvidiaSmiSource();
  req.gpu_source = source.get();
  Result<preflight::PreflightReport> report = preflight::RunPreflight(req);
  if (!report.ok()) {
    std::cerr << "faultline preflight: " << report.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << (opt.json ? preflight::WriteJson(*report) : preflight::WriteText(*report));
  return report->blocking() ? kExitDiagnosed : kExitHealthy;
}

}  // namespace

void AddPreflightCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<PreflightOptions>();
  CLI::App* sub = app.add_subcommand("preflight",
                                     "check a vLLM / SGLang / torchrun launch against the GPUs "
                                     "and the model before it starts");
  sub->footer(
      HelpFooter("faultline preflight --gpus 8 --gpu-memory 80GiB -- "
                 "vllm serve meta-llama/Llama-3.1-70B -tp 8",
                 "0 no blocking problem, 1 a blocking problem found, 2 "
                 "usage or input error"));
  sub->add_flag("--json", opt->json, "print one faultline.preflight/1 JSON object");
  sub->add_option("--gpus", opt->gpus,
                  "plan: the node has N GPUs (as if NVML reported them; "
                  "CUDA_VISIBLE_DEVICES still filters)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--gpu-memory", opt->gpu_memory, "plan: memory of each GPU, e.g. 48GiB or 80GB");
  sub->add_option("--gpu-type", opt->gpu_type, "plan: GPU model from the catalog (rules/gpus.yaml), e.g. H100, L40S");
  sub->add_option("--model-config", opt->model_config,
                  "the model's config.json (a model.safetensors.index.json "
                  "beside it gives the weight bytes)");
  sub->add_option("--gpu-source", opt->gpu_source,
                  "where to read real GPUs: auto (NVML, then nvidia-smi), "
                  "nvml, nvidia-smi")
      ->check(CLI::IsMember({"auto", "nvml", "nvidia-smi"}));
  sub->add_option("--vllm-version", opt->vllm_version,
                  "the vLLM release the launch runs (e.g. 0.10.1): its memory "
                  "accounting; default: the newest known");
  sub->add_option("--calibration", opt->calibration,
                  "print the memory model against vLLM's own startup figures "
                  "for each point of FILE "
                  "(tests/fixtures/calibration/vllm_startup.yaml) and exit");
  sub->add_flag("--no-port-check", opt->no_port_check, "do not test whether the server port is free");
  sub->add_flag("--list-gpus", opt->list_gpus, "print the GPU inventory and exit");
  sub->add_option("command", opt->command, "the launch command, after --");
  sub->callback([opt, exit_code] { *exit_code = RunPreflightCommand(*opt); });
}

FAULTLINE_REGISTER_COMMAND(20, AddPreflightCommand);

}  // namespace faultline::cli
