// Run-directory records (live.jsonl, as a dashboard reads them, fed in two
// pieces to exercise the partial-line path) and /metrics over the result.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "web/metrics.h"
#include "web/run_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const fs::path dir = fs::temp_directory_path() / ("faultline-fuzz-run." + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t half = text.size() / 2;
  std::ofstream(dir / "live.jsonl", std::ios::binary) << text.substr(0, half);
  faultline::web::RunDir run(dir.string());
  run.Refresh();
  std::ofstream(dir / "live.jsonl", std::ios::binary | std::ios::app) << text.substr(half);
  run.Refresh();
  nlohmann::json j = run.RunJson(0);
  (void)run.SamplesJson();
  (void)run.metrics().Render();
  return 0;
}
