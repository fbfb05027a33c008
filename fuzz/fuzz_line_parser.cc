// The line parser (prefixes, timestamps, levels) on any bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/line_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= text.size()) {  // each line, as the scanner hands them
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    (void)faultline::parse::ParseLine(line);
    (void)faultline::parse::ParseProcessPrefixes(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return 0;
}
