#include "web/log_window.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/unique_fd.h"

namespace faultline::web {
namespace {

constexpr int64_t kBlock = 64 * 1024;

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` appears in `text` with no letter/digit right before or after it.
bool HasWord(std::string_view text, std::string_view word) {
  size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string_view::npos) {
    bool left = pos == 0 || !IsWordChar(text[pos - 1]);
    size_t after = pos + word.size();
    bool right = after >= text.size() || !IsWordChar(text[after]);
    if (left && right) return true;
    pos = after;
  }
  return false;
}

// glog/absl prefix: "E0509 15:15:10.123456 ..." (level letter, 4 digits, space).
char GlogLevel(std::string_view text) {
  size_t i = text.find_first_not_of(' ');
  if (i == std::string_view::npos || text.size() < i + 6) return 0;
  char c = text[i];
  if (c != 'E' && c != 'W' && c != 'I' && c != 'F') return 0;
  for (size_t k = 1; k <= 4; ++k) {
    if (!std::isdigit(static_cast<unsigned char>(text[i + k]))) return 0;
  }
  return text[i + 5] == ' ' ? c : 0;
}

// "...Error:" / "...Exception:" as a word at the start of the message.
bool HasExceptionName(std::string_view text) {
  for (std::string_view suffix : {std::string_view("Error:"), std::string_view("Exception:")}) {
    size_t pos = text.find(suffix);
    if (pos != std::string_view::npos && pos > 0 && std::isalpha(static_cast<unsigned char>(text[pos - 1]))) {
      return true;
    }
  }
  return false;
}

bool ContainsIgnoreCase(std::string_view text, std::string_view lower_query) {
  if (lower_query.empty()) return true;
  auto it = std::search(text.begin(), text.end(), lower_query.begin(), lower_query.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return it != text.end();
}

Result<int64_t> PreadAll(int fd, char* buf, int64_t len, int64_t offset, const std::string& path) {
  int64_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, buf + got, static_cast<size_t>(len - got), offset + got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(fmt::format("{}: {}", path, strerror(errno)));
    }
    if (n == 0) break;
    got += n;
  }
  return got;
}

Result<int> OpenLog(const std::string& path, int64_t* size) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    return Status::IoError(fmt::format("{}: {}", path, strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return Status::IoError(fmt::format("{}: {}", path, strerror(errno)));
  }
  *size = st.st_size;
  return fd;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether a line passes the level and query filters; fills `out` when it does.
bool Keep(std::string_view text, int64_t offset, const WindowLimits& limits, const std::string& lower_query,
          LogLine* out) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  std::string_view shown = text.substr(0, kMaxLineBytes);
  LineLevel level = ClassifyLine(shown);
  if (level < limits.min_level) return false;
  if (!ContainsIgnoreCase(text, lower_query)) return false;
  out->offset = offset;
  out->text.assign(shown);
  out->level = level;
  return true;
}

}  // namespace

LineLevel ClassifyLine(std::string_view text) {
  std::string_view head = text.substr(0, 512);
  switch (GlogLevel(head)) {
    case 'E':
    case 'F': return LineLevel::kError;
    case 'W': return LineLevel::kWarning;
    case 'I': return LineLevel::kInfo;
    default: break;
  }
  if (HasWord(head, "ERROR") || HasWord(head, "CRITICAL") || HasWord(head, "FATAL") ||
      head.find("Traceback (most recent call last)") != std::string_view::npos || HasExceptionName(head)) {
    return LineLevel::kError;
  }
  if (HasWord(head, "WARNING") || HasWord(head, "WARN")) return LineLevel::kWarning;
  if (HasWord(head, "INFO")) return LineLevel::kInfo;
  if (HasWord(head, "DEBUG")) return LineLevel::kDebug;
  return LineLevel::kOther;
}

const char* LineLevelName(LineLevel level) {
  switch (level) {
    case LineLevel::kDebug: return "debug";
    case LineLevel::kOther: return "other";
    case LineLevel::kInfo: return "info";
    case LineLevel::kWarning: return "warning";
    case LineLevel::kError: return "error";
  }
  return "other";
}

bool ParseLineLevel(std::string_view name, LineLevel* level) {
  if (name.empty() || name == "all" || name == "debug") {
    *level = LineLevel::kDebug;
  } else if (name == "info") {
    *level = LineLevel::kInfo;
  } else if (name == "warning" || name == "warn") {
    *level = LineLevel::kWarning;
  } else if (name == "error") {
    *level = LineLevel::kError;
  } else {
    return false;
  }
  return true;
}

Result<LogWindow> ReadBackward(const std::string& path, int64_t end, const WindowLimits& limits) {
  int64_t size = 0;
  auto fd_or = OpenLog(path, &size);
  if (!fd_or.ok()) return fd_or.status();
  util::UniqueFd fd(*fd_or);
  LogWindow w;
  w.size = size;
  if (end < 0 || end > size) end = size;
  w.end = end;
  w.start = end;  // the earliest line start looked at
  std::string lower_query = Lower(limits.query);
  constexpr size_t kCarryMax = kMaxLineBytes * 4;
  // The start of the line whose beginning is not found yet (bytes from the
  // current block start to the first newline after it), cut to kCarryMax.
  std::string carry;
  int64_t pos = end;  // everything in [pos, end) has been read
  int64_t budget = limits.max_bytes;
  std::vector<LogLine> reversed;
  std::string buf;
  while (pos > 0 && reversed.size() < limits.max_lines && budget > 0) {
    int64_t len = std::min({kBlock, pos, budget});
    buf.resize(static_cast<size_t>(len));
    auto got = PreadAll(fd.get(), buf.data(), len, pos - len, path);
    if (!got.ok()) return got.status();
    if (*got < len) break;  // truncated under us
    if (pos == end) w.partial_last = buf[static_cast<size_t>(len - 1)] != '\n';
    pos -= len;
    budget -= len;
    // Each newline of the block, from the back, closes the line after it.
    int64_t block_end = len;
    for (int64_t i = len - 1; i >= 0 && reversed.size() < limits.max_lines; --i) {
      if (buf[static_cast<size_t>(i)] != '\n') continue;
      int64_t line_start = pos + i + 1;
      std::string line = buf.substr(static_cast<size_t>(i + 1), static_cast<size_t>(block_end - i - 1));
      if (line.size() < kCarryMax) line += carry;
      carry.clear();
      // The newline that ends the file is not a line of its own.
      if (line_start != end || !line.empty()) {
        LogLine out;
        if (Keep(line, line_start, limits, lower_query, &out)) reversed.push_back(std::move(out));
      }
      w.start = line_start;
      block_end = i;
    }
    if (reversed.size() >= limits.max_lines) break;
    carry = buf.substr(0, static_cast<size_t>(block_end)) + carry;
    if (carry.size() > kCarryMax) carry.resize(kCarryMax);
  }
  // The file's first line has no newline before it.
  if (pos == 0 && end > 0 && reversed.size() < limits.max_lines && w.start > 0) {
    LogLine out;
    if (Keep(carry, 0, limits, lower_query, &out)) reversed.push_back(std::move(out));
    w.start = 0;
  }
  w.reached_start = w.start == 0;
  w.lines.assign(std::make_move_iterator(reversed.rbegin()), std::make_move_iterator(reversed.rend()));
  return w;
}

Result<LogWindow> ReadForward(const std::string& path, int64_t start, const WindowLimits& limits,
                              bool include_partial) {
  int64_t size = 0;
  auto fd_or = OpenLog(path, &size);
  if (!fd_or.ok()) return fd_or.status();
  util::UniqueFd fd(*fd_or);
  LogWindow w;
  w.size = size;
  if (start < 0) start = 0;
  if (start > size) start = size;  // truncated: nothing new yet
  w.start = start;
  w.end = start;
  w.reached_start = start == 0;
  std::string lower_query = Lower(limits.query);
  std::string line;
  int64_t line_start = start;
  int64_t pos = start;
  int64_t budget = limits.max_bytes;
  std::string buf;
  while (pos < size && w.lines.size() < limits.max_lines && budget > 0) {
    int64_t len = std::min({kBlock, size - pos, budget});
    buf.resize(static_cast<size_t>(len));
    auto got = PreadAll(fd.get(), buf.data(), len, pos, path);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    len = *got;
    budget -= len;
    int64_t from = 0;
    for (int64_t i = 0; i < len; ++i) {
      if (buf[static_cast<size_t>(i)] != '\n') continue;
      if (line.size() < kMaxLineBytes * 4) line.append(buf, static_cast<size_t>(from), static_cast<size_t>(i - from));
      LogLine out;
      if (Keep(line, line_start, limits, lower_query, &out)) w.lines.push_back(std::move(out));
      line.clear();
      from = i + 1;
      line_start = pos + i + 1;
      w.end = line_start;
      if (w.lines.size() >= limits.max_lines) break;
    }
    if (w.lines.size() >= limits.max_lines) break;
    if (line.size() < kMaxLineBytes * 4) line.append(buf, static_cast<size_t>(from), static_cast<size_t>(len - from));
    pos += len;
  }
  if (include_partial && pos >= size && !line.empty() && w.lines.size() < limits.max_lines) {
    LogLine out;
    if (Keep(line, line_start, limits, lower_query, &out)) w.lines.push_back(std::move(out));
    w.end = size;
  }
  return w;
}

}  // namespace faultline::web
