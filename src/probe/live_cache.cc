#include "probe/live_cache.h"

#include <cstdlib>
#include <filesystem>
#include <set>

namespace faultline::probe {

std::string ExpandPath(const std::string& pattern, bool* all_vars_set) {
  if (all_vars_set) *all_vars_set = true;
  auto env = [&](const std::string& name) -> std::string {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == 0) {
      if (all_vars_set) *all_vars_set = false;
      return "";
    }
    return v;
  };
  std::string out;
  size_t i = 0;
  if (!pattern.empty() && pattern[0] == '~') {
    out = env("HOME");
    i = 1;
  }
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c == '$' && i + 1 < pattern.size()) {
      size_t start = i + 1;
      size_t end;
      std::string name;
      if (pattern[start] == '{') {
        end = pattern.find('}', start);
        if (end == std::string::npos) end = pattern.size();
        name = pattern.substr(start + 1, end - start - 1);
        i = end + 1;
      } else {
        end = start;
        while (end < pattern.size() && (isalnum(static_cast<unsigned char>(pattern[end])) || pattern[end] == '_'))
          ++end;
        name = pattern.substr(start, end - start);
        i = end;
      }
      out += env(name);
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

CacheDirWatcher::CacheDirWatcher(std::vector<Dir> dirs, Clock* clock, double every_seconds, int64_t max_entries)
    : clock_(clock), every_(every_seconds), max_entries_(max_entries) {
  std::set<std::string> seen;
  for (const auto& d : dirs) {
    bool all_set = true;
    std::string path = ExpandPath(d.path, &all_set);
    if (!all_set || path.empty() || !seen.insert(path).second) continue;
    CacheDirState s;
    s.name = d.name;
    s.path = path;
    states_.push_back(std::move(s));
  }
}

const std::vector<CacheDirState>& CacheDirWatcher::Poll() {
  double now = clock_->MonotonicSeconds();
  if (now - last_ < every_) return states_;
  last_ = now;
  namespace fs = std::filesystem;
  for (auto& s : states_) {
    std::error_code ec;
    s.exists = fs::is_directory(s.path, ec);
    s.files = 0;
    s.bytes = 0;
    s.truncated = false;
    if (!s.exists) continue;
    int64_t entries = 0;
    for (fs::recursive_directory_iterator it(s.path, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (++entries > max_entries_) {
        s.truncated = true;
        break;
      }
      std::error_code fec;
      if (it->is_regular_file(fec)) {
        ++s.files;
        s.bytes += static_cast<int64_t>(it->file_size(fec));
      }
    }
  }
  return states_;
}

}  // namespace faultline::probe
