// /metrics on any JSON: the run object before the first newline, the
// diagnosis after it (what a malformed live.jsonl or diagnosis.json can give).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "web/metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  auto run = nlohmann::json::parse(text.substr(0, nl), nullptr, false);
  auto diag = nl == std::string_view::npos ? nlohmann::json(nullptr)
                                           : nlohmann::json::parse(text.substr(nl + 1), nullptr, false);
  if (run.is_discarded()) return 0;
  if (diag.is_discarded()) diag = nullptr;
  (void)faultline::web::PrometheusText(run, diag);
  return 0;
}
