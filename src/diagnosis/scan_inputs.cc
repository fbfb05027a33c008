#include "diagnosis/scan_inputs.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "diagnosis/block_pipeline.h"
#include "diagnosis/log_scanner.h"
#include "diagnosis/ranker.h"

namespace faultline::diagnosis {

void MergeFindings(Findings&& from, Findings* into) {
  into->total_lines += from.total_lines;
  for (auto& [key, st] : from.processes) {
    auto it = into->processes.find(key);
    if (it == into->processes.end()) {
      into->processes.emplace(key, std::move(st));
      continue;
    }
    it->second.lines += st.lines;
    it->second.errors += st.errors;
    it->second.last_line = std::move(st.last_line);
  }
  for (auto& e : from.events) {
    if (into->events.size() >= Findings::kMaxEvents) {
      ++into->events_dropped;
      continue;
    }
    into->events.push_back(std::move(e));
  }
  into->events_dropped += from.events_dropped;
  for (auto& ph : from.phases) {  // the first mark per (process, phase) over all files, and the latest
    auto same = std::find_if(into->phases.begin(), into->phases.end(),
                             [&](const PhaseHit& h) { return h.SameSlot(ph); });
    if (same == into->phases.end()) {
      into->phases.push_back(std::move(ph));
    } else if (ph.last.line > 0) {
      same->last = ph.last;
      same->last_time = ph.last_time;
    } else if (!IsTracebackFrame(ph.where.text)) {  // a frame is no later progress
      same->last = ph.where;
      same->last_time = ph.time;
    }
  }
  for (auto& stop : from.stops) {  // the earliest kept
    if (into->stops.size() < Findings::kMaxStops) into->stops.push_back(std::move(stop));
  }
  // Latest progress / completion per process, in causal order (timestamps across files).
  auto latest = [](std::map<std::string, ProgressMark, std::less<>>& to, auto& marks) {
    for (auto& [key, mark] : marks) {
      auto it = to.find(key);
      if (it == to.end() || CausallyBefore(it->second.where, it->second.time, mark.where, mark.time, true)) {
        to[key] = std::move(mark);
      }
    }
  };
  latest(into->last_progress, from.last_progress);
  latest(into->last_generic_progress, from.last_generic_progress);
  latest(into->last_completion, from.last_completion);
  for (auto& [key, value] : from.progress_counters) into->progress_counters[key] = value;
  for (auto& [key, totals] : from.totals_reached) into->totals_reached[key].insert(totals.begin(), totals.end());
  for (auto& fact : from.facts) {  // the latest value, in first-seen order (no structured binding: clang 14,
                                   // the fuzz build's compiler, cannot capture one in a lambda)
    const auto& name = fact.first;
    auto it = std::find_if(into->facts.begin(), into->facts.end(), [&](const auto& f) { return f.first == name; });
    if (it == into->facts.end())
      into->facts.emplace_back(name, std::move(fact.second));
    else
      it->second = std::move(fact.second);
  }
  for (auto& in : from.inputs) into->inputs.push_back(std::move(in));
  for (auto& w : from.warnings) into->warnings.push_back(std::move(w));
  if (from.last_line) into->last_line = std::move(from.last_line);
  into->reversed_files.insert(from.reversed_files.begin(), from.reversed_files.end());
  for (auto& [file, unfolding] : from.unfolded_files) into->unfolded_files[file] = std::move(unfolding);
}

Status ScanInputs(const std::vector<input::InputFile>& files, const rules::RuleSet& rules,
                  const parse::WrapperSet* wrappers, Findings* findings, unsigned threads) {
  const bool multi = files.size() > 1;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, files.size()));
  if (threads <= 1 || findings->miner) {
    for (size_t i = 0; i < files.size(); ++i) {
      Status s = ScanInput(files[i], static_cast<int>(i), multi, rules, wrappers, findings);
      if (!s.ok()) {
        if (!multi) return s;
        findings->warnings.push_back(s.message() + " (skipped)");
      }
    }
    return Status::Ok();
  }

  struct Slot {
    std::optional<Findings> found;
    Status status;
    bool done = false;
  };
  std::vector<Slot> slots(files.size());
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0;    // the next file to scan
  size_t merged = 0;  // files [0, merged) are in *findings
  // Workers run at most this far ahead of the merge: bounds the memory held
  // in unmerged Findings.
  const size_t window = 4 * threads;

  // The cores left over when there are fewer files than cores scan blocks
  // of those files; otherwise each file is read and scanned by its worker.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int per_file_scan_threads = static_cast<int>(cores / threads) - 1;
  auto worker = [&] {
    SetPipelineScanThreads(per_file_scan_threads);
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return next >= files.size() || next < merged + window; });
        if (next >= files.size()) return;
        i = next++;
      }
      Findings local;
      Status s = ScanInput(files[i], static_cast<int>(i), true, rules, wrappers, &local);
      std::unique_lock<std::mutex> lock(mu);
      slots[i].found = std::move(local);
      slots[i].status = std::move(s);
      slots[i].done = true;
      // Whoever completes the frontier merges it (one merger at a time: under
      // the lock).
      while (merged < files.size() && slots[merged].done) {
        Slot& slot = slots[merged];
        if (slot.status.ok()) {
          MergeFindings(std::move(*slot.found), findings);
        } else {
          findings->warnings.push_back(slot.status.message() + " (skipped)");
        }
        slot.found.reset();
        ++merged;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return Status::Ok();
}

}  // namespace faultline::diagnosis
