#include "input/line_cleaner.h"

#include <array>
#include <cstring>

namespace faultline::input {

namespace {

// Caret notation, as `cat -v`, `less` or a terminal's copy turn control
// bytes into text: "^[[36m" is ESC [ 36 m, a trailing "^M" is the '\r' of a
// CRLF. Length of the CSI written that way at s[0] == '^' (digits and ';'
// or '?' then a letter), else 0.
size_t CaretCsiLength(std::string_view s) {
  if (s.size() < 4 || s[0] != '^' || s[1] != '[' || s[2] != '[') return 0;
  size_t i = 3;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';' || s[i] == '?')) ++i;
  if (i < s.size() && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) return i + 1;
  return 0;
}

bool EndsWithCaretCr(std::string_view s) { return s.size() >= 2 && s.substr(s.size() - 2) == "^M"; }

}  // namespace

bool NeedsCleaning(std::string_view line) {
  for (char c : {'\x1b', '\r', '\0', '\b'}) {
    if (std::memchr(line.data(), c, line.size()) != nullptr) return true;
  }
  if (EndsWithCaretCr(line)) return true;
  for (size_t i = line.find("^[["); i != std::string_view::npos; i = line.find("^[[", i + 1)) {
    if (CaretCsiLength(line.substr(i))) return true;
  }
  return false;
}

namespace {

// Length of the escape sequence starting at s[0] == ESC.
size_t EscapeLength(std::string_view s) {
  if (s.size() < 2) return s.size();
  char kind = s[1];
  if (kind == '[') {  // CSI: parameters, intermediates, one final byte @..~
    size_t i = 2;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) < 0x40 || static_cast<unsigned char>(s[i]) > 0x7e)) {
      ++i;
    }
    return i < s.size() ? i + 1 : s.size();
  }
  // String sequences, up to BEL or ESC '\': OSC (terminal titles,
  // hyperlinks), APC (Buildkite's "ESC _bk;t=1715267710123 BEL" time stamps),
  // DCS, PM, SOS.
  if (kind == ']' || kind == '_' || kind == 'P' || kind == '^' || kind == 'X') {
    for (size_t i = 2; i < s.size(); ++i) {
      if (s[i] == '\a') return i + 1;
      if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\') return i + 2;
    }
    return s.size();
  }
  return 2;  // two-byte escape (ESC =, ESC >, ESC 7 ...)
}

// Whether a segment prints anything: colour codes, NULs and blanks alone
// (the reset "ESC[0m" a coloured logger puts after a CRLF's '\r', the
// erase-line a progress bar writes) leave the text before them on screen.
bool Visible(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      i += EscapeLength(s.substr(i));
    } else if (s[i] == '\0' || s[i] == ' ' || s[i] == '\t') {
      ++i;
    } else {
      return true;
    }
  }
  return false;
}

}  // namespace

namespace {

// Bytes AppendText does more with than copy them.
constexpr auto kSpecial = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {'\x1b', '^', '\0', '\b'}) t[c] = true;
  return t;
}();

// Appends segment's text without escapes, NULs and backspaced bytes. Runs
// of plain bytes are appended at once.
void AppendText(std::string_view line, std::string* out) {
  const size_t start = out->size();
  out->reserve(out->size() + line.size());
  for (size_t i = 0; i < line.size();) {
    size_t plain = i;
    while (plain < line.size() && !kSpecial[static_cast<unsigned char>(line[plain])]) ++plain;
    if (plain > i) {
      out->append(line.data() + i, plain - i);
      i = plain;
      if (i == line.size()) break;
    }
    char c = line[i];
    if (c == '\x1b') {
      i += EscapeLength(line.substr(i));
    } else if (c == '^' && CaretCsiLength(line.substr(i))) {
      i += CaretCsiLength(line.substr(i));
    } else if (c == '\0') {
      ++i;
    } else if (c == '\b') {
      if (out->size() > start) out->pop_back();
      ++i;
    } else {
      out->push_back(c);
      ++i;
    }
  }
}

// A bar's label: its text before the first digit, without blanks at its
// ends (tqdm pads the percentage: "train:   0%" and "train:  32%" are one
// bar, as are "  0%" and " 32%"). False when the text has no digit.
bool BarLabel(std::string_view text, std::string_view* label) {
  size_t digit = 0;
  while (digit < text.size() && !(text[digit] >= '0' && text[digit] <= '9')) ++digit;
  if (digit == text.size()) return false;
  *label = text.substr(0, digit);
  while (!label->empty() && (label->back() == ' ' || label->back() == '\t')) label->remove_suffix(1);
  while (!label->empty() && (label->front() == ' ' || label->front() == '\t')) label->remove_prefix(1);
  return true;
}

// The first state of the bar whose last state is `last` (cleaned), among the
// segments of `before` (the line up to the last segment's '\r').
void EarlierState(std::string_view before, std::string_view last, std::string* earlier) {
  std::string_view label, other;
  if (!BarLabel(last, &label)) return;
  std::string text;
  size_t pos = 0;
  while (pos <= before.size()) {
    size_t cr = before.find('\r', pos);
    if (cr == std::string_view::npos) cr = before.size();
    std::string_view segment = before.substr(pos, cr - pos);
    if (Visible(segment)) {
      text.clear();
      AppendText(segment, &text);
      if (text != last && BarLabel(text, &other) && other == label) {
        earlier->assign(text);
        return;
      }
    }
    pos = cr + 1;
  }
}

}  // namespace

void CleanLineInto(std::string_view line, std::string* out, std::string* earlier) {
  if (earlier) earlier->clear();
  // Windows line ending and trailing carriage returns are not rewrites.
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || EndsWithCaretCr(line))) {
    line.remove_suffix(line.back() == 'M' ? 2 : 1);
  }
  // A '\r' inside the line rewinds the cursor: keep the last non-empty segment.
  std::string_view whole = line;
  size_t cr = line.rfind('\r');
  size_t last_cr = std::string_view::npos;
  while (cr != std::string_view::npos) {
    std::string_view tail = line.substr(cr + 1);
    if (Visible(tail)) {
      line = tail;
      last_cr = cr;
      break;
    }
    line = line.substr(0, cr);
    cr = line.rfind('\r');
  }
  const size_t start = out->size();
  AppendText(line, out);
  if (earlier && last_cr != std::string_view::npos) {
    EarlierState(whole.substr(0, last_cr), std::string_view(*out).substr(start), earlier);
  }
}

}  // namespace faultline::input
