#include "diagnosis/cross_node.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace faultline::diagnosis {
namespace {

// Any fixed non-leap year: only differences and order matter.
constexpr int kYearWhenUnprinted = 2001;

std::optional<int64_t> EpochMicros(const parse::Timestamp& t) {
  if (!t.valid) return std::nullopt;
  tm x{};
  x.tm_year = (t.year != 0 ? t.year : kYearWhenUnprinted) - 1900;
  x.tm_mon = (t.month >= 1 && t.month <= 12 ? t.month : 1) - 1;
  x.tm_mday = t.day > 0 ? t.day : 1;
  x.tm_hour = t.hour;
  x.tm_min = t.minute;
  x.tm_sec = t.second;
  return static_cast<int64_t>(timegm(&x)) * 1000000 + t.micros;
}

void Shift(parse::Timestamp* t, int64_t micros) {
  auto at = EpochMicros(*t);
  if (!at) return;
  int64_t v = *at + micros;
  time_t secs = static_cast<time_t>(v >= 0 ? v / 1000000 : (v - 999999) / 1000000);
  tm x;
  gmtime_r(&secs, &x);
  bool had_year = t->year != 0;
  t->year = had_year ? x.tm_year + 1900 : 0;
  t->month = x.tm_mon + 1;
  t->day = x.tm_mday;
  t->hour = x.tm_hour;
  t->minute = x.tm_min;
  t->second = x.tm_sec;
  t->micros = static_cast<int>(v - static_cast<int64_t>(secs) * 1000000);
}

void ApplyIdentity(const input::FileIdentity& id, events::ProcessId* p) {
  std::string tag = id.Tag();
  if (tag.empty()) return;
  if (p->rank < 0 && id.rank >= 0) p->rank = id.rank;
  if (p->key.empty()) p->key = tag;
}

}  // namespace

void AlignAcrossNodes(const std::vector<input::InputFile>& files, Findings* f) {
  if (files.size() < 2) return;
  auto identity = [&](int file) -> const input::FileIdentity* {
    return file >= 0 && static_cast<size_t>(file) < files.size() ? &files[static_cast<size_t>(file)].identity : nullptr;
  };
  for (auto& e : f->events) {
    if (const auto* id = identity(e.where.file)) ApplyIdentity(*id, &e.process);
  }
  for (auto& ph : f->phases) {
    if (const auto* id = identity(ph.where.file)) ApplyIdentity(*id, &ph.process);
  }

  // Which files carry times, and each one's anchor.
  const size_t n = files.size();
  std::vector<bool> timed(n, false);
  for (const auto& e : f->events) {
    if (e.time.valid && e.where.file >= 0 && static_cast<size_t>(e.where.file) < n) timed[e.where.file] = true;
  }
  for (const auto& ph : f->phases) {
    if (ph.time.valid && ph.where.file >= 0 && static_cast<size_t>(ph.where.file) < n) timed[ph.where.file] = true;
  }
  std::vector<std::optional<int64_t>> init(n);
  for (const auto& ph : f->phases) {
    if (ph.phase != "distributed-init" || ph.fallback || ph.where.file < 0 || static_cast<size_t>(ph.where.file) >= n) continue;
    auto t = EpochMicros(ph.time);
    auto& a = init[static_cast<size_t>(ph.where.file)];
    if (t && (!a || *t < *a)) a = t;
  }
  size_t timed_files = 0, with_init = 0, with_start = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!timed[i]) continue;
    ++timed_files;
    with_init += init[i].has_value();
    with_start += files[i].identity.run_start_ms >= 0;
  }
  if (timed_files < 2) return;
  std::vector<std::optional<int64_t>> anchor(n);
  const char* how = nullptr;
  if (with_init == timed_files) {
    anchor = init;
    how = "its first distributed-init line (rendezvous / NCCL init)";
  } else if (with_start == timed_files) {
    for (size_t i = 0; i < n; ++i) {
      if (files[i].identity.run_start_ms >= 0) anchor[i] = files[i].identity.run_start_ms * 1000;
    }
    how = "its faultline run's start";
  } else {
    return;  // no event every node logs: times stay as printed
  }
  std::vector<int64_t> values;
  for (size_t i = 0; i < n; ++i) {
    if (timed[i] && anchor[i]) values.push_back(*anchor[i]);
  }
  std::sort(values.begin(), values.end());
  const int64_t median = values[(values.size() - 1) / 2];
  std::vector<int64_t> shift(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!timed[i] || !anchor[i]) continue;
    int64_t d = *anchor[i] - median;
    if (std::llabs(d) < static_cast<int64_t>(kSkewToleranceSeconds * 1e6)) continue;
    shift[i] = -d;
    f->warnings.push_back(
        fmt::format("clock skew: {} runs {:.1f} s {} the other nodes (anchored on {}); its times are "
                    "shifted by {:+.1f} s before ordering",
                    files[i].display, std::fabs(d / 1e6), d > 0 ? "ahead of" : "behind", how, -d / 1e6));
  }
  auto in = [&](int file) { return file >= 0 && static_cast<size_t>(file) < n ? shift[file] : 0; };
  for (auto& e : f->events) {
    if (int64_t s = in(e.where.file)) Shift(&e.time, s);
  }
  for (auto& ph : f->phases) {
    if (int64_t s = in(ph.where.file)) Shift(&ph.time, s);
  }
}

}  // namespace faultline::diagnosis
