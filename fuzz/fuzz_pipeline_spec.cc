// A pipeline file (run -f) parsed and validated.
#include <cstddef>
#include <cstdint>
#include <string>

#include "supervise/pipeline_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)faultline::supervise::ParsePipeline(text, "fuzz.yaml");
  return 0;
}
