// GpuUsageSource: how the live sampler learns GPU memory and utilisation per
// device and per process. The sampler only sees this interface, so it runs
// (and is tested) without a GPU: NoGpuSource says "no data" and the stall
// classifier then says which classes it cannot tell apart. The NVML /
// nvidia-smi implementation is an adapter over the GPU inventory
// (src/probe/gpu_*).
#ifndef FAULTLINE_PROBE_LIVE_GPU_H_
#define FAULTLINE_PROBE_LIVE_GPU_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace faultline::probe {

struct GpuDeviceUsage {
  int index = 0;
  int64_t memory_used_bytes = -1;  // -1 unknown
  int64_t memory_total_bytes = -1;
  int utilization_percent = -1;  // -1 unknown
  std::string uuid;              // "GPU-6f3c...", "" unknown
  std::string name;              // "NVIDIA H200", "" unknown
};

struct GpuProcessUsage {
  int64_t pid = 0;  // as the driver reports it (the process's own pid outside containers)
  int gpu_index = 0;
  int64_t memory_used_bytes = -1;
};

struct GpuUsage {
  bool available = false;
  std::string source;  // "nvml", "nvidia-smi", "fake", "none"
  std::string note;    // why not available
  std::vector<GpuDeviceUsage> devices;
  std::vector<GpuProcessUsage> processes;
};

class GpuUsageSource {
 public:
  virtual ~GpuUsageSource() = default;
  virtual GpuUsage Sample() = 0;
};

// Always "not available", with the reason given.
class NoGpuSource : public GpuUsageSource {
 public:
  explicit NoGpuSource(std::string note = "no GPU data source") : note_(std::move(note)) {}
  GpuUsage Sample() override {
    GpuUsage u;
    u.source = "none";
    u.note = note_;
    return u;
  }

 private:
  std::string note_;
};

// Replays given samples in order (the last one repeats): for tests and for
// recordings made on a GPU machine.
class FakeGpuSource : public GpuUsageSource {
 public:
  explicit FakeGpuSource(std::vector<GpuUsage> samples) : samples_(std::move(samples)) {}
  GpuUsage Sample() override {
    if (samples_.empty()) return NoGpuSource("empty recording").Sample();
    GpuUsage u = samples_[std::min(next_, samples_.size() - 1)];
    ++next_;
    return u;
  }

 private:
  std::vector<GpuUsage> samples_;
  size_t next_ = 0;
};

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_LIVE_GPU_H_
