#include "probe/proc_parse.h"

#include <charconv>
#include <vector>

namespace faultline::probe {
namespace {

template <typename T>
bool ToNumber(std::string_view s, T* out, int base = 10) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p != s.data();
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Value of "Key:   123 kB" lines.
std::optional<int64_t> StatusKb(std::string_view text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      int64_t v = 0;
      if (ToNumber(line.substr(key.size() + 1), &v)) return v;
      return std::nullopt;
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcStat> ParseStat(std::string_view text) {
  // "pid (comm) state ppid ..." where comm may hold spaces and parentheses.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat st;
  if (!ToNumber(text.substr(0, open), &st.pid)) return std::nullopt;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  std::vector<std::string_view> f = SplitSpaces(text.substr(close + 1));
  // f[0] is field 3 (state); field n is f[n - 3].
  if (f.size() < 22) return std::nullopt;
  st.state = f[0].empty() ? '?' : f[0][0];
  bool ok = ToNumber(f[1], &st.ppid) && ToNumber(f[2], &st.pgrp) && ToNumber(f[3], &st.session) &&
            ToNumber(f[11], &st.utime_ticks) && ToNumber(f[12], &st.stime_ticks) && ToNumber(f[17], &st.num_threads) &&
            ToNumber(f[19], &st.start_time_ticks) && ToNumber(f[21], &st.rss_pages);
  if (!ok) return std::nullopt;
  return st;
}

std::optional<ProcStatus> ParseStatus(std::string_view text) {
  ProcStatus st;
  auto rss = StatusKb(text, "VmRSS");
  auto threads = StatusKb(text, "Threads");
  if (!threads) return std::nullopt;
  st.threads = *threads;
  st.rss_bytes = rss.value_or(0) * 1024;  // kernel threads have no VmRSS
  st.rss_anon_bytes = StatusKb(text, "RssAnon").value_or(0) * 1024;
  st.rss_file_bytes = StatusKb(text, "RssFile").value_or(0) * 1024;
  return st;
}

std::optional<ProcIo> ParseIo(std::string_view text) {
  ProcIo io;
  auto rchar = StatusKb(text, "rchar");
  auto read_bytes = StatusKb(text, "read_bytes");
  if (!rchar || !read_bytes) return std::nullopt;
  io.rchar = static_cast<uint64_t>(*rchar);
  io.read_bytes = static_cast<uint64_t>(*read_bytes);
  io.wchar = static_cast<uint64_t>(StatusKb(text, "wchar").value_or(0));
  io.write_bytes = static_cast<uint64_t>(StatusKb(text, "write_bytes").value_or(0));
  return io;
}

std::optional<int64_t> ParseFdInfoPos(std::string_view text) { return StatusKb(text, "pos"); }

std::optional<int> ParseFdInfoFlags(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, 6) != "flags:") continue;
    std::vector<std::string_view> f = SplitSpaces(line.substr(6));
    int flags = 0;
    if (f.empty() || !ToNumber(f[0], &flags, 8)) return std::nullopt;
    return flags;
  }
  return std::nullopt;
}

bool FdInfoWritable(std::string_view text) {
  auto flags = ParseFdInfoFlags(text);
  return flags && (*flags & 3) != 0;  // O_ACCMODE: O_WRONLY 1, O_RDWR 2
}

void ParseNetTcp(std::string_view text, std::map<uint64_t, int>* states) {
  size_t at = text.find('\n');  // skip the header
  while (at != std::string_view::npos && at < text.size()) {
    size_t end = text.find('\n', at + 1);
    std::string_view line = text.substr(at + 1, (end == std::string_view::npos ? text.size() : end) - at - 1);
    at = end;
    std::vector<std::string_view> f = SplitSpaces(line);
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
    if (f.size() < 10) continue;
    int state = 0;
    uint64_t inode = 0;
    if (ToNumber(f[3], &state, 16) && ToNumber(f[9], &inode) && inode != 0) (*states)[inode] = state;
  }
}

std::optional<uint64_t> SocketInode(std::string_view t) {
  constexpr std::string_view kPrefix = "socket:[";
  if (t.substr(0, kPrefix.size()) != kPrefix || t.empty() || t.back() != ']') return std::nullopt;
  uint64_t inode = 0;
  if (!ToNumber(t.substr(kPrefix.size(), t.size() - kPrefix.size() - 1), &inode)) return std::nullopt;
  return inode;
}

std::string ParseCmdline(std::string_view text) {
  std::string out(text);
  while (!out.empty() && out.back() == '\0') out.pop_back();
  for (char& c : out) {
    if (c == '\0') c = ' ';
  }
  return out;
}

}  // namespace faultline::probe
