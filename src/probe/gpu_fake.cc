#include "probe/gpu_fake.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "probe/gpu_smi.h"

namespace faultline::probe {
namespace {

class FixedSource : public GpuInventorySource {
 public:
  explicit FixedSource(GpuInventory inv) : inv_(std::move(inv)) {}
  Result<GpuInventory> Read() override { return inv_; }

 private:
  GpuInventory inv_;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class RecordedSmiSource : public GpuInventorySource {
 public:
  RecordedSmiSource(std::string gpu_csv, std::string apps_csv)
      : gpu_csv_(std::move(gpu_csv)), apps_csv_(std::move(apps_csv)) {}

  Result<GpuInventory> Read() override {
    Result<std::string> gpu_text = ReadFile(gpu_csv_);
    if (!gpu_text.ok()) return gpu_text.status();
    Result<SmiTable> gpus = ParseSmiCsv(*gpu_text);
    if (!gpus.ok()) return gpus.status();
    SmiTable apps;
    if (!apps_csv_.empty()) {
      Result<std::string> apps_text = ReadFile(apps_csv_);
      if (!apps_text.ok()) return apps_text.status();
      Result<SmiTable> parsed = ParseSmiCsv(*apps_text);
      if (!parsed.ok()) return parsed.status();
      apps = *parsed;
    }
    Result<GpuInventory> inv = InventoryFromSmi(*gpus, apps);
    if (inv.ok()) inv->source = "recorded:" + gpu_csv_;
    return inv;
  }

 private:
  std::string gpu_csv_;
  std::string apps_csv_;
};

}  // namespace

std::unique_ptr<GpuInventorySource> NewFixedSource(GpuInventory inventory) {
  return std::make_unique<FixedSource>(std::move(inventory));
}

std::unique_ptr<GpuInventorySource> NewRecordedSmiSource(std::string gpu_csv, std::string apps_csv) {
  return std::make_unique<RecordedSmiSource>(std::move(gpu_csv), std::move(apps_csv));
}

}  // namespace faultline::probe
