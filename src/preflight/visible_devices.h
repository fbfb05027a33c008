// Which of the node's GPUs a CUDA program will see, in which order, given
// CUDA_VISIBLE_DEVICES (indices, GPU-<uuid> and unique UUID prefixes) and
// CUDA_DEVICE_ORDER, following the CUDA rules: entries are matched in order
// and the list stops at the first invalid entry ("only the devices whose index
// precedes the invalid index are visible"); a repeated entry hides every GPU
// (torch.cuda.device_count() == 0 with CUDA_VISIBLE_DEVICES=0,0, measured on
// the device machine).
#ifndef FAULTLINE_PREFLIGHT_VISIBLE_DEVICES_H_
#define FAULTLINE_PREFLIGHT_VISIBLE_DEVICES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/gpu_inventory.h"

namespace faultline::preflight {

struct VisibleDevices {
  std::vector<int> node_indices;       // visible GPUs as NVML indices, in CUDA order
  std::optional<std::string> setting;  // CUDA_VISIBLE_DEVICES as set, nullopt when unset
  std::vector<std::string> problems;   // "entry 3 ('5') names no GPU (the node has 4): ..."
  std::vector<std::string> notes;      // CUDA_DEVICE_ORDER / NVIDIA_VISIBLE_DEVICES remarks
  bool truncated = false;              // an invalid/repeated entry hid later entries

  // "CUDA_VISIBLE_DEVICES=0,1" or "all 8 GPUs (CUDA_VISIBLE_DEVICES unset)"
  std::string Describe(size_t node_gpu_count) const;
};

VisibleDevices ResolveVisibleDevices(const std::vector<probe::GpuInfo>& node_gpus,
                                     const std::map<std::string, std::string>& env);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_VISIBLE_DEVICES_H_
