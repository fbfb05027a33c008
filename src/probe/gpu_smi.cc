// nvidia-smi fallback: runs two CSV queries and parses them (gpu_smi.h).
#include "probe/gpu_smi.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace faultline::probe {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string> SplitCsv(std::string_view line, size_t max_fields) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    // nvidia-smi does not quote: a process name with commas would spill into
    // extra fields, so the last expected field takes the rest of the line.
    if (comma == std::string_view::npos || (max_fields && out.size() + 1 == max_fields)) {
      out.emplace_back(Trim(line.substr(start)));
      break;
    }
    out.emplace_back(Trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

// "memory.total [MiB]" -> "memory.total"
std::string ColumnKey(std::string_view header) {
  header = Trim(header);
  size_t bracket = header.find(" [");
  if (bracket != std::string_view::npos) header = header.substr(0, bracket);
  return std::string(header);
}

bool IsUnavailable(std::string_view cell) { return cell.empty() || cell.front() == '[' || cell == "N/A"; }

}  // namespace

std::string SmiTable::Cell(size_t row, std::string_view column) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == column) return c < rows[row].size() ? rows[row][c] : "";
  }
  return "";
}

Result<SmiTable> ParseSmiCsv(std::string_view text, const std::vector<std::string>& columns) {
  SmiTable table;
  table.columns = columns;
  bool need_header = columns.empty();
  size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    line = Trim(line);
    if (line.empty()) continue;
    if (need_header) {
      for (const std::string& h : SplitCsv(line, 0)) table.columns.push_back(ColumnKey(h));
      need_header = false;
      continue;
    }
    std::vector<std::string> cells = SplitCsv(line, table.columns.size());
    if (cells.size() != table.columns.size()) {
      return Status::DataLoss(fmt::format("nvidia-smi output line {}: {} fields, expected {} ({})", line_no,
                                          cells.size(), table.columns.size(), std::string(line)));
    }
    table.rows.push_back(std::move(cells));
  }
  if (table.columns.empty()) return Status::DataLoss("nvidia-smi output is empty");
  return table;
}

uint64_t ParseSmiMemory(std::string_view cell) {
  cell = Trim(cell);
  if (IsUnavailable(cell)) return 0;
  char* end = nullptr;
  std::string s(cell);
  double v = std::strtod(s.c_str(), &end);
  std::string_view unit = Trim(std::string_view(end));
  double scale = 1024.0 * 1024.0;  // nounits output is MiB
  if (unit == "GiB") scale = 1024.0 * 1024.0 * 1024.0;
  if (unit == "KiB") scale = 1024.0;
  return static_cast<uint64_t>(v * scale);
}

Result<GpuInventory> InventoryFromSmi(const SmiTable& gpus, const SmiTable& apps) {
  GpuInventory inv;
  inv.source = "nvidia-smi";
  for (size_t r = 0; r < gpus.rows.size(); ++r) {
    GpuInfo g;
    std::string index = gpus.Cell(r, "index");
    if (index.empty()) return Status::DataLoss("nvidia-smi --query-gpu output has no index column");
    g.index = std::atoi(index.c_str());
    g.name = gpus.Cell(r, "name");
    g.uuid = gpus.Cell(r, "uuid");
    g.pci_bus_id = gpus.Cell(r, "pci.bus_id");
    g.memory_total_bytes = ParseSmiMemory(gpus.Cell(r, "memory.total"));
    g.memory_used_bytes = ParseSmiMemory(gpus.Cell(r, "memory.used"));
    g.memory_reserved_bytes = ParseSmiMemory(gpus.Cell(r, "memory.reserved"));
    std::string cap = gpus.Cell(r, "compute_cap");
    if (!IsUnavailable(cap)) std::sscanf(cap.c_str(), "%d.%d", &g.compute_major, &g.compute_minor);
    if (inv.driver_version.empty()) {
      std::string drv = gpus.Cell(r, "driver_version");
      if (!IsUnavailable(drv)) inv.driver_version = drv;
    }
    inv.gpus.push_back(std::move(g));
  }
  for (size_t r = 0; r < apps.rows.size(); ++r) {
    std::string uuid = apps.Cell(r, "gpu_uuid");
    for (GpuInfo& g : inv.gpus) {
      if (g.uuid != uuid) continue;
      GpuProcess p;
      p.pid = std::atoll(apps.Cell(r, "pid").c_str());
      // The query field is used_memory; the CSV header calls it used_gpu_memory.
      std::string used = apps.Cell(r, "used_memory");
      if (used.empty()) used = apps.Cell(r, "used_gpu_memory");
      p.used_bytes = ParseSmiMemory(used);
      p.name = apps.Cell(r, "process_name");
      g.processes.push_back(std::move(p));
    }
  }
  return inv;
}

namespace {

Result<std::string> RunCapture(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return Status::IoError(fmt::format("cannot run {}", command));
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int rc = pclose(pipe);
  if (rc == -1 || !WIFEXITED(rc)) return Status::IoError(fmt::format("{}: did not exit normally", command));
  if (WEXITSTATUS(rc) == 127) return Status::NotFound(fmt::format("{}: command not found", command));
  if (WEXITSTATUS(rc) != 0) {
    return Status::IoError(fmt::format("{} exited {}: {}", command, WEXITSTATUS(rc), out.substr(0, 200)));
  }
  return out;
}

class NvidiaSmiSource : public GpuInventorySource {
 public:
  explicit NvidiaSmiSource(std::string program) : program_(std::move(program)) {}

  Result<GpuInventory> Read() override {
    // memory.reserved (driver 510+) is not free for CUDA either; older
    // drivers reject the field, so ask again without it.
    // compute_cap likewise (driver 510+).
    const std::string base = "index,uuid,name,pci.bus_id,memory.total,memory.used,driver_version";
    Result<std::string> gpu_text = Status::NotFound("not run");
    for (const char* extra : {",compute_cap,memory.reserved", ",compute_cap", ""}) {
      gpu_text = RunCapture(program_ + " --query-gpu=" + base + extra + " --format=csv 2>&1");
      if (gpu_text.ok() || gpu_text.status().code() == StatusCode::kNotFound) break;
    }
    if (!gpu_text.ok()) return gpu_text.status();
    Result<SmiTable> gpus = ParseSmiCsv(*gpu_text);
    if (!gpus.ok()) return gpus.status();
    SmiTable apps_table;
    Result<std::string> apps_text =
        RunCapture(program_ + " --query-compute-apps=gpu_uuid,pid,used_memory,process_name --format=csv 2>&1");
    if (apps_text.ok()) {
      Result<SmiTable> apps = ParseSmiCsv(*apps_text);
      if (apps.ok()) apps_table = *apps;
    }
    return InventoryFromSmi(*gpus, apps_table);
  }

 private:
  std::string program_;
};

}  // namespace

std::unique_ptr<GpuInventorySource> NewNvidiaSmiSource(std::string program) {
  return std::make_unique<NvidiaSmiSource>(std::move(program));
}

Result<GpuInventory> ReadLocalGpus() {
  Result<GpuInventory> nvml = NewNvmlSource()->Read();
  if (nvml.ok()) return nvml;
  Result<GpuInventory> smi = NewNvidiaSmiSource()->Read();
  if (smi.ok()) return smi;
  return Status::NotFound(fmt::format("no GPU inventory: {}; {}", nvml.status().message(), smi.status().message()));
}

}  // namespace faultline::probe
