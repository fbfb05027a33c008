// GPU inventory: what GPUs a node has, how much memory each holds and who
// is already using it, behind one small interface (GpuInventorySource) so
// that the real sources (NVML through dlopen, nvidia-smi output) and a fake
// fed from recordings are interchangeable.
//
// Indices are NVML/nvidia-smi indices (PCI bus order), not CUDA ordinals:
// CUDA_VISIBLE_DEVICES filtering is applied later (preflight/visible_devices).
// Thread-safety: sources are not thread-safe; use one per thread.
#ifndef FAULTLINE_PROBE_GPU_INVENTORY_H_
#define FAULTLINE_PROBE_GPU_INVENTORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::probe {

// A process holding memory on a GPU.
struct GpuProcess {
  int64_t pid = 0;
  uint64_t used_bytes = 0;  // 0 when the driver does not say
  std::string name;         // empty when unknown (NVML gives only the pid)
};

struct GpuInfo {
  int index = 0;           // NVML index
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-6f3c..."
  std::string pci_bus_id;  // "00000000:18:00.0"
  uint64_t memory_total_bytes = 0;
  uint64_t memory_used_bytes = 0;      // as nvidia-smi shows it
  uint64_t memory_reserved_bytes = 0;  // driver-reserved (NVML v2); not free for CUDA either
  int compute_major = 0;               // 0 when unknown
  int compute_minor = 0;
  int nvlinks_active = -1;  // -1 when unknown / not supported
  std::vector<GpuProcess> processes;
};

struct GpuInventory {
  std::string source;          // "nvml", "nvidia-smi", "plan", "fake:<file>"
  std::string driver_version;  // empty when unknown
  std::vector<GpuInfo> gpus;
};

class GpuInventorySource {
 public:
  virtual ~GpuInventorySource() = default;
  // Reads the inventory now. kNotFound when the source is not available on
  // this machine (no libnvidia-ml, no nvidia-smi), kIoError when it failed.
  virtual Result<GpuInventory> Read() = 0;
};

std::unique_ptr<GpuInventorySource> NewNvmlSource();
// `program` is the nvidia-smi to run (a path or a name looked up in PATH).
std::unique_ptr<GpuInventorySource> NewNvidiaSmiSource(std::string program = "nvidia-smi");

// NVML first, nvidia-smi when NVML cannot be loaded or fails. The returned
// Status explains both failures when neither works.
Result<GpuInventory> ReadLocalGpus();

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_GPU_INVENTORY_H_
