#include "preflight/units.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace faultline::preflight {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<uint64_t> ParseByteSize(std::string_view text) {
  std::string s(text);
  if (s.empty()) return Status::InvalidArgument("empty size");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v < 0 || !std::isfinite(v)) {
    return Status::InvalidArgument(fmt::format("'{}' is not a size (try 48GiB)", s));
  }
  std::string unit = Lower(std::string_view(end));
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  double scale = 0;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "kib" || unit == "ki")
    scale = 1024.0;
  else if (unit == "m" || unit == "mib" || unit == "mi")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gib" || unit == "gi")
    scale = kGiB;
  else if (unit == "t" || unit == "tib" || unit == "ti")
    scale = kGiB * 1024;
  else if (unit == "kb")
    scale = 1e3;
  else if (unit == "mb")
    scale = 1e6;
  else if (unit == "gb")
    scale = 1e9;
  else if (unit == "tb")
    scale = 1e12;
  else
    return Status::InvalidArgument(fmt::format("'{}': unknown unit '{}' (use GiB, GB, MiB)", s, unit));
  return static_cast<uint64_t>(std::llround(v * scale));
}

Result<int64_t> ParseHumanInt(std::string_view text) {
  std::string s(text);
  if (s.empty()) return Status::InvalidArgument("empty number");
  char suffix = s.back();
  int64_t scale = 1;
  switch (suffix) {
    case 'k':
      scale = 1000;
      break;
    case 'm':
      scale = 1000 * 1000;
      break;
    case 'g':
      scale = 1000LL * 1000 * 1000;
      break;
    case 'K':
      scale = 1024;
      break;
    case 'M':
      scale = 1024 * 1024;
      break;
    case 'G':
      scale = 1024LL * 1024 * 1024;
      break;
    default:
      break;
  }
  if (scale != 1) s.pop_back();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || v < 0) {
    return Status::InvalidArgument(fmt::format("'{}' is not a number", std::string(text)));
  }
  double scaled = v * static_cast<double>(scale);
  if (!std::isfinite(scaled) || scaled >= 9.0e18) {
    return Status::InvalidArgument(fmt::format("'{}' is out of range", std::string(text)));
  }
  return static_cast<int64_t>(std::llround(scaled));
}

double ToGiB(uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

std::string GiB1(double gib) { return fmt::format("{:.1f}", gib); }

std::string WithCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace faultline::preflight
