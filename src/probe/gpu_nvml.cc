// NVML inventory source. libnvidia-ml.so.1 is opened with dlopen at run
// time, so faultline builds and runs on machines without the NVIDIA driver;
// the few entry points used are declared here (ABI from nvml.h, stable since
// the _v2/_v3 names were introduced).
#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <fstream>

#include "probe/gpu_inventory.h"

namespace faultline::probe {
namespace {

// --- The slice of nvml.h that we use. ---
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlMemory_v2_t {  // nvmlDeviceGetMemoryInfo_v2: "used" excludes reserved memory
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
constexpr unsigned int kNvmlMemoryV2 = static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);
struct nvmlPciInfo_t {  // nvmlDeviceGetPciInfo_v3 layout
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_v2_t {  // used by the _v2 and _v3 process queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;
constexpr unsigned int kNvmlNvlinkMaxLinks = 18;

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using GetCountFn = nvmlReturn_t (*)(unsigned int*);
using GetHandleFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using GetStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using GetMemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using GetMemoryV2Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using GetPciFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using GetCapabilityFn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using GetProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
using GetNvLinkStateFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int*);
using SystemStringFn = nvmlReturn_t (*)(char*, unsigned int);

class NvmlLibrary {
 public:
  ~NvmlLibrary() {
    if (shutdown_ && initialized_) shutdown_();
    if (handle_) dlclose(handle_);
  }

  Status Open() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* err = dlerror();
      return Status::NotFound(fmt::format("cannot load libnvidia-ml.so.1: {}", err ? err : "unknown"));
    }
    init_ = Sym<InitFn>("nvmlInit_v2");
    shutdown_ = Sym<ShutdownFn>("nvmlShutdown");
    error_string_ = Sym<ErrorStringFn>("nvmlErrorString");
    get_count_ = Sym<GetCountFn>("nvmlDeviceGetCount_v2");
    get_handle_ = Sym<GetHandleFn>("nvmlDeviceGetHandleByIndex_v2");
    get_name_ = Sym<GetStringFn>("nvmlDeviceGetName");
    get_uuid_ = Sym<GetStringFn>("nvmlDeviceGetUUID");
    get_memory_ = Sym<GetMemoryFn>("nvmlDeviceGetMemoryInfo");
    get_memory_v2_ = Sym<GetMemoryV2Fn>("nvmlDeviceGetMemoryInfo_v2");
    get_pci_ = Sym<GetPciFn>("nvmlDeviceGetPciInfo_v3");
    get_capability_ = Sym<GetCapabilityFn>("nvmlDeviceGetCudaComputeCapability");
    get_nvlink_state_ = Sym<GetNvLinkStateFn>("nvmlDeviceGetNvLinkState");
    driver_version_ = Sym<SystemStringFn>("nvmlSystemGetDriverVersion");
    processes_v3_ = Sym<GetProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
    processes_v2_ = Sym<GetProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v2");
    processes_v1_ = Sym<GetProcessesFn>("nvmlDeviceGetComputeRunningProcesses");
    if (!init_ || !get_count_ || !get_handle_ || !get_name_ || !get_memory_) {
      return Status::NotFound("libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetCount_v2/...");
    }
    nvmlReturn_t rc = init_();
    if (rc != kNvmlSuccess) return Status::IoError(fmt::format("nvmlInit_v2: {}", Error(rc)));
    initialized_ = true;
    return Status::Ok();
  }

  Result<GpuInventory> Read() {
    GpuInventory inv;
    inv.source = "nvml";
    if (driver_version_) {
      std::array<char, 96> buf{};
      if (driver_version_(buf.data(), buf.size()) == kNvmlSuccess) inv.driver_version = buf.data();
    }
    unsigned int count = 0;
    nvmlReturn_t rc = get_count_(&count);
    if (rc != kNvmlSuccess) return Status::IoError(fmt::format("nvmlDeviceGetCount_v2: {}", Error(rc)));
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      rc = get_handle_(i, &dev);
      if (rc != kNvmlSuccess) {
        return Status::IoError(fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", i, Error(rc)));
      }
      inv.gpus.push_back(ReadDevice(static_cast<int>(i), dev));
    }
    return inv;
  }

 private:
  template <typename Fn>
  Fn Sym(const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }
  std::string Error(nvmlReturn_t rc) const {
    const char* s = error_string_ ? error_string_(rc) : nullptr;
    return s ? fmt::format("{} ({})", s, rc) : fmt::format("NVML error {}", rc);
  }

  GpuInfo ReadDevice(int index, nvmlDevice_t dev) {
    GpuInfo g;
    g.index = index;
    std::array<char, 96> name{};
    if (get_name_(dev, name.data(), name.size()) == kNvmlSuccess) g.name = name.data();
    std::array<char, 96> uuid{};
    if (get_uuid_ && get_uuid_(dev, uuid.data(), uuid.size()) == kNvmlSuccess) g.uuid = uuid.data();
    nvmlMemory_v2_t mem2{};
    mem2.version = kNvmlMemoryV2;
    nvmlMemory_t mem{};
    if (get_memory_v2_ && get_memory_v2_(dev, &mem2) == kNvmlSuccess) {
      g.memory_total_bytes = mem2.total;
      g.memory_used_bytes = mem2.used;
      g.memory_reserved_bytes = mem2.reserved;
    } else if (get_memory_(dev, &mem) == kNvmlSuccess) {
      g.memory_total_bytes = mem.total;
      g.memory_used_bytes = mem.used;  // v1: includes the reserved memory
    }
    nvmlPciInfo_t pci{};
    if (get_pci_ && get_pci_(dev, &pci) == kNvmlSuccess) g.pci_bus_id = pci.busId;
    if (get_capability_) get_capability_(dev, &g.compute_major, &g.compute_minor);
    if (get_nvlink_state_) {
      int active = 0;
      bool supported = false;
      for (unsigned int link = 0; link < kNvmlNvlinkMaxLinks; ++link) {
        int state = 0;
        if (get_nvlink_state_(dev, link, &state) != kNvmlSuccess) continue;
        supported = true;
        if (state) ++active;
      }
      g.nvlinks_active = supported ? active : -1;
    }
    g.processes = ReadProcesses(dev);
    return g;
  }

  std::vector<GpuProcess> ReadProcesses(nvmlDevice_t dev) {
    std::vector<GpuProcess> out;
    GetProcessesFn fn = processes_v3_ ? processes_v3_ : processes_v2_;
    if (fn) {
      std::vector<nvmlProcessInfo_v2_t> infos(64);
      unsigned int n = infos.size();
      nvmlReturn_t rc = fn(dev, &n, infos.data());
      if (rc == kNvmlErrorInsufficientSize) {
        infos.resize(n + 16);
        n = infos.size();
        rc = fn(dev, &n, infos.data());
      }
      if (rc == kNvmlSuccess) {
        for (unsigned int i = 0; i < n; ++i) out.push_back(ToProcess(infos[i].pid, infos[i].usedGpuMemory));
      }
      return out;
    }
    if (processes_v1_) {
      std::vector<nvmlProcessInfo_v1_t> infos(64);
      unsigned int n = infos.size();
      if (processes_v1_(dev, &n, infos.data()) == kNvmlSuccess) {
        for (unsigned int i = 0; i < n; ++i) out.push_back(ToProcess(infos[i].pid, infos[i].usedGpuMemory));
      }
    }
    return out;
  }

  static GpuProcess ToProcess(unsigned int pid, unsigned long long used) {
    GpuProcess p;
    p.pid = pid;
    p.used_bytes = used == kNvmlValueNotAvailable ? 0 : used;
    // NVML gives only the pid; /proc names it when the process is ours to see.
    std::ifstream comm(fmt::format("/proc/{}/comm", pid));
    std::getline(comm, p.name);
    return p;
  }

  void* handle_ = nullptr;
  bool initialized_ = false;
  InitFn init_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  GetCountFn get_count_ = nullptr;
  GetHandleFn get_handle_ = nullptr;
  GetStringFn get_name_ = nullptr;
  GetStringFn get_uuid_ = nullptr;
  GetMemoryFn get_memory_ = nullptr;
  GetMemoryV2Fn get_memory_v2_ = nullptr;
  GetPciFn get_pci_ = nullptr;
  GetCapabilityFn get_capability_ = nullptr;
  GetNvLinkStateFn get_nvlink_state_ = nullptr;
  SystemStringFn driver_version_ = nullptr;
  GetProcessesFn processes_v3_ = nullptr;
  GetProcessesFn processes_v2_ = nullptr;
  GetProcessesFn processes_v1_ = nullptr;
};

class NvmlSource : public GpuInventorySource {
 public:
  Result<GpuInventory> Read() override {
    NvmlLibrary lib;
    Status st = lib.Open();
    if (!st.ok()) return st;
    return lib.Read();
  }
};

}  // namespace

std::unique_ptr<GpuInventorySource> NewNvmlSource() { return std::make_unique<NvmlSource>(); }

}  // namespace faultline::probe
