#include "supervise/feature_extractor.h"

#include <fmt/format.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace faultline::supervise {
namespace {

using probe::LiveSample;
using probe::ProcessSample;

using ProcKey = std::pair<int64_t, uint64_t>;  // pid, start time
ProcKey KeyOf(const ProcessSample& p) { return {p.pid, p.start_time_ticks}; }

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// GPU memory used by the tree (per-process data when the source has it,
// else the devices' totals).
int64_t GpuMemory(const LiveSample& s, const std::set<int64_t>& pids) {
  int64_t sum = 0;
  bool any_process = false;
  for (const auto& p : s.gpu.processes) {
    if (pids.count(p.pid) && p.memory_used_bytes > 0) {
      sum += p.memory_used_bytes;
      any_process = true;
    }
  }
  if (any_process) return sum;
  for (const auto& d : s.gpu.devices) sum += std::max<int64_t>(0, d.memory_used_bytes);
  return sum;
}

}  // namespace

bool InPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string p(path);
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find(':', i);
    if (j == std::string::npos) j = p.size();
    std::string dir = p.substr(i, j - i);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    i = j + 1;
  }
  return false;
}

FeatureExtractor::FeatureExtractor(const StallRules& rules)
    : rules_(rules), log_phase_(LogPhase::BuiltinPhaseRules(), rules.phase_markers), py_spy_(InPath("py-spy")) {
  for (const auto& w : rules.compile_workers) compile_workers_.push_back(std::make_unique<RE2>(w));
}

FeatureExtractor::~FeatureExtractor() = default;

std::string FeatureExtractor::PhaseOf(const std::deque<std::string>& tail) const { return log_phase_.PhaseOf(tail); }

bool FeatureExtractor::IsCompileWorker(const ProcessSample& p) const {
  for (const auto& re : compile_workers_) {
    if (RE2::PartialMatch(p.cmdline, *re) || RE2::PartialMatch(p.comm, *re)) return true;
  }
  return false;
}

FeatureSet FeatureExtractor::Compute(const std::vector<const LiveSample*>& window, double now) const {
  FeatureSet f;
  const LiveSample& last = *window.back();
  const LiveSample& first = *window.front();
  double span = last.time - first.time;
  f.SetNumber("window_seconds", span, HumanSeconds(span));

  // Where each process of the last sample was first seen in the window.
  std::map<ProcKey, const ProcessSample*> earliest;
  std::map<ProcKey, double> earliest_time;
  for (const LiveSample* s : window) {
    for (const auto& p : s->tree.processes) {
      if (earliest.emplace(KeyOf(p), &p).second) earliest_time[KeyOf(p)] = s->time;
    }
  }

  struct Cpu {
    const ProcessSample* p;
    double percent;
  };
  std::vector<Cpu> cpu;
  double total_cpu = 0;
  double storage_read = 0, weight_read = 0, write_rate = 0;
  std::set<int64_t> pids;
  for (const auto& p : last.tree.processes) {
    pids.insert(p.pid);
    const ProcessSample* e = earliest[KeyOf(p)];
    double dt = last.time - earliest_time[KeyOf(p)];
    double percent = dt > 0 ? (p.cpu_seconds - e->cpu_seconds) / dt * 100.0 : 0;
    if (p.state == 'Z') percent = 0;
    cpu.push_back({&p, percent});
    total_cpu += percent;
    if (dt > 0 && p.io && e->io && p.io->read_bytes >= e->io->read_bytes) {
      storage_read += static_cast<double>(p.io->read_bytes - e->io->read_bytes) / dt;
    }
    if (dt > 0 && p.io && e->io) {
      uint64_t dw = p.io->write_bytes > e->io->write_bytes ? p.io->write_bytes - e->io->write_bytes : 0;
      uint64_t dc = p.io->wchar > e->io->wchar ? p.io->wchar - e->io->wchar : 0;
      write_rate += static_cast<double>(std::max(dw, dc)) / dt;
    }
    for (const auto& w : p.weight_files) {
      if (w.pos < 0 || dt <= 0) continue;
      for (const auto& ew : e->weight_files) {
        if (ew.path == w.path && ew.pos >= 0 && w.pos > ew.pos) weight_read += static_cast<double>(w.pos - ew.pos) / dt;
      }
    }
  }
  std::sort(cpu.begin(), cpu.end(), [](const Cpu& a, const Cpu& b) { return a.percent > b.percent; });
  // Busy: using most of a core, or runnable (state R) in most samples while
  // getting a fair share of a loaded machine's CPU (a spin loop on a busy
  // host is R all the time but gets less than a core).
  std::map<ProcKey, std::pair<int, int>> runnable;  // R samples, samples
  for (const LiveSample* s : window) {
    for (const auto& p : s->tree.processes) {
      auto& r = runnable[KeyOf(p)];
      r.first += p.state == 'R';
      ++r.second;
    }
  }
  int busy = 0;
  for (const auto& c : cpu) {
    const auto& r = runnable[KeyOf(*c.p)];
    double r_fraction = r.second > 0 ? static_cast<double>(r.first) / r.second : 0;
    busy += c.percent >= rules_.busy_cpu_percent || (r_fraction >= rules_.busy_runnable_fraction && r.second >= 2 &&
                                                     c.percent >= rules_.busy_runnable_cpu_percent);
  }
  f.SetNumber("processes", static_cast<double>(last.tree.processes.size()));
  f.SetNumber("busy_processes", busy);
  double max_cpu = cpu.empty() ? 0 : cpu[0].percent;
  f.SetNumber("max_cpu_percent", std::round(max_cpu));
  f.SetNumber("total_cpu_percent", std::round(total_cpu));
  f.SetNumber("busiest_pid", cpu.empty() ? 0 : static_cast<double>(cpu[0].p->pid));
  std::string busy_list;
  for (size_t i = 0; i < cpu.size() && i < 4; ++i) {
    const ProcessSample& p = *cpu[i].p;
    if (!busy_list.empty()) busy_list += "; ";
    busy_list += fmt::format("pid {} {} {:.0f}% CPU state {} RSS {}", p.pid, p.comm, cpu[i].percent, p.state,
                             HumanBytes(static_cast<double>(p.rss_bytes)));
  }
  if (cpu.size() > 4) busy_list += fmt::format("; +{} more", cpu.size() - 4);
  f.SetText("busy_list", busy_list);

  // Thread states and wait channels (last sample), D-state share (window).
  int disk_samples = 0;
  for (const LiveSample* s : window) {
    bool any_d = false;
    for (const auto& p : s->tree.processes) any_d |= p.state == 'D' || p.thread_states.disk > 0;
    disk_samples += any_d;
  }
  double disk_fraction = static_cast<double>(disk_samples) / static_cast<double>(window.size());
  f.SetNumber("disk_wait_fraction", disk_fraction, fmt::format("{:.2f}", disk_fraction));
  f.SetText("disk_wait_fraction_percent", fmt::format("{:.0f}%", disk_fraction * 100));
  int disk_threads = 0;
  std::map<std::string, int> wchan;
  for (const auto& p : last.tree.processes) {
    disk_threads += p.thread_states.sampled ? p.thread_states.disk : (p.state == 'D');
    for (const auto& [name, n] : p.thread_states.wchan) wchan[name] += n;
  }
  f.SetNumber("disk_wait_threads", disk_threads);
  std::string top_wchan = "(none)";
  int top_n = 0;
  for (const auto& [name, n] : wchan) {
    if (n > top_n) {
      top_n = n;
      top_wchan = fmt::format("{} x{}", name, n);
    }
  }
  f.SetText("top_wchan", top_wchan);
  // The compiler's clone suffixes (poll_schedule_timeout.constprop.0,
  // .isra.0, .part.0) vary between kernel builds: compare base names.
  std::map<std::string, int, std::less<>> by_base;
  for (const auto& [name, n] : wchan) by_base[name.substr(0, name.find('.'))] += n;
  for (const char* group : {"socket", "poll", "futex", "sleep", "pipe"}) {
    int n = 0;
    auto it = rules_.wait_channels.find(group);
    if (it != rules_.wait_channels.end()) {
      for (const auto& name : it->second) {
        auto w = by_base.find(std::string_view(name).substr(0, name.find('.')));
        if (w != by_base.end()) n += w->second;
      }
    }
    f.SetNumber(fmt::format("{}_wait_threads", group), n);
  }
  int listening = 0, connecting = 0, established = 0;
  for (const auto& p : last.tree.processes) {
    listening += p.tcp_listening;
    connecting += p.tcp_connecting;
    established += p.tcp_established;
  }
  f.SetNumber("tcp_listening", listening);
  f.SetNumber("tcp_connecting", connecting);
  f.SetNumber("tcp_established", established);

  // Weight files.
  std::map<std::string, probe::WeightFile> files;
  for (const auto& p : last.tree.processes) {
    for (const auto& w : p.weight_files) {
      auto& slot = files[w.path];
      slot.path = w.path;
      slot.size = w.size;
      slot.pos = std::max(slot.pos, w.pos);
      slot.mapped |= w.mapped;
    }
  }
  f.SetNumber("weight_files_open", static_cast<double>(files.size()));
  std::string names;
  int64_t read_sum = 0, size_sum = 0;
  int shown = 0;
  for (const auto& [path, w] : files) {
    if (w.pos >= 0) {
      read_sum += w.pos;
      size_sum += w.size;
    }
    if (shown++ < 3) {
      if (!names.empty()) names += ", ";
      std::string how =
          w.pos >= 0 && w.size > 0
              ? fmt::format("read to {:.0f}%", 100.0 * static_cast<double>(w.pos) / static_cast<double>(w.size))
              : "mapped";
      names += fmt::format("{} ({}, {})", Basename(path), HumanBytes(static_cast<double>(w.size)), how);
    }
  }
  if (files.size() > 3) names += fmt::format(", +{} more", files.size() - 3);
  f.SetText("weight_files", names);
  f.SetText("weight_read_progress",
            size_sum > 0
                ? fmt::format("{} of {} ({:.0f}%) through open file descriptors",
                              HumanBytes(static_cast<double>(read_sum)), HumanBytes(static_cast<double>(size_sum)),
                              100.0 * static_cast<double>(read_sum) / static_cast<double>(size_sum))
                : (files.empty() ? "" : "mapped files only (progress shows as RSS)"));
  f.SetNumber("weight_read_rate", weight_read, HumanBytes(weight_read));
  f.SetNumber("storage_read_rate", storage_read, HumanBytes(storage_read));
  double any_read = std::max(weight_read, storage_read);
  f.SetNumber("any_read_rate", any_read, HumanBytes(any_read));

  // Memory.
  auto rss_of = [](const LiveSample& s) {
    int64_t sum = 0;
    for (const auto& p : s.tree.processes) sum += p.rss_bytes;
    return sum;
  };
  double rss_last = static_cast<double>(rss_of(last));
  double rss_growth = rss_last - static_cast<double>(rss_of(first));
  f.SetNumber("rss_total", rss_last, HumanBytes(rss_last));
  f.SetNumber("rss_growth_bytes", rss_growth, HumanBytes(rss_growth));
  f.SetText("rss_growth", (rss_growth >= 0 ? "+" : "") + HumanBytes(rss_growth));

  // Compile caches and workers.
  auto cache_total = [](const LiveSample& s) {
    int64_t bytes = 0, n = 0;
    for (const auto& c : s.caches) {
      bytes += c.bytes;
      n += c.files;
    }
    return std::make_pair(bytes, n);
  };
  auto [cache_bytes, cache_files] = cache_total(last);
  double cache_growth = static_cast<double>(cache_bytes - cache_total(first).first);
  f.SetNumber("cache_bytes", static_cast<double>(cache_bytes), HumanBytes(static_cast<double>(cache_bytes)));
  f.SetNumber("cache_files", static_cast<double>(cache_files));
  f.SetNumber("cache_growth_bytes", cache_growth, HumanBytes(cache_growth));
  f.SetText("cache_growth", HumanBytes(cache_growth));
  std::string caches;
  for (const auto& c : last.caches) {
    if (!caches.empty()) caches += ", ";
    caches += c.exists ? fmt::format("{} {} in {} files", c.path, HumanBytes(static_cast<double>(c.bytes)), c.files)
                       : fmt::format("{} absent", c.path);
  }
  f.SetText("caches", caches);
  int workers = 0;
  for (const auto& p : last.tree.processes) workers += IsCompileWorker(p);
  f.SetNumber("compile_workers", workers);

  // GPUs.
  f.SetNumber("gpu_data", last.gpu.available ? 1 : 0);
  f.SetText("gpu_note", last.gpu.available ? last.gpu.source : last.gpu.note);
  int util_max = -1;
  for (const LiveSample* s : window) {
    for (const auto& d : s->gpu.devices) util_max = std::max(util_max, d.utilization_percent);
  }
  f.SetNumber("gpu_util_max", util_max, util_max < 0 ? "unknown" : fmt::format("{}", util_max));
  double gpu_mem = static_cast<double>(GpuMemory(last, pids));
  double gpu_change = std::fabs(gpu_mem - static_cast<double>(GpuMemory(first, pids)));
  f.SetNumber("gpu_memory_used", gpu_mem, last.gpu.available ? HumanBytes(gpu_mem) : "unknown");
  f.SetNumber("gpu_memory_change", gpu_change, last.gpu.available ? HumanBytes(gpu_change) : "unknown");

  // The log.
  double idle = now - first.time;
  std::string last_line, phase;
  int64_t lines = 0;
  if (last.log) {
    if (last.log->last_output_time) idle = now - *last.log->last_output_time;
    last_line = last.log->last_line;
    phase = PhaseOf(last.log->tail);
    lines = last.log->lines;
  }
  f.SetNumber("log_idle_seconds", idle, HumanSeconds(idle));
  f.SetText("log_idle", HumanSeconds(idle));
  f.SetText("log_last_line", last_line.size() > 300 ? last_line.substr(0, 300) + "..." : last_line);
  f.SetText("log_last_phase", phase.empty() ? "unknown" : phase);
  f.SetNumber("log_lines", static_cast<double>(lines));

  std::string root = root_cmdline_;
  if (root.empty()) {
    for (const auto& p : last.tree.processes) {
      if (p.depth == 0) {
        root = p.cmdline;
        break;
      }
    }
  }
  f.SetText("root_cmdline", root);
  f.SetNumber("py_spy", py_spy_ ? 1 : 0);
  f.SetNumber("write_rate", write_rate, HumanBytes(write_rate));
  // Set from the stacks when they were captured (Monitor::DiagnoseStall).
  f.SetText("stack_phase", "none");
  f.SetText("stack_where", "no stacks");
  f.SetText("stack_evidence", "");
  return f;
}

}  // namespace faultline::supervise
