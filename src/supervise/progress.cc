#include "supervise/progress.h"

#include <fmt/format.h>

#include <cstdlib>

#include "supervise/features.h"

namespace faultline::supervise {

ProgressTracker::Totals ProgressTracker::Measure(const probe::LiveSample& s) {
  Totals t;
  t.log_bytes = s.log ? s.log->bytes : 0;
  std::map<std::pair<int64_t, uint64_t>, Counters> counters;
  for (const auto& p : s.tree.processes) {
    t.rss += p.rss_bytes;
    Counters c;
    c.read = p.io ? p.io->read_bytes : 0;
    c.write_bytes = p.io ? p.io->write_bytes : 0;
    c.wchar = p.io ? p.io->wchar : 0;
    for (const auto& w : p.weight_files) c.pos += std::max<int64_t>(0, w.pos);
    auto key = std::make_pair(p.pid, p.start_time_ticks);
    counters[key] = c;
    auto it = last_counters_.find(key);
    if (it != last_counters_.end()) {
      const Counters& b = it->second;
      if (c.read > b.read) read_accum_ += static_cast<int64_t>(c.read - b.read);
      if (c.pos > b.pos) read_accum_ += c.pos - b.pos;
      // Bytes reaching storage, or written by write() (page cache, pipes,
      // sockets): the larger of the two, so one write is counted once.
      uint64_t dw = c.write_bytes > b.write_bytes ? c.write_bytes - b.write_bytes : 0;
      uint64_t dc = c.wchar > b.wchar ? c.wchar - b.wchar : 0;
      write_accum_ += static_cast<int64_t>(std::max(dw, dc));
    }
  }
  last_counters_ = std::move(counters);
  t.read_bytes = read_accum_;
  t.write_bytes = write_accum_;
  for (const auto& d : s.gpu.devices) {
    t.gpu += std::max<int64_t>(0, d.memory_used_bytes);
    t.gpu_util = std::max(t.gpu_util, d.utilization_percent);
  }
  for (const auto& c : s.caches) t.cache += c.bytes;
  return t;
}

std::vector<std::string> ProgressTracker::Update(const probe::LiveSample& s) {
  Totals now = Measure(s);
  std::set<std::pair<int64_t, uint64_t>> members;
  for (const auto& p : s.tree.processes) {
    if (p.state != 'Z') members.insert({p.pid, p.start_time_ticks});
  }
  std::vector<std::string> reasons;
  if (!started_) {
    reasons.push_back("started");
  } else {
    if (now.log_bytes - baseline_.log_bytes >= t_.log_bytes) {
      reasons.push_back(fmt::format("log +{}", HumanBytes(static_cast<double>(now.log_bytes - baseline_.log_bytes))));
    }
    if (now.read_bytes - baseline_.read_bytes >= t_.read_bytes) {
      reasons.push_back(
          fmt::format("read +{}", HumanBytes(static_cast<double>(now.read_bytes - baseline_.read_bytes))));
    }
    if (now.write_bytes - baseline_.write_bytes >= t_.write_bytes) {
      reasons.push_back(
          fmt::format("written +{}", HumanBytes(static_cast<double>(now.write_bytes - baseline_.write_bytes))));
    }
    if (now.gpu_util >= 0 && baseline_.gpu_util >= 0 &&
        std::abs(now.gpu_util - baseline_.gpu_util) >= t_.gpu_util_change) {
      reasons.push_back(fmt::format("GPU utilisation {}% -> {}%", baseline_.gpu_util, now.gpu_util));
    }
    if (std::llabs(now.rss - baseline_.rss) >= t_.rss_bytes) {
      reasons.push_back(fmt::format("RSS {}", HumanBytes(static_cast<double>(now.rss - baseline_.rss))));
    }
    if (std::llabs(now.gpu - baseline_.gpu) >= t_.gpu_memory_bytes) {
      reasons.push_back(fmt::format("GPU memory {}", HumanBytes(static_cast<double>(now.gpu - baseline_.gpu))));
    }
    if (std::llabs(now.cache - baseline_.cache) >= t_.cache_bytes) {
      reasons.push_back(fmt::format("compile cache {}", HumanBytes(static_cast<double>(now.cache - baseline_.cache))));
    }
    if (t_.tree_change && members != members_) reasons.push_back("processes changed");
  }
  members_ = std::move(members);
  if (!reasons.empty()) {
    started_ = true;
    baseline_ = now;
    last_progress_time_ = s.time;
    last_reasons_ = reasons;
  }
  return reasons;
}

}  // namespace faultline::supervise
