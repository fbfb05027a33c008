#include "input/unfold.h"

#include <algorithm>
#include <map>
#include <set>

#include "input/buffered_source.h"

namespace faultline::input {
namespace {

constexpr size_t kHeadBytes = 256 << 10;
constexpr int kHeadRows = 2000;
// Narrower than this is no terminal a log is read in; `fold` cuts at 80.
constexpr int kMinWidth = 60;
// A joined line stops growing here: the line reader cuts lines at 256 KiB.
constexpr size_t kMaxJoinedBytes = 256 << 10;

bool Wide(uint32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
         (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD);
}

std::string_view WithoutCr(std::string_view row) {
  if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
  return row;
}

std::string_view WithoutTrailingBlanks(std::string_view row) {
  while (!row.empty() && (row.back() == ' ' || row.back() == '\t')) row.remove_suffix(1);
  return row;
}

// The first characters' classes: a line's start ("[rank3]:", "2025-", "  File")
// keeps its shape from line to line; a row cut mid-text does not.
std::string Shape(std::string_view row) {
  std::string s;
  for (size_t i = 0; i < row.size() && s.size() < 6; ++i) {
    const unsigned char c = static_cast<unsigned char>(row[i]);
    if (c >= '0' && c <= '9') {
      s.push_back('0');
    } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
      s.push_back('a');
    } else if (c >= 0x80) {
      if ((c & 0xC0) != 0x80) s.push_back('a');  // one class for a whole UTF-8 character
    } else {
      s.push_back(static_cast<char>(c));
    }
  }
  return s;
}

bool WordByte(char ch) {
  const unsigned char c = static_cast<unsigned char>(ch);
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c >= 0x80;
}

std::vector<std::string_view> Rows(std::string_view data, bool whole, size_t max_rows) {
  std::vector<std::string_view> rows;
  size_t at = 0;
  while (at < data.size() && rows.size() < max_rows) {
    size_t nl = data.find('\n', at);
    if (nl == std::string_view::npos) {
      if (whole) rows.push_back(WithoutCr(data.substr(at)));
      break;
    }
    rows.push_back(WithoutCr(data.substr(at, nl - at)));
    at = nl + 1;
  }
  return rows;
}

// Does a row go on in the next one?
bool Continues(std::string_view row, FoldShape shape) {
  if (shape.padded) row = WithoutTrailingBlanks(row);
  return RowWidth(row) == shape.width;
}

}  // namespace

int RowWidth(std::string_view row) {
  // Every input's head is measured: most rows hold no tab and no character
  // that may be wide, and their width is their count of characters.
  size_t continuation = 0;
  unsigned slow = 0;
  for (const char ch : row) {
    const unsigned char c = static_cast<unsigned char>(ch);
    continuation += (c & 0xC0) == 0x80;
    slow |= static_cast<unsigned>(c == '\t') | static_cast<unsigned>(c >= 0xE0);
  }
  if (!slow) return static_cast<int>(row.size() - continuation);
  int width = 0;
  for (size_t i = 0; i < row.size();) {
    const unsigned char c = static_cast<unsigned char>(row[i]);
    if (c < 0x80) {
      // A terminal copy holds no escapes; `fold` counts each of their bytes,
      // and a tab to the next stop, as a terminal does.
      width = c == '\t' ? (width / 8 + 1) * 8 : width + 1;
      ++i;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    uint32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : len == 4 ? (c & 0x07) : c;
    size_t k = 1;
    for (; k < len && i + k < row.size() && (static_cast<unsigned char>(row[i + k]) & 0xC0) == 0x80; ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(row[i + k]) & 0x3F);
    }
    width += (k == len && Wide(cp)) ? 2 : 1;
    i += k;
  }
  return width;
}

FoldShape DetectFold(std::string_view head, bool complete) {
  const std::vector<std::string_view> rows = Rows(head, complete, kHeadRows);
  const size_t n = rows.size();
  if (n < 3) return {};
  std::vector<int> widths(n);
  int widest = 0;
  for (size_t i = 0; i < n; ++i) {
    widths[i] = RowWidth(rows[i]);
    widest = std::max(widest, widths[i]);
  }
  if (widest < kMinWidth) return {};
  std::vector<size_t> full;
  size_t padded_rows = 0;
  for (size_t i = 0; i < n; ++i) {
    if (widths[i] != widest) continue;
    full.push_back(i);
    if (rows[i].back() == ' ') ++padded_rows;
  }
  // A screen copy fills every row to the width, its line ends with blanks.
  if (full.size() * 10 >= n * 8 && padded_rows * 2 >= full.size()) return {widest, true};
  if (full.size() < 3) return {};
  std::set<std::string_view> distinct;
  for (size_t i : full) distinct.insert(rows[i]);
  if (distinct.size() < 3) return {};  // one long line repeated
  // The width is a wall: rows pile up against it, unlike the widths below.
  size_t below = 0;
  for (int w : widths) below += (w >= widest - 20 && w < widest) ? 1 : 0;
  if (full.size() * 10 < std::max<size_t>(10, below) * 3) return {};
  // What follows a full row must be a cut (a fragment, most often mid-word),
  // not a line that starts as the file's lines start: a template whose lines
  // all have the widest length (NCCL's channel lines, a repeated warning)
  // is followed by more of its lines.
  std::map<std::string, int> starts;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (widths[i] < widest) ++starts[Shape(rows[i + 1])];
  }
  size_t pairs = 0, like_starts = 0, cut_pairs = 0, mid_word = 0;
  for (size_t i : full) {
    if (i + 1 >= n) continue;
    ++pairs;
    const std::string next = Shape(rows[i + 1]);
    auto it = starts.find(next);
    if ((it != starts.end() && it->second >= 2) || next == Shape(rows[i])) ++like_starts;
    if (rows[i + 1].empty()) continue;
    ++cut_pairs;
    if (WordByte(rows[i].back()) && WordByte(rows[i + 1].front())) ++mid_word;
  }
  if (like_starts * 2 >= pairs) return {};
  if (mid_word < 2 || mid_word * 12 < cut_pairs) return {};
  return {widest, false};
}

int64_t Unfolding::FileLine(int64_t line) const {
  auto it = std::lower_bound(joined.begin(), joined.end(), std::make_pair(line, int64_t{-1}));
  if (it == joined.begin()) return line;
  return line + std::prev(it)->second;
}

int64_t Unfolding::FileRows(int64_t lines) const {
  auto it = std::upper_bound(joined.begin(), joined.end(), std::make_pair(lines, INT64_MAX));
  if (it == joined.begin()) return lines;
  return lines + std::prev(it)->second;
}

std::string JoinRows(std::string_view data, FoldShape shape, std::vector<std::pair<int64_t, int64_t>>* joined) {
  const std::vector<std::string_view> rows = Rows(data, /*whole=*/true, SIZE_MAX);
  const bool ends_with_newline = !data.empty() && data.back() == '\n';
  std::string out;
  out.reserve(data.size());
  int64_t line = 0, extra = 0;
  for (size_t i = 0; i < rows.size();) {
    ++line;
    const size_t first = i;
    std::string_view row = rows[i];
    size_t line_bytes = 0;
    while (true) {
      const bool goes_on = Continues(row, shape) && i + 1 < rows.size() && !WithoutTrailingBlanks(rows[i + 1]).empty() &&
                           line_bytes + row.size() < kMaxJoinedBytes;
      std::string_view piece = shape.padded ? WithoutTrailingBlanks(row) : row;
      out.append(piece);
      line_bytes += piece.size();
      if (!goes_on) break;
      row = rows[++i];
    }
    ++i;
    if (i < rows.size() || ends_with_newline) out.push_back('\n');
    if (i - first > 1) {
      extra += static_cast<int64_t>(i - first - 1);
      joined->emplace_back(line, extra);
    }
  }
  return out;
}

Result<std::unique_ptr<ByteSource>> Unfolded(std::unique_ptr<ByteSource> source, size_t max_bytes, Unfolding* how) {
  *how = Unfolding{};
  ReadAhead ahead;
  ReadUpTo(source.get(), kHeadBytes, &ahead);
  const FoldShape shape = DetectFold(ahead.data, ahead.eof);
  if (shape.width == 0) return Rejoined(std::move(ahead), std::move(source));
  ReadUpTo(source.get(), max_bytes + 1, &ahead);
  if (ahead.data.size() > max_bytes) {
    how->too_large = true;
    return Rejoined(std::move(ahead), std::move(source));
  }
  how->shape = shape;
  std::string joined = JoinRows(ahead.data, shape, &how->joined);
  return Replaced(std::move(joined), std::move(ahead), *source);
}

}  // namespace faultline::input
