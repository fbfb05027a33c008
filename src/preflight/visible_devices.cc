#include "preflight/visible_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace faultline::preflight {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(Trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string VisibleDevices::Describe(size_t node_gpu_count) const {
  if (!setting) return fmt::format("all {} GPUs (CUDA_VISIBLE_DEVICES unset)", node_gpu_count);
  return fmt::format("CUDA_VISIBLE_DEVICES={}", setting->empty() ? "\"\"" : *setting);
}

VisibleDevices ResolveVisibleDevices(const std::vector<probe::GpuInfo>& node_gpus,
                                     const std::map<std::string, std::string>& env) {
  VisibleDevices vis;
  auto cvd = env.find("CUDA_VISIBLE_DEVICES");
  auto order = env.find("CUDA_DEVICE_ORDER");
  bool pci_order = order != env.end() && order->second == "PCI_BUS_ID";
  std::set<std::string> names;
  for (const probe::GpuInfo& g : node_gpus) names.insert(g.name);
  if (!pci_order && names.size() > 1) {
    vis.notes.push_back(
        "the node mixes GPU models and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers GPUs fastest "
        "first, so CUDA_VISIBLE_DEVICES indices may not match nvidia-smi's (set CUDA_DEVICE_ORDER=PCI_BUS_ID)");
  }
  auto nvd = env.find("NVIDIA_VISIBLE_DEVICES");
  if (nvd != env.end()) {
    vis.notes.push_back(
        fmt::format("NVIDIA_VISIBLE_DEVICES={} is read by the NVIDIA container runtime when a container starts; "
                    "inside the container the GPUs listed here are already the filtered set",
                    nvd->second));
  }
  if (cvd == env.end()) {
    for (const probe::GpuInfo& g : node_gpus) vis.node_indices.push_back(g.index);
    return vis;
  }
  vis.setting = cvd->second;
  if (Trim(cvd->second).empty()) return vis;  // set but empty: no GPU
  std::vector<std::string> entries = Split(cvd->second);
  std::set<int> seen;
  for (size_t pos = 0; pos < entries.size(); ++pos) {
    const std::string& e = entries[pos];
    int found = -1;
    std::string why;
    if (AllDigits(e)) {
      int idx = std::atoi(e.c_str());
      for (const probe::GpuInfo& g : node_gpus) {
        if (g.index == idx) found = g.index;
      }
      if (found < 0)
        why = fmt::format("names no GPU (the node has {}, indices 0..{})", node_gpus.size(),
                          node_gpus.empty() ? 0 : node_gpus.size() - 1);
    } else if (Lower(e).rfind("gpu-", 0) == 0) {
      std::string want = Lower(e);
      int matches = 0;
      for (const probe::GpuInfo& g : node_gpus) {
        if (Lower(g.uuid).rfind(want, 0) == 0) {
          found = g.index;
          ++matches;
        }
      }
      if (matches == 0) why = "matches no GPU UUID on this node";
      if (matches > 1) {
        found = -1;
        why = "is a UUID prefix shared by several GPUs";
      }
    } else if (Lower(e).rfind("mig-", 0) == 0) {
      vis.notes.push_back(fmt::format("'{}' is a MIG instance: preflight counts it as one GPU of its parent", e));
      why = "is a MIG instance preflight cannot resolve";
    } else {
      why = "is neither an index nor a GPU-<uuid>";
    }
    if (found >= 0 && seen.count(found)) {
      // A repeated device makes CUDA refuse the whole list (measured on an
      // H200 with driver 580: CUDA_VISIBLE_DEVICES=0,0 gives device_count 0).
      vis.problems.push_back(
          fmt::format("entry {} ('{}') repeats GPU {}: CUDA then sees no GPU at all", pos + 1, e, found));
      vis.truncated = true;
      vis.node_indices.clear();
      break;
    }
    if (found < 0) {
      vis.problems.push_back(fmt::format("entry {} ('{}') {}", pos + 1, e, why));
      vis.truncated = true;
      break;  // CUDA stops at the first invalid entry
    }
    seen.insert(found);
    vis.node_indices.push_back(found);
  }
  return vis;
}

}  // namespace faultline::preflight
