#include "supervise/kernel_evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <re2/re2.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace faultline::supervise {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t Field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  int64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return -1;
}

}  // namespace

double KernelClockSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int64_t CgroupOomKills(std::string* file) {
  std::istringstream in(Slurp("/proc/self/cgroup"));
  std::string line, v1, v2;
  bool have_v2 = false;
  while (std::getline(in, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (ctrl.empty()) {
      v2 = path;
      have_v2 = true;
    }
    if (ctrl == "memory" || ctrl.find("memory,") == 0 || ctrl.find(",memory") != std::string::npos) v1 = path;
  }
  std::vector<std::string> candidates;
  if (!v1.empty()) candidates.push_back("/sys/fs/cgroup/memory" + v1 + "/memory.oom_control");
  if (have_v2) candidates.push_back("/sys/fs/cgroup" + (v2 == "/" ? "" : v2) + "/memory.events");
  for (const auto& c : candidates) {
    std::string text = Slurp(c);
    int64_t n = Field(text, "oom_kill");
    if (n >= 0) {
      if (file) *file = c;
      return n;
    }
  }
  return -1;
}

KernelEvidence MatchKernelLog(const std::vector<KernelMessage>& messages, const std::string& kmsg, int64_t pid,
                              double since) {
  KernelEvidence ev;
  std::vector<std::unique_ptr<RE2>> res;
  for (const auto& m : messages) {
    std::string p = m.pattern;
    for (size_t at; (at = p.find("{pid}")) != std::string::npos;) p.replace(at, 5, std::to_string(pid));
    res.push_back(std::make_unique<RE2>(p));
  }
  std::istringstream in(kmsg);
  std::string rec;
  while (std::getline(in, rec)) {
    if (rec.empty() || rec[0] == ' ') continue;  // continuation lines of a record
    size_t semi = rec.find(';');
    if (semi == std::string::npos) continue;
    // PRI,SEQ,USEC,FLAGS
    std::istringstream head(rec.substr(0, semi));
    std::string pri, seq, usec;
    std::getline(head, pri, ',');
    std::getline(head, seq, ',');
    std::getline(head, usec, ',');
    double t = std::atof(usec.c_str()) / 1e6;
    if (t + 1 < since) continue;
    std::string msg = rec.substr(semi + 1);
    for (size_t i = 0; i < messages.size(); ++i) {
      if (!res[i]->ok() || !RE2::PartialMatch(msg, *res[i])) continue;
      ev.lines.push_back("kernel: " + (msg.size() > 400 ? msg.substr(0, 400) + "..." : msg));
      if (ev.explain.empty()) ev.explain = messages[i].explain;
      break;
    }
  }
  return ev;
}

KernelEvidence ExplainDeath(const std::vector<KernelMessage>& messages, int64_t pid, double since,
                            int64_t oom_kills_before) {
  std::string kmsg;
  std::string kmsg_note;
  int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    kmsg_note = fmt::format("/dev/kmsg: {} (dmesg needs root or kernel.dmesg_restrict=0)", strerror(errno));
  } else {
    char buf[8192];
    for (int i = 0; i < 200000; ++i) {  // one record per read
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EPIPE) continue;  // overwritten while reading
      if (n <= 0) break;
      kmsg.append(buf, static_cast<size_t>(n));
      if (kmsg.back() != '\n') kmsg += '\n';
    }
    close(fd);
  }
  KernelEvidence ev = MatchKernelLog(messages, kmsg, pid, since);
  if (!kmsg_note.empty()) ev.notes.push_back(kmsg_note);
  std::string file;
  int64_t now = CgroupOomKills(&file);
  if (now >= 0 && oom_kills_before >= 0 && now > oom_kills_before) {
    ev.lines.push_back(fmt::format("cgroup: {} oom_kill {} -> {}", file, oom_kills_before, now));
    if (ev.explain.empty()) ev.explain = "killed by the OOM killer of its memory cgroup";
  } else if (now < 0) {
    ev.notes.push_back("cgroup memory.events: not readable");
  }
  return ev;
}

}  // namespace faultline::supervise
