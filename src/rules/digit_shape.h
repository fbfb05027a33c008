// A line's digit shape: the line with every ASCII digit made '0' (two lines
// of one shape differ only in their numbers: a step counter, a loss, a time).
// One word-at-a-time helper for the rule confirmation cache (rule_set.cc
// DigitShape) and the scan thread's same-shape check (diagnosis/log_scanner.cc
// SameDigitShape).
#ifndef FAULTLINE_RULES_DIGIT_SHAPE_H_
#define FAULTLINE_RULES_DIGIT_SHAPE_H_

#include <cstdint>

namespace faultline::rules {

// Eight bytes of text with each ASCII digit '0'..'9' made '0'; other bytes
// (UTF-8 included) unchanged.
inline uint64_t ZeroDigits8(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const uint64_t low7 = w & ~kHigh;
  const uint64_t ge0 = low7 + (0x80 - '0') * kOnes;  // high bit: low 7 bits >= '0' (no carry out of a byte)
  const uint64_t ge10 = low7 + (0x80 - '9' - 1) * kOnes;
  const uint64_t digits = ge0 & ~ge10 & ~w & kHigh;  // ASCII bytes '0'..'9'
  return w & ~((digits >> 7) * 0x0F);                 // '0' + d -> '0'
}

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_DIGIT_SHAPE_H_
