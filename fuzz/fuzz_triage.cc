// Whole triage over a byte buffer: plain, gzip or zstd (detected from the
// bytes, as for a file), through the input layer, scanner, ranker and report.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnosis/triage.h"
#include "report/printers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/faultline-fuzz-triage." + std::to_string(getpid()) + ".log";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  faultline::diagnosis::TriageOptions options;
  options.inputs = {path};
  options.templates = size % 2 == 0;  // both with and without the template miner
  auto report = faultline::diagnosis::Triage(options);
  if (report.ok()) (void)faultline::report::DumpJson(faultline::report::ToJson(*report));
  return 0;
}
