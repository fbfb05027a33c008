#include "input/newest_first.h"

#include "input/buffered_source.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace faultline::input {
namespace {

bool Digit(char c) { return c >= '0' && c <= '9'; }

bool DigitsAt(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i) {
    if (!Digit(s[i])) return false;
  }
  return true;
}

// The line's clock as a key that sorts as time does, among keys of one kind
// (the kind says which date, if any, came with the clock). Empty: no clock.
std::string TimeKey(std::string_view line) {
  constexpr size_t kLook = 96;
  std::string_view s = line.substr(0, std::min(line.size(), kLook + 8));
  for (size_t i = 0; i + 8 <= s.size() && i < kLook; ++i) {
    if ((i > 0 && Digit(s[i - 1])) || !DigitsAt(s, i, 2) || s[i + 2] != ':' || !DigitsAt(s, i + 3, 2) ||
        s[i + 5] != ':' || !DigitsAt(s, i + 6, 2)) {
      continue;
    }
    std::string key;
    auto date_sep = [](char c) { return c == '-' || c == '/'; };
    if (i >= 11 && (s[i - 1] == 'T' || s[i - 1] == ' ') && DigitsAt(s, i - 11, 4) && date_sep(s[i - 7]) &&
        DigitsAt(s, i - 6, 2) && date_sep(s[i - 4]) && DigitsAt(s, i - 3, 2)) {
      key = "D";
      key.append(s.substr(i - 11, 4)).append(s.substr(i - 6, 2)).append(s.substr(i - 3, 2));
    } else if (i >= 6 && (s[i - 1] == ' ') && DigitsAt(s, i - 6, 2) && date_sep(s[i - 4]) && DigitsAt(s, i - 3, 2) &&
               (i == 6 || !Digit(s[i - 7]))) {
      key = "M";
      key.append(s.substr(i - 6, 2)).append(s.substr(i - 3, 2));
    } else {
      key = "C";
    }
    key.append(s.substr(i, 2)).append(s.substr(i + 3, 2)).append(s.substr(i + 6, 2));
    std::string fraction;
    size_t f = i + 8;
    if (f < line.size() && (line[f] == '.' || line[f] == ',')) {
      for (++f; f < line.size() && Digit(line[f]) && fraction.size() < 9; ++f) fraction += line[f];
    }
    fraction.resize(9, '0');
    return key + fraction;
  }
  return {};
}

std::string LinesReversed(const std::string& data) {
  std::vector<std::string_view> lines;
  std::string_view all(data);
  size_t at = 0;
  while (at < all.size()) {
    size_t nl = all.find('\n', at);
    if (nl == std::string_view::npos) nl = all.size();
    lines.push_back(all.substr(at, nl - at));
    at = nl + 1;
  }
  std::string out;
  out.reserve(data.size() + 1);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) out.append(*it).push_back('\n');
  return out;
}

}  // namespace

bool LooksNewestFirst(std::string_view head) {
  constexpr int kLines = 200;
  int newer_first = 0, older_first = 0, lines = 0;
  std::string previous;
  size_t at = 0;
  while (at < head.size() && lines < kLines) {
    size_t nl = head.find('\n', at);
    if (nl == std::string_view::npos) break;  // a cut line's clock may be cut too
    std::string key = TimeKey(head.substr(at, nl - at));
    at = nl + 1;
    ++lines;
    if (key.empty()) continue;
    if (!previous.empty() && previous[0] == key[0] && previous != key) {
      (key < previous ? newer_first : older_first) += 1;
    }
    previous = std::move(key);
  }
  return newer_first >= 8 && newer_first >= 9 * older_first;
}

Result<std::unique_ptr<ByteSource>> OldestFirst(std::unique_ptr<ByteSource> source, size_t max_bytes,
                                                NewestFirst* how) {
  *how = NewestFirst{};
  ReadAhead ahead;
  ReadUpTo(source.get(), 16 << 10, &ahead);
  if (!LooksNewestFirst(ahead.data)) return Rejoined(std::move(ahead), std::move(source));
  ReadUpTo(source.get(), max_bytes + 1, &ahead);
  if (ahead.data.size() > max_bytes) {
    how->too_large = true;
    return Rejoined(std::move(ahead), std::move(source));
  }
  how->reversed = true;
  std::string reversed = LinesReversed(ahead.data);
  return Replaced(std::move(reversed), std::move(ahead), *source);
}

}  // namespace faultline::input
