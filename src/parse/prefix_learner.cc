#include "parse/prefix_learner.h"

#include <re2/re2.h>

#include <algorithm>
#include <map>

#include "parse/line_parser.h"

namespace faultline::parse {
namespace {

// Prefixes longer than this are not wrappers (a collector adds a time, a
// host, a stream name, a pod: tens of characters).
constexpr size_t kMaxPrefix = 96;
// Fewer recognised lines than this say nothing about a file.
constexpr size_t kMinEvidence = 4;
// Lines read (each is parsed at every token boundary of its first
// kMaxPrefix characters): kSampleLines, or up to kMaxSampleLines while
// fewer than kEnoughEvidence were recognised (a log that opens with pip's or
// a shell script's output before the framework speaks).
constexpr size_t kSampleLines = 64;
constexpr size_t kMaxSampleLines = 200;
constexpr size_t kEnoughEvidence = 16;

bool IsWord(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Lines of Python's own that start where the job's output starts, in a
// script that prints no logger header: a traceback's first line, its frames,
// and an exception line ("OSError: ...", "torch.OutOfMemoryError: ...").
bool PythonLineStart(std::string_view line) {
  static const RE2 kStart(
      R"((?:Traceback \(most recent call last\):|  File "[^"]+", line \d+|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)(?::|$)))");
  // Most lines start none of them (the learner asks at every token boundary
  // of every sample line): an exception's name is the first run of word
  // characters and dots, and holds one of the four words.
  if (!line.starts_with("Traceback (") && !line.starts_with("  File \"")) {
    size_t run = 0;
    while (run < line.size() && (IsWord(line[run]) && line[run] != '-')) ++run;
    const std::string_view name = line.substr(0, run);
    if (name.find("Error") == std::string_view::npos && name.find("Exception") == std::string_view::npos &&
        name.find("Interrupt") == std::string_view::npos && name.find("Exit") == std::string_view::npos)
      return false;
  }
  re2::StringPiece rest(line.data(), line.size());
  return RE2::Consume(&rest, kStart);
}

// How much of `line` the parser reads as prefixes and headers (0: none of
// it, npos: it does not recognise the line at all).
size_t HeaderLength(std::string_view line) {
  ParsedLine p = ParseLine(line);
  if (p.format.empty() && p.process.empty()) return PythonLineStart(line) ? 0 : std::string_view::npos;
  return line.size() - p.message.size();
}

// Where the framework's own line starts: the token boundary (0 included)
// after which the parser reads the most of the line as prefixes and headers
// — the framework's "(Worker pid=7) ERROR ... [file:line] ", not a time
// stamp the parser happens to read inside the wrapper; the earliest such
// boundary; npos when the parser recognises nothing.
size_t RecognisedFrom(std::string_view line) {
  size_t best = HeaderLength(line), best_end = best == std::string_view::npos ? 0 : best;
  if (best != std::string_view::npos) best = 0;
  const size_t limit = std::min(line.size(), kMaxPrefix);
  for (size_t i = 1; i < limit; ++i) {
    // A wrapper ends after a blank or a separator, never inside a word; a
    // traceback frame keeps its own two-blank indentation.
    // Nor after an opening bracket: "[" starts something (a time the
    // parser would read inside the wrapper), it ends nothing.
    if (IsWord(line[i - 1]) || std::string_view("([{<").find(line[i - 1]) != std::string_view::npos) continue;
    if (IsBlank(line[i]) && !PythonLineStart(line.substr(i))) continue;
    const size_t header = HeaderLength(line.substr(i));
    if (header == std::string_view::npos) continue;
    if (best == std::string_view::npos || i + header > best_end) best = i, best_end = i + header;
  }
  return best;
}

std::string PatternOfShape(std::string_view shape) {
  const size_t trailing = shape.find_last_not_of(" \t") + 1;  // shape has a word
  std::string out;
  for (size_t i = 0; i < trailing; ++i) {
    const char c = shape[i];
    if (c == 'w') {
      out += R"([\w.\-]+)";
    } else if (c == ' ') {
      out += R"([ \t]+)";
    } else {
      out += RE2::QuoteMeta(std::string(1, c));
    }
  }
  return out + RE2::QuoteMeta(std::string(shape.substr(trailing)));
}

// The blanks every non-blank sample line starts with; nullopt when fewer
// than `evidence` lines have text or they share none.
std::optional<std::string_view> SharedIndentation(const std::vector<std::string_view>& lines,
                                                  size_t evidence = kMinEvidence) {
  std::optional<std::string_view> common;
  size_t seen = 0;
  for (size_t n = 0; n < lines.size() && n < kSampleLines; ++n) {
    const std::string_view line = lines[n];
    const size_t text = line.find_first_not_of(" \t");
    if (text == std::string_view::npos) continue;  // blank lines say nothing
    ++seen;
    const std::string_view indent = line.substr(0, text);
    if (!common) {
      common = indent;
    } else {
      size_t k = 0;
      while (k < common->size() && k < indent.size() && (*common)[k] == indent[k]) ++k;
      common = common->substr(0, k);
    }
    if (common->empty()) return std::nullopt;
  }
  if (!common || seen < evidence) return std::nullopt;
  return common;
}

// A paste indented as a whole (a log quoted in a Markdown list item, an
// e-mail's or a doc's indentation): every line starts with the same blanks
// and, without them, Python's or a framework's own lines start the line (a
// "Traceback (most recent call last):", an exception line, a logger header).
// A paste of frames alone ("  File ..." and code lines) is left as it is:
// without their indentation frames would read as exception lines.
std::optional<LearnedPrefix> CommonIndentation(const std::vector<std::string_view>& lines) {
  const std::optional<std::string_view> common = SharedIndentation(lines);
  if (!common) return std::nullopt;
  size_t own_lines = 0;
  for (size_t n = 0; n < lines.size() && n < kSampleLines; ++n) {
    if (lines[n].size() <= common->size()) continue;
    const std::string_view rest = lines[n].substr(common->size());
    if (!IsBlank(rest[0]) && RecognisedFrom(rest) == 0) ++own_lines;
  }
  if (own_lines == 0) return std::nullopt;
  return LearnedPrefix{std::string(*common), RE2::QuoteMeta(std::string(*common))};
}

// A column whose value is gone: one or two separators and one blank (": ",
// "# ", "| "), nothing that opens a bracket (a framework's "[rank0]: " or
// "(Worker pid=7) " starts so).
bool EmptyColumn(std::string_view shape) {
  if (shape.size() < 2 || shape.size() > 3 || shape.back() != ' ') return false;
  for (size_t i = 0; i + 1 < shape.size(); ++i) {
    if (IsWord(shape[i]) || IsBlank(shape[i]) || std::string_view("([{<").find(shape[i]) != std::string_view::npos)
      return false;
  }
  return true;
}

}  // namespace

std::string PrefixShape(std::string_view prefix) {
  std::string shape;
  for (size_t i = 0; i < prefix.size();) {
    if (IsWord(prefix[i])) {
      while (i < prefix.size() && IsWord(prefix[i])) ++i;
      shape += 'w';
    } else if (IsBlank(prefix[i])) {
      const size_t start = i;
      while (i < prefix.size() && IsBlank(prefix[i])) ++i;
      // The last run is kept as it is: peeling it must not take the
      // indentation of the line it wraps.
      if (i == prefix.size()) {
        shape.append(prefix.substr(start));
      } else {
        shape += ' ';
      }
    } else {
      shape += prefix[i++];
    }
  }
  return shape;
}

std::string_view PasteIndentation(const std::vector<std::string_view>& lines) {
  // A paste of a few lines is all in the sample: each of its lines is
  // evidence enough (no later line can lose blanks of its own).
  const size_t evidence = lines.size() < kSampleLines ? 1 : kMinEvidence;
  if (const std::optional<std::string_view> common = SharedIndentation(lines, evidence)) {
    for (size_t n = 0; n < lines.size() && n < kSampleLines; ++n) {
      if (lines[n].size() <= common->size()) continue;
      const std::string_view rest = lines[n].substr(common->size());
      if (!IsBlank(rest[0]) && !rest.starts_with("File \"")) return *common;
    }
    return {};  // frames alone: their indentation is their own
  }
  // A few lines at the margin: a bar redrawn with '\r' is cleaned to its last
  // state, which the redraw put at the start of the line. Then the indented
  // lines must be the framework's own once dedented (a logger header, a
  // traceback): a log's own indented block (Megatron's argument dump, a
  // config) is no paste, and dedenting it would take later frames' blanks.
  std::vector<std::string_view> indented;
  size_t margin = 0;
  for (size_t n = 0; n < lines.size() && n < kSampleLines; ++n) {
    const std::string_view line = lines[n];
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (IsBlank(line[0])) {
      indented.push_back(line);
    } else {
      ++margin;
    }
  }
  if (margin == 0 || margin * 4 > margin + indented.size()) return {};
  const std::optional<std::string_view> common = SharedIndentation(indented);
  if (!common || common->size() < 2) return {};
  for (std::string_view line : indented) {
    const std::string_view rest = line.substr(common->size());
    if (!rest.empty() && !IsBlank(rest[0]) && RecognisedFrom(rest) == 0) return *common;
  }
  return {};
}

std::optional<LearnedPrefix> LearnPrefix(const std::vector<std::string_view>& lines) {
  if (auto indent = CommonIndentation(lines)) return indent;
  size_t as_is = 0, after_prefix = 0;
  std::map<std::string, size_t> shapes;
  for (size_t n = 0; n < lines.size() && n < kMaxSampleLines; ++n) {
    if (n >= kSampleLines && as_is + after_prefix >= kEnoughEvidence) break;
    const std::string_view line = lines[n];
    const size_t from = RecognisedFrom(line);
    if (from == std::string_view::npos) continue;
    const std::string_view prefix = line.substr(0, from);
    if (from == 0 || prefix.find_first_not_of(" \t") == std::string_view::npos) {  // indentation only
      ++as_is;
      continue;
    }
    ++after_prefix;
    ++shapes[PrefixShape(prefix)];
  }
  if (after_prefix < kMinEvidence || as_is * 4 > after_prefix) return std::nullopt;
  const auto best =
      std::max_element(shapes.begin(), shapes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  // One shape for most recognised lines; a wrapper says something (a time, a
  // host, a stream): a prefix without a word ("[", blanks) is the
  // framework's own punctuation or indentation — unless it is an empty
  // column: punctuation and a blank (": " of a pdsh host column the copy cut
  // off, "# " of a commented paste) before every recognised line.
  if (best->second * 4 < after_prefix * 3) return std::nullopt;
  if (best->first.find('w') == std::string::npos) {
    if (!EmptyColumn(best->first) || as_is > 0 || best->second != after_prefix) return std::nullopt;
    return LearnedPrefix{best->first, RE2::QuoteMeta(best->first)};
  }
  return LearnedPrefix{best->first, PatternOfShape(best->first)};
}

}  // namespace faultline::parse
