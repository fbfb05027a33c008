#include "web/api.h"

#include <algorithm>

#include <fmt/format.h>

namespace faultline::web {
namespace {

constexpr int64_t kTailBytes = 8 << 20;     // a plain tail reads at most this much
constexpr int64_t kSearchBytes = 64 << 20;  // a filtered page scans at most this much
constexpr int64_t kIndexStepBytes = 16 << 20;

nlohmann::json LinesJson(const std::vector<LogLine>& lines, LineIndex* index, bool contiguous) {
  nlohmann::json out = nlohmann::json::array();
  std::optional<int64_t> first;
  if (!lines.empty() && index) first = index->LineAt(lines.front().offset);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<int64_t> n;
    if (i == 0 || !index) {
      n = first;
    } else if (contiguous) {
      n = first ? std::optional<int64_t>(*first + static_cast<int64_t>(i)) : std::nullopt;
    } else {
      n = index->LineAt(lines[i].offset);
    }
    out.push_back({{"offset", lines[i].offset},
                   {"n", n ? nlohmann::json(*n) : nlohmann::json(nullptr)},
                   {"level", LineLevelName(lines[i].level)},
                   {"text", lines[i].text}});
  }
  return out;
}

}  // namespace

Result<nlohmann::json> LogWindowJson(const std::string& path, LineIndex* index, const LogQuery& q) {
  if (index) (void)index->Update(kIndexStepBytes);  // catch up with a growing log, a bounded step
  WindowLimits limits;
  limits.max_lines = std::clamp<size_t>(q.lines, 1, 5000);
  limits.min_level = q.min_level;
  limits.query = q.query;
  bool filtered = !q.query.empty() || q.min_level > LineLevel::kDebug;
  limits.max_bytes = filtered ? kSearchBytes : kTailBytes;
  nlohmann::json out;
  LogWindow w;
  if (q.line > 0) {
    std::optional<int64_t> at = index ? index->OffsetOfLine(q.line) : std::nullopt;
    if (!at) {
      return Status::InvalidArgument(fmt::format("{}: line {} is not indexed yet ({} lines so far)", path, q.line,
                                                 index ? index->complete_lines() : 0));
    }
    size_t half = limits.max_lines / 2;
    WindowLimits before = limits;
    before.max_lines = std::max<size_t>(half, 1);
    auto back = ReadBackward(path, *at, before);
    if (!back.ok()) return back.status();
    WindowLimits after = limits;
    after.max_lines = std::max<size_t>(limits.max_lines - back->lines.size(), 1);
    auto fwd = ReadForward(path, *at, after);
    if (!fwd.ok()) return fwd.status();
    w = std::move(*back);
    w.lines.insert(w.lines.end(), std::make_move_iterator(fwd->lines.begin()), std::make_move_iterator(fwd->lines.end()));
    w.end = fwd->end;
    w.size = fwd->size;
    out["target_offset"] = *at;
  } else if (q.after >= 0) {
    auto fwd = ReadForward(path, q.after, limits, /*include_partial=*/false);
    if (!fwd.ok()) return fwd.status();
    w = std::move(*fwd);
  } else {
    auto back = ReadBackward(path, q.before, limits);
    if (!back.ok()) return back.status();
    w = std::move(*back);
  }
  out["path"] = path;
  out["size"] = w.size;
  out["start"] = w.start;
  out["end"] = w.end;
  out["reached_start"] = w.reached_start;
  // Where to ask for appended lines (`after`): a last line without its
  // newline yet is asked for again, whole.
  out["resume"] = w.partial_last && !w.lines.empty() && q.line == 0 && q.after < 0 ? w.lines.back().offset : w.end;
  out["indexed_bytes"] = index ? index->indexed_bytes() : 0;
  out["lines"] = LinesJson(w.lines, index, !filtered);
  return out;
}

}  // namespace faultline::web
