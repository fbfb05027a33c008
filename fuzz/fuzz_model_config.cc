// A model's config.json and model.safetensors.index.json as preflight reads them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "preflight/model_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)faultline::preflight::ParseModelConfig(text, "config.json");
  (void)faultline::preflight::ParseSafetensorsIndex(text, "model.safetensors.index.json");
  return 0;
}
