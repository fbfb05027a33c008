#include "supervise/monitor.h"

namespace faultline::supervise {

Monitor::Monitor(const StallRules& rules, probe::ProcFs* fs, probe::Clock* clock, probe::GpuUsageSource* gpu,
                 MonitorOptions options)
    : rules_(rules),
      clock_(clock),
      gpu_(gpu),
      options_(std::move(options)),
      sampler_(fs),
      extractor_(rules),
      progress_(rules.progress) {
  for (int64_t pid : options_.roots) sampler_.AddRoot(pid);
  if (!options_.log_path.empty()) log_ = std::make_unique<probe::LogFollower>(options_.log_path, clock_);
  if (options_.watch_caches) caches_ = std::make_unique<probe::CacheDirWatcher>(rules.cache_dirs, clock_);
  if (!options_.root_cmdline.empty()) extractor_.set_root_cmdline(options_.root_cmdline);
}

void Monitor::PollLog(const std::function<void(std::string_view)>& on_line) {
  if (log_) log_->Poll(on_line);
}

const probe::LiveSample& Monitor::Tick(const std::function<void(std::string_view)>& on_line, bool detail) {
  probe::LiveSample s;
  if (log_) {
    log_->Poll(on_line);
    s.log = log_->state();
  }
  s.time = clock_->MonotonicSeconds();
  s.wall_millis = clock_->WallMillis();
  s.tree = sampler_.Sample(detail);
  if (caches_) s.caches = caches_->Poll();
  s.gpu = gpu_ ? gpu_->Sample() : probe::NoGpuSource().Sample();
  progress_.Update(s);
  window_.push_back(std::move(s));
  // Keep what classification needs: the window, and never fewer than 2.
  double keep = std::max(rules_.window_seconds, 2.0);
  while (window_.size() > 2 && (window_.back().time - window_.front().time > keep || window_.size() > 3600)) {
    window_.pop_front();
  }
  return window_.back();
}

double Monitor::SecondsSinceProgress() const {
  if (window_.empty()) return 0;
  return window_.back().time - progress_.last_progress_time();
}

FeatureSet Monitor::Features(double seconds) const {
  std::vector<const probe::LiveSample*> w;
  double from = seconds < 0 ? -1e18 : window_.back().time - seconds;
  for (const auto& s : window_) {
    if (s.time >= from) w.push_back(&s);
  }
  if (w.size() < 2 && window_.size() >= 2) w.insert(w.begin(), &window_[window_.size() - 2]);
  return extractor_.Compute(w, clock_->MonotonicSeconds());
}

StallDiagnosis Monitor::DiagnoseStall(const StackReport* stacks) const {
  // Classify on what happened since progress stopped (within the window).
  double since = SecondsSinceProgress();
  FeatureSet f = Features(since > 0 ? std::min(since, rules_.window_seconds) : -1);
  if (stacks != nullptr) {
    if (!stacks->phase.empty()) f.SetText("stack_phase", stacks->phase);
    std::string where;
    for (const auto& g : stacks->groups) where += (where.empty() ? "" : "; ") + g;
    if (!where.empty()) f.SetText("stack_where", where);
    f.SetText("stack_evidence", stacks->evidence);
  }
  StallDiagnosis d = Classify(rules_, f);
  d.stalled_for_seconds = since;
  if (stacks != nullptr) d.stacks = *stacks;
  return d;
}

std::string Monitor::Phase() const {
  if (window_.empty() || !window_.back().log) return "";
  return extractor_.PhaseOf(window_.back().log->tail);
}

std::map<int64_t, double> Monitor::CpuPercent() const {
  std::map<int64_t, double> out;
  if (window_.size() < 2) return out;
  const auto& a = window_[window_.size() - 2];
  const auto& b = window_.back();
  double dt = b.time - a.time;
  std::map<std::pair<int64_t, uint64_t>, double> before;
  for (const auto& p : a.tree.processes) before[{p.pid, p.start_time_ticks}] = p.cpu_seconds;
  for (const auto& p : b.tree.processes) {
    auto it = before.find({p.pid, p.start_time_ticks});
    out[p.pid] = (it != before.end() && dt > 0) ? (p.cpu_seconds - it->second) / dt * 100.0 : 0;
  }
  return out;
}

}  // namespace faultline::supervise
