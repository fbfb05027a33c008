// /metrics on any records: each line of the input is applied to the metrics
// model as a faultline.live/1 record (what a malformed live.jsonl or
// diagnosis.json can give), then the exposition is rendered.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "web/metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  faultline::metrics::Identity id;
  id.run_id = "fuzz";
  id.phases = {"process-start", "training"};
  faultline::metrics::RunMetrics m(id);
  while (!text.empty()) {
    size_t nl = text.find('\n');
    auto record = nlohmann::json::parse(text.substr(0, nl), nullptr, false);
    if (!record.is_discarded()) m.Apply(record);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  (void)m.Render();
  return 0;
}
