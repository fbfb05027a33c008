// The redaction choke point on any text; JSON records keep parsing after it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "rules/redactor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)faultline::rules::Secrets().Text(text);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_discarded()) {
    std::string line = faultline::rules::Secrets().JsonLine(j);
    if (nlohmann::json::parse(line, nullptr, false).is_discarded()) std::abort();  // redaction broke the JSON
  }
  return 0;
}
