// The live sampler's GPU source on a real machine: an adapter over the GPU
// inventory (probe/gpu_inventory.h: NVML through dlopen, nvidia-smi as
// fallback) that turns it into per-device and per-process usage, adds GPU
// utilisation (nvidia-smi --query-gpu=utilization.gpu, which the inventory
// does not carry), and rate-limits the reads: an inventory read initialises
// NVML or runs nvidia-smi, far too costly for every 1 s sample.
#ifndef FAULTLINE_PROBE_LIVE_GPU_INVENTORY_H_
#define FAULTLINE_PROBE_LIVE_GPU_INVENTORY_H_

#include <memory>

#include "probe/gpu_inventory.h"
#include "probe/live_clock.h"
#include "probe/live_gpu.h"

namespace faultline::probe {

class InventoryGpuSource : public GpuUsageSource {
 public:
  // utilization_smi: the nvidia-smi to ask for utilisation, "" for none.
  InventoryGpuSource(std::unique_ptr<GpuInventorySource> inventory, std::string name, Clock* clock,
                     double min_interval_seconds, std::string utilization_smi);
  GpuUsage Sample() override;

 private:
  std::unique_ptr<GpuInventorySource> inventory_;
  std::string name_;
  Clock* clock_;
  double min_interval_;
  std::string smi_;
  double last_ = -1e18;
  GpuUsage cached_;
};

// NVML if it loads, else nvidia-smi, else a NoGpuSource saying why.
std::unique_ptr<GpuUsageSource> NewLocalGpuUsageSource(Clock* clock, double min_interval_seconds = 5.0);

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_GPU_INVENTORY_H_
