// Catalog of common data-centre and workstation GPUs (rules/gpus.yaml), for
// planning a launch on a machine you are not on: --gpu-type H100.
#ifndef FAULTLINE_PREFLIGHT_GPU_CATALOG_H_
#define FAULTLINE_PREFLIGHT_GPU_CATALOG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace faultline::preflight {

struct CatalogGpu {
  std::string name;
  std::vector<std::string> aliases;
  uint64_t memory_mib = 0;
  uint64_t cuda_memory_mib = 0;  // what cudaMemGetInfo reports as the total (0: unknown)
  std::string compute;           // "9.0"
  std::string interconnect;      // "nvlink" / "pcie"
};

class GpuCatalog {
 public:
  static Result<GpuCatalog> Load(std::string_view yaml_text);
  static const GpuCatalog& Builtin();

  // Case-insensitive; spaces, dashes and underscores ignored; a leading
  // "nvidia" is optional. nullptr when unknown.
  const CatalogGpu* Find(std::string_view name) const;
  const std::vector<CatalogGpu>& gpus() const { return gpus_; }

 private:
  std::vector<CatalogGpu> gpus_;
};

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_GPU_CATALOG_H_
