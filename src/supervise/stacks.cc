#include "supervise/stacks.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

namespace faultline::supervise {
namespace {

std::string Base(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The last path components that say where a frame is: "torch/distributed/distributed_c10d.py".
std::string ShortPath(const std::string& path) {
  size_t at = path.find("site-packages/");
  if (at != std::string::npos) return path.substr(at + 14);
  at = path.find("dist-packages/");
  if (at != std::string::npos) return path.substr(at + 14);
  return Base(path);
}

std::string RankList(const std::vector<const ProcessStacks*>& ps) {
  std::vector<int> ranks;
  for (const auto* p : ps) {
    if (p->rank.empty()) return "";
    try {
      ranks.push_back(std::stoi(p->rank));
    } catch (...) {
      return "";
    }
  }
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : std::to_string(ranks[i]));
    i = j + 1;
  }
  return (ranks.size() > 1 ? "ranks " : "rank ") + out;
}

}  // namespace

std::vector<ThreadStack> ParseStackDump(const std::string& text) {
  std::vector<ThreadStack> threads;
  std::istringstream in(text);
  std::string line;
  static const RE2 fh_thread(R"re(^(?:Current thread|Thread) (0x[0-9a-fA-F]+) \(most recent call first\):)re");
  static const RE2 fh_frame(R"re(^\s+File "(.*)", line (\d+) in (.+)$)re");
  static const RE2 spy_thread(R"re(^Thread (\S+) \([^)]*\)(?:: "(.*)")?)re");
  static const RE2 spy_frame(R"re(^\s+(\S.*) \((.*):(\d+)\)$)re");
  static const RE2 header(R"re(^faultline-stacks pid=)re");
  std::string id, name, file, func, lineno;
  while (std::getline(in, line)) {
    if (RE2::PartialMatch(line, header)) {
      threads.clear();  // a later dump replaces the earlier ones
      continue;
    }
    if (RE2::PartialMatch(line, fh_thread, &id)) {
      threads.push_back({id, {}});
      continue;
    }
    if (RE2::PartialMatch(line, spy_thread, &id, &name)) {
      threads.push_back({name.empty() ? id : fmt::format("{} {}", id, name), {}});
      continue;
    }
    if (threads.empty()) continue;
    if (RE2::FullMatch(line, fh_frame, &file, &lineno, &func)) {
      threads.back().frames.push_back({file, std::atoi(lineno.c_str()), func});
    } else if (RE2::FullMatch(line, spy_frame, &func, &file, &lineno)) {
      threads.back().frames.push_back({file, std::atoi(lineno.c_str()), func});
    }
  }
  return threads;
}

void ReadProcessPhase(const std::vector<StackPhase>& phases, ProcessStacks* p) {
  p->main_thread = -1;
  for (size_t i = 0; i < p->threads.size(); ++i) {
    const auto& f = p->threads[i].frames;
    if (!f.empty() && f.back().function == "<module>") {
      p->main_thread = static_cast<int>(i);
      break;
    }
  }
  if (p->main_thread < 0 && !p->threads.empty()) p->main_thread = 0;
  p->innermost = p->where = p->phase = p->phase_frame = "";
  if (p->main_thread < 0) return;
  const auto& main = p->threads[p->main_thread].frames;
  if (!main.empty()) {
    p->where = main.front().function;
    p->innermost = fmt::format("{} ({}:{})", main.front().function, ShortPath(main.front().file), main.front().line);
  }
  std::vector<std::unique_ptr<RE2>> res;
  for (const auto& ph : phases) res.push_back(std::make_unique<RE2>(ph.pattern));
  auto scan = [&](const std::vector<StackFrame>& frames) {
    for (const auto& fr : frames) {
      std::string key = fr.file + ":" + fr.function;
      for (size_t i = 0; i < phases.size(); ++i) {
        if (res[i]->ok() && RE2::PartialMatch(key, *res[i])) {
          p->phase = phases[i].phase;
          p->phase_frame = fmt::format("{} ({}:{})", fr.function, ShortPath(fr.file), fr.line);
          return true;
        }
      }
    }
    return false;
  };
  if (scan(main)) return;
  for (size_t i = 0; i < p->threads.size(); ++i) {
    if (static_cast<int>(i) != p->main_thread && scan(p->threads[i].frames)) return;
  }
}

void SummarizeStacks(const std::vector<StackPhase>& phases, StackReport* r) {
  r->groups.clear();
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ProcessStacks*>> by_where;
  for (const auto& p : r->processes) {
    if (p.threads.empty()) continue;
    std::string key = p.where.empty() ? "(no Python frame)" : p.where;
    if (!by_where.count(key)) order.push_back(key);
    by_where[key].push_back(&p);
  }
  for (const auto& key : order) {
    const auto& ps = by_where[key];
    std::string ranks = RankList(ps);
    std::string pids;
    for (const auto* p : ps) pids += (pids.empty() ? "" : ",") + std::to_string(p->pid);
    std::string who = ranks.empty() ? fmt::format("pid{} {}", ps.size() > 1 ? "s" : "", pids)
                                    : fmt::format("{} (pid{} {})", ranks, ps.size() > 1 ? "s" : "", pids);
    const ProcessStacks* first = ps.front();
    r->groups.push_back(fmt::format("{} in {}(){}{}", who, key,
                                    first->innermost.empty() ? "" : " at " + first->innermost,
                                    first->phase.empty() ? "" : " -> " + first->phase));
  }
  r->phase = r->class_id = r->evidence = "";
  for (const auto& ph : phases) {
    for (const auto& p : r->processes) {
      if (p.phase != ph.phase) continue;
      r->phase = ph.phase;
      r->class_id = ph.class_id;
      r->evidence = fmt::format("{} {} is in {} (frame {})", p.rank.empty() ? "pid" : "rank " + p.rank + ", pid", p.pid,
                                p.innermost, p.phase_frame);
      return;
    }
  }
}

nlohmann::json StacksJson(const StackReport& r) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& p : r.processes) {
    nlohmann::json threads = nlohmann::json::array();
    for (size_t i = 0; i < p.threads.size(); ++i) {
      nlohmann::json frames = nlohmann::json::array();
      for (const auto& f : p.threads[i].frames) {
        frames.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}});
      }
      threads.push_back({{"id", p.threads[i].id}, {"main", static_cast<int>(i) == p.main_thread}, {"frames", frames}});
    }
    procs.push_back({{"pid", p.pid},
                     {"rank", p.rank.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.rank)},
                     {"where", p.where},
                     {"innermost", p.innermost},
                     {"phase", p.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.phase)},
                     {"phase_frame", p.phase_frame},
                     {"capture_ms", static_cast<double>(static_cast<int64_t>(p.capture_ms * 10 + 0.5)) / 10},
                     {"threads", threads}});
  }
  return {{"source", r.source},     {"phase", r.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.phase)},
          {"evidence", r.evidence}, {"groups", r.groups},
          {"note", r.note},         {"processes", procs}};
}

std::string StacksText(const StackReport& r, int max_frames) {
  std::string out;
  size_t with = 0;
  for (const auto& p : r.processes) with += !p.threads.empty();
  out += fmt::format("Stacks ({}, {} process(es){}):\n", r.source, with,
                     r.capture_ms_max > 0 ? fmt::format(", captured in {:.1f} ms at most", r.capture_ms_max) : "");
  for (const auto& g : r.groups) out += "  " + g + "\n";
  if (!r.phase.empty()) out += fmt::format("  phase from the stacks: {} ({})\n", r.phase, r.evidence);
  if (!r.note.empty()) out += "  note: " + r.note + "\n";
  for (const auto& p : r.processes) {
    if (p.main_thread < 0) continue;
    out +=
        fmt::format("  {} {}{}, main thread (innermost first):\n", p.rank.empty() ? "pid" : "rank " + p.rank + " pid",
                    p.pid, p.threads.size() > 1 ? fmt::format(" ({} threads)", p.threads.size()) : "");
    const auto& frames = p.threads[p.main_thread].frames;
    for (size_t i = 0; i < frames.size() && static_cast<int>(i) < max_frames; ++i) {
      out += fmt::format("    {} ({}:{})\n", frames[i].function, frames[i].file, frames[i].line);
    }
    if (static_cast<int>(frames.size()) > max_frames)
      out += fmt::format("    ... {} more\n", frames.size() - max_frames);
  }
  return out;
}

}  // namespace faultline::supervise
