// Inventory sources for tests and planning: a fixed inventory, and one that
// replays nvidia-smi CSV output recorded on a real machine.
#ifndef FAULTLINE_PROBE_GPU_FAKE_H_
#define FAULTLINE_PROBE_GPU_FAKE_H_

#include <memory>
#include <string>

#include "probe/gpu_inventory.h"

namespace faultline::probe {

std::unique_ptr<GpuInventorySource> NewFixedSource(GpuInventory inventory);

// `gpu_csv`: output of `nvidia-smi --query-gpu=... --format=csv` (with
// header). `apps_csv`: output of `--query-compute-apps=... --format=csv`
// (with header), or "" for none.
std::unique_ptr<GpuInventorySource> NewRecordedSmiSource(std::string gpu_csv, std::string apps_csv);

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_GPU_FAKE_H_
