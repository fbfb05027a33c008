#include "input/job_layout.h"

#include <time.h>

#include <filesystem>
#include <fstream>
#include <string_view>

namespace faultline::input {
namespace fs = std::filesystem;
namespace {

// Digits only, at most 7 of them; -1 otherwise.
int SmallNumber(std::string_view s) {
  if (s.empty() || s.size() > 7) return -1;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool IsRunDir(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "live.jsonl", ec);
}

// The value of "key": "value" (or a bare number) in a small flat JSON object; "" when absent.
std::string FlatJsonValue(const std::string& text, const std::string& key) {
  size_t at = text.find("\"" + key + "\"");
  if (at == std::string::npos) return "";
  at = text.find(':', at + key.size() + 2);
  if (at == std::string::npos) return "";
  ++at;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  if (at < text.size() && text[at] == '"') {
    size_t end = text.find('"', at + 1);
    return end == std::string::npos ? "" : text.substr(at + 1, end - at - 1);
  }
  size_t end = at;
  while (end < text.size() && text[end] != ',' && text[end] != '}' && text[end] != '\n') ++end;
  return text.substr(at, end - at);
}

std::string ReadSmall(const fs::path& p, size_t limit) {
  std::ifstream in(p, std::ios::binary);
  std::string s(limit, '\0');
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

// "2026-11-29T09:31:05.201Z" -> ms since the epoch; -1 when malformed.
int64_t IsoMillis(const std::string& iso) {
  tm t{};
  int ms = 0;
  if (sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
             &t.tm_sec, &ms) < 6) {
    return -1;
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&t)) * 1000 + ms;
}

}  // namespace

std::string FileIdentity::Tag() const {
  std::string node_part = node.empty() ? "" : "node" + node;
  std::string who = rank >= 0         ? "rank" + std::to_string(rank)
                    : local_rank >= 0 ? "local_rank" + std::to_string(local_rank)
                                      : "";
  if (!node_part.empty() && !who.empty()) return node_part + "/" + who;
  return node_part.empty() ? who : node_part;
}

bool IsFaultlineRecord(const std::string& path) {
  fs::path p(path);
  std::string name = p.filename().string();
  if (name != "live.jsonl" && name != "diagnosis.json" && name != "diagnosis.txt" && name != "scheduler.json") {
    return false;
  }
  return IsRunDir(p.parent_path());
}

FileIdentity IdentifyLogPath(const std::string& path) {
  FileIdentity id;
  fs::path p(path);
  std::string name = p.filename().string();
  // slurm-<jobid>-<task>.out
  if (name.rfind("slurm-", 0) == 0) {
    std::string_view rest(name);
    rest.remove_prefix(6);
    size_t dot = rest.rfind('.');
    if (dot != std::string_view::npos) rest = rest.substr(0, dot);
    size_t dash = rest.rfind('-');
    if (dash != std::string_view::npos && SmallNumber(rest.substr(0, dash)) >= 0) {
      id.rank = SmallNumber(rest.substr(dash + 1));
    }
  }
  // .../attempt_<N>/<local_rank>/<file>
  fs::path rank_dir = p.parent_path();
  fs::path attempt_dir = rank_dir.parent_path();
  std::string attempt = attempt_dir.filename().string();
  if (attempt.rfind("attempt_", 0) == 0 && SmallNumber(std::string_view(attempt).substr(8)) >= 0) {
    int local = SmallNumber(rank_dir.filename().string());
    if (local >= 0) {
      id.local_rank = local;
      id.attempt = SmallNumber(std::string_view(attempt).substr(8));
    }
  }
  // A faultline run directory holding the log: its node, and its start in that node's clock.
  if (fs::path dir = p.parent_path(); IsRunDir(dir)) {
    std::error_code ec;
    if (fs::is_regular_file(dir / "scheduler.json", ec)) {
      std::string s = ReadSmall(dir / "scheduler.json", 4096);
      id.node = FlatJsonValue(s, "node_id");
      if (id.node.empty()) id.node = FlatJsonValue(s, "pod");
    }
    std::string first = ReadSmall(dir / "live.jsonl", 4096);
    first = first.substr(0, first.find('\n'));
    id.run_start_ms = IsoMillis(FlatJsonValue(first, "time"));
  }
  return id;
}

}  // namespace faultline::input
