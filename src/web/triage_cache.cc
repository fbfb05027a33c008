#include "web/triage_cache.h"

#include <chrono>

#include "diagnosis/triage.h"
#include "report/printers.h"

namespace faultline::web {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TriageCache::TriageCache(double min_interval_s) : min_interval_s_(min_interval_s) {
  worker_ = std::thread([this] { Work(); });
}

TriageCache::~TriageCache() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

TriageCache::Entry TriageCache::Get(const std::string& log_path, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = entries_[log_path];
  if (e.bytes != bytes && !e.pending) {
    auto last = last_run_.find(log_path);
    if (last == last_run_.end() || Now() - last->second >= min_interval_s_) {
      e.pending = true;
      queue_.emplace_back(log_path, bytes);
      cv_.notify_all();
    }
  }
  return e;
}

void TriageCache::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !running_; });
}

uint64_t TriageCache::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void TriageCache::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto [path, bytes] = queue_.front();
    queue_.pop_front();
    running_ = true;
    last_run_[path] = Now();
    lock.unlock();
    diagnosis::TriageOptions options;
    options.inputs = {path};
    nlohmann::json report;
    auto r = diagnosis::Triage(options);
    if (r.ok()) {
      report = report::ToJson(*r);
    } else {
      report = {{"error", r.status().message()}};
    }
    lock.lock();
    Entry& e = entries_[path];
    e.report = std::move(report);
    e.bytes = bytes;
    e.pending = false;
    ++generation_;
    running_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace faultline::web
