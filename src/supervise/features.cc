#include "supervise/features.h"

#include <fmt/format.h>

#include <cmath>

namespace faultline::supervise {

void FeatureSet::SetNumber(const std::string& name, double value, std::string display) {
  Feature f;
  f.number = value;
  if (display.empty()) {
    display = (std::fabs(value - std::round(value)) < 1e-9) ? fmt::format("{}", static_cast<int64_t>(std::round(value)))
                                                            : fmt::format("{:.1f}", value);
  }
  f.display = std::move(display);
  features_[name] = std::move(f);
}

void FeatureSet::SetText(const std::string& name, std::string value) {
  Feature f;
  f.is_number = false;
  f.display = value.empty() ? "(none)" : value;
  f.text = std::move(value);
  features_[name] = std::move(f);
}

const Feature* FeatureSet::Find(const std::string& name) const {
  auto it = features_.find(name);
  return it == features_.end() ? nullptr : &it->second;
}

double FeatureSet::Number(const std::string& name) const {
  const Feature* f = Find(name);
  return f && f->is_number ? f->number : 0;
}

std::string FeatureSet::Display(const std::string& name) const {
  const Feature* f = Find(name);
  return f ? f->display : "";
}

const std::set<std::string>& KnownFeatures() {
  static const std::set<std::string> kNames = {"processes",
                                               "write_rate",
                                               "stack_phase",
                                               "stack_where",
                                               "stack_evidence",
                                               "busy_processes",
                                               "max_cpu_percent",
                                               "total_cpu_percent",
                                               "busiest_pid",
                                               "busy_list",
                                               "disk_wait_threads",
                                               "disk_wait_fraction",
                                               "disk_wait_fraction_percent",
                                               "top_wchan",
                                               "socket_wait_threads",
                                               "poll_wait_threads",
                                               "futex_wait_threads",
                                               "sleep_wait_threads",
                                               "pipe_wait_threads",
                                               "tcp_listening",
                                               "tcp_connecting",
                                               "tcp_established",
                                               "weight_files_open",
                                               "weight_files",
                                               "weight_read_progress",
                                               "weight_read_rate",
                                               "storage_read_rate",
                                               "any_read_rate",
                                               "rss_total",
                                               "rss_growth_bytes",
                                               "rss_growth",
                                               "cache_bytes",
                                               "cache_files",
                                               "cache_growth_bytes",
                                               "cache_growth",
                                               "caches",
                                               "compile_workers",
                                               "gpu_data",
                                               "gpu_note",
                                               "gpu_util_max",
                                               "gpu_memory_used",
                                               "gpu_memory_change",
                                               "log_idle_seconds",
                                               "log_idle",
                                               "log_last_line",
                                               "log_last_phase",
                                               "log_lines",
                                               "root_cmdline",
                                               "py_spy",
                                               "window_seconds"};
  return kNames;
}

std::string FillTemplate(const std::string& text, const FeatureSet& features) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    std::string name = text.substr(open + 1, close - open - 1);
    if (const Feature* f = features.Find(name)) {
      out += f->display;
    } else {
      out.append(text, open, close - open + 1);
    }
    i = close + 1;
  }
  out.append(text, i, std::string::npos);
  return out;
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = std::fabs(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  const char* sign = bytes < 0 ? "-" : "";
  if (u == 0) return fmt::format("{}{:.0f} B", sign, v);
  return fmt::format("{}{:.1f} {}", sign, v, units[u]);
}

std::string HumanSeconds(double s) {
  if (s < 0) s = 0;
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 120) return fmt::format("{:.0f} s", s);
  int64_t total = static_cast<int64_t>(s);
  if (total < 3600) return fmt::format("{} min {} s", total / 60, total % 60);
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

}  // namespace faultline::supervise
