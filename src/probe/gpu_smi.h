// Parsers for nvidia-smi's CSV query output, the fallback GPU inventory when
// NVML cannot be loaded. Kept apart from the process spawning so that tests
// run them on outputs recorded from real GPUs (tests/fixtures/nvidia-smi/).
//
// Accepted forms: `--format=csv` (first line is the header, values may carry
// units such as "81559 MiB") and `--format=csv,noheader[,nounits]` when the
// caller supplies the column names that were queried.
#ifndef FAULTLINE_PROBE_GPU_SMI_H_
#define FAULTLINE_PROBE_GPU_SMI_H_

#include <string>
#include <string_view>
#include <vector>

#include "probe/gpu_inventory.h"
#include "util/status.h"

namespace faultline::probe {

// One parsed CSV table: column keys as nvidia-smi names them in the query
// ("memory.total"), units stripped from the header, cells trimmed.
struct SmiTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  // Returns the cell or "" when the column is absent.
  std::string Cell(size_t row, std::string_view column) const;
};

// `columns` empty: the first non-empty line is the header.
Result<SmiTable> ParseSmiCsv(std::string_view text, const std::vector<std::string>& columns = {});

// Parses "81559 MiB", "81559" (MiB implied), "[N/A]" -> 0. Returns bytes.
uint64_t ParseSmiMemory(std::string_view cell);

// Builds GPUs from a --query-gpu table (needs at least index and name;
// memory.total/memory.used/uuid/pci.bus_id/compute_cap when present) and
// attaches the processes of a --query-compute-apps table (gpu_uuid, pid,
// used_memory[, process_name]) by UUID. `apps` may be empty.
Result<GpuInventory> InventoryFromSmi(const SmiTable& gpus, const SmiTable& apps);

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_GPU_SMI_H_
