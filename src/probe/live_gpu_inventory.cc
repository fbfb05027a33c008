#include "probe/live_gpu_inventory.h"

#include <fmt/format.h>
#include <stdio.h>

#include <cstdlib>
#include <map>

#include "probe/gpu_smi.h"

namespace faultline::probe {
namespace {

// index -> utilisation percent, from nvidia-smi; empty when unavailable.
std::map<int, int> ReadUtilization(const std::string& smi) {
  std::map<int, int> out;
  if (smi.empty()) return out;
  FILE* p = popen((smi + " --query-gpu=index,utilization.gpu --format=csv,noheader,nounits 2>/dev/null").c_str(), "r");
  if (p == nullptr) return out;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) text.append(buf, n);
  if (pclose(p) != 0) return out;
  auto table = ParseSmiCsv(text, {"index", "utilization.gpu"});
  if (!table.ok()) return out;
  for (size_t r = 0; r < table->rows.size(); ++r) {
    std::string idx = table->Cell(r, "index"), util = table->Cell(r, "utilization.gpu");
    char* end = nullptr;
    long u = std::strtol(util.c_str(), &end, 10);
    if (!idx.empty() && end != util.c_str()) out[std::atoi(idx.c_str())] = static_cast<int>(u);
  }
  return out;
}

}  // namespace

InventoryGpuSource::InventoryGpuSource(std::unique_ptr<GpuInventorySource> inventory, std::string name, Clock* clock,
                                       double min_interval_seconds, std::string utilization_smi)
    : inventory_(std::move(inventory)),
      name_(std::move(name)),
      clock_(clock),
      min_interval_(min_interval_seconds),
      smi_(std::move(utilization_smi)) {}

GpuUsage InventoryGpuSource::Sample() {
  double now = clock_->MonotonicSeconds();
  if (now - last_ < min_interval_) return cached_;
  last_ = now;
  GpuUsage u;
  u.source = name_;
  auto inv = inventory_->Read();
  if (!inv.ok()) {
    u.note = inv.status().message();
    cached_ = u;
    return u;
  }
  u.available = true;
  std::map<int, int> util = ReadUtilization(smi_);
  for (const auto& g : inv->gpus) {
    GpuDeviceUsage d;
    d.index = g.index;
    d.memory_used_bytes = static_cast<int64_t>(g.memory_used_bytes);
    d.memory_total_bytes = static_cast<int64_t>(g.memory_total_bytes);
    auto it = util.find(g.index);
    d.utilization_percent = it == util.end() ? -1 : it->second;
    d.uuid = g.uuid;
    d.name = g.name;
    u.devices.push_back(d);
    for (const auto& p : g.processes) {
      u.processes.push_back({p.pid, g.index, p.used_bytes > 0 ? static_cast<int64_t>(p.used_bytes) : -1});
    }
  }
  cached_ = u;
  return u;
}

std::unique_ptr<GpuUsageSource> NewLocalGpuUsageSource(Clock* clock, double min_interval_seconds) {
  auto nvml = NewNvmlSource();
  auto nvml_probe = nvml->Read();
  bool smi_works = ReadUtilization("nvidia-smi").size() > 0;
  if (nvml_probe.ok()) {
    return std::make_unique<InventoryGpuSource>(std::move(nvml), "nvml", clock, min_interval_seconds,
                                                smi_works ? "nvidia-smi" : "");
  }
  auto smi = NewNvidiaSmiSource();
  auto smi_probe = smi->Read();
  if (smi_probe.ok()) {
    return std::make_unique<InventoryGpuSource>(std::move(smi), "nvidia-smi", clock, min_interval_seconds,
                                                "nvidia-smi");
  }
  return std::make_unique<NoGpuSource>(
      fmt::format("no GPU data: {}; {}", nvml_probe.status().message(), smi_probe.status().message()));
}

}  // namespace faultline::probe
