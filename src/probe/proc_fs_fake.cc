#include "probe/proc_fs_fake.h"

namespace faultline::probe {

void FakeProcFs::AddParents(const std::string& path) {
  std::string p = path;
  while (true) {
    size_t slash = p.rfind('/');
    if (slash == std::string::npos || slash == 0) {
      if (slash == 0 && p.size() > 1) dirs_["/"].insert(p.substr(1));
      return;
    }
    dirs_[p.substr(0, slash)].insert(p.substr(slash + 1));
    p = p.substr(0, slash);
  }
}

void FakeProcFs::SetFile(const std::string& path, std::string content) {
  files_[path] = std::move(content);
  AddParents(path);
}

void FakeProcFs::SetLink(const std::string& path, std::string target) {
  links_[path] = std::move(target);
  AddParents(path);
}

void FakeProcFs::RemoveTree(const std::string& prefix) {
  auto erase_under = [&](auto& m) {
    for (auto it = m.begin(); it != m.end();) {
      if (it->first == prefix || it->first.rfind(prefix + "/", 0) == 0) {
        it = m.erase(it);
      } else {
        ++it;
      }
    }
  };
  erase_under(files_);
  erase_under(links_);
  erase_under(dirs_);
  size_t slash = prefix.rfind('/');
  if (slash != std::string::npos) {
    auto it = dirs_.find(prefix.substr(0, slash));
    if (it != dirs_.end()) it->second.erase(prefix.substr(slash + 1));
  }
}

std::optional<std::string> FakeProcFs::ReadFile(const std::string& path, size_t max_bytes) {
  ++reads_;
  auto it = files_.find(path);
  if (it == files_.end()) return std::nullopt;
  return it->second.substr(0, max_bytes);
}

std::vector<std::string> FakeProcFs::ListDir(const std::string& path) {
  auto it = dirs_.find(path);
  if (it == dirs_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::optional<std::string> FakeProcFs::ReadLink(const std::string& path) {
  auto it = links_.find(path);
  if (it == links_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> FakeProcFs::FileSize(const std::string& path) {
  auto it = sizes_.find(path);
  if (it == sizes_.end()) return std::nullopt;
  return it->second;
}

}  // namespace faultline::probe
