#include "mining/header_strip.h"

#include <array>

namespace faultline::mining {
namespace {

constexpr size_t kMaxHeaderTokens = 8;

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool IsHeaderWord(std::string_view token) {
  static constexpr std::array<std::string_view, 30> kWords = {
      "TRACE",  "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "ERR", "FATAL", "CRITICAL",
      "SEVERE", "Jan",   "Feb",  "Mar",    "Apr",  "May",     "Jun",   "Jul", "Aug",   "Sep",
      "Oct",    "Nov",   "Dec",  "Mon",    "Tue",  "Wed",     "Thu",   "Fri", "Sat",   "Sun"};
  if (!token.empty() && token.back() == ':') token.remove_suffix(1);
  if (token.size() < 3 || token.size() > 8 || !IsAlpha(token[0])) return false;
  for (std::string_view w : kWords) {
    if (EqualsIgnoreCase(token, w)) return true;
  }
  return false;
}

bool IsStampLike(std::string_view token) {
  size_t digits = 0, letters = 0;
  for (char c : token) {
    digits += IsDigit(c);
    letters += IsAlpha(c);
  }
  return digits > 0 && letters <= 3;
}

}  // namespace

std::string_view StripHeader(std::string_view line, HeaderMode mode) {
  if (mode == HeaderMode::kNone) return line;
  size_t pos = 0;
  size_t keep = 0;  // start of the message so far
  auto skip_space = [&] {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
  };
  skip_space();
  keep = pos;
  for (size_t n = 0; n < kMaxHeaderTokens && pos < line.size(); ++n) {
    size_t start = pos;
    size_t end;
    char open = line[pos];
    char close = open == '[' ? ']' : open == '(' ? ')' : '\0';
    if (close != '\0') {
      end = line.find(close, pos);
      if (end == std::string_view::npos) break;
      ++end;
    } else {
      end = pos;
      while (end < line.size() && !IsSpace(line[end])) ++end;
    }
    std::string_view token = line.substr(start, end - start);
    // glog and torch print "file.py:851]" as the last header token.
    const bool glog_end =
        close == '\0' && n > 0 && token.size() > 2 && token.back() == ']' && token.find(':') != std::string_view::npos;
    if (close == '\0' && !glog_end && !IsStampLike(token) && !IsHeaderWord(token)) {
      // One "component:" right after a header ends it.
      if (n > 0 && token.size() > 1 && token.back() == ':') {
        pos = end;
        skip_space();
        if (pos < line.size()) keep = pos;
      }
      break;
    }
    pos = end;
    skip_space();
    if (pos >= line.size()) break;  // never drop the whole line
    keep = pos;
    if (glog_end) break;
  }
  return line.substr(keep);
}

}  // namespace faultline::mining
