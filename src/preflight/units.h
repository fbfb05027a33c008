// Byte sizes and token counts as people write them on command lines:
// "48GiB", "80GB", "512MiB", "128k" (vLLM's human_readable_int).
#ifndef FAULTLINE_PREFLIGHT_UNITS_H_
#define FAULTLINE_PREFLIGHT_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace faultline::preflight {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// "48GiB", "48G", "48gb" (decimal GB), "49152MiB", "51539607552" (bytes).
// A bare number is bytes; "G"/"GiB" binary, "GB" decimal.
Result<uint64_t> ParseByteSize(std::string_view text);

// vLLM's human_readable_int (vllm/engine/arg_utils.py): "128k" = 128000,
// "128K" = 131072, "1m" = 1000000, "1M" = 1048576, plain integers as is.
Result<int64_t> ParseHumanInt(std::string_view text);

double ToGiB(uint64_t bytes);
// "26.9" — one decimal, for messages.
std::string GiB1(double gib);
// "1,234,567"
std::string WithCommas(int64_t n);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_UNITS_H_
