#include "probe/proc_tree.h"

#include <algorithm>
#include <charconv>

namespace faultline::probe {
namespace {

std::string PidDir(int64_t pid) { return "/proc/" + std::to_string(pid); }

bool ParsePid(const std::string& s, int64_t* pid) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *pid);
  return ec == std::errc() && p == s.data() + s.size();
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ProcessTreeSampler::ProcessTreeSampler(ProcFs* fs, Options options) : fs_(fs), options_(std::move(options)) {}

void ProcessTreeSampler::AddRoot(int64_t pid) { roots_.insert(pid); }

bool ProcessTreeSampler::IsWeightFile(const std::string& path) const {
  // Python's own path-configuration files (site-packages/*.pth) share the extension.
  if (path.find("-packages/") != std::string::npos && EndsWith(path, ".pth")) return false;
  for (const auto& ext : options_.weight_extensions) {
    if (EndsWith(path, ext)) return true;
  }
  return false;
}

int64_t ProcessTreeSampler::CachedSize(const std::string& path) {
  auto it = sizes_.find(path);
  if (it != sizes_.end()) return it->second;
  int64_t size = fs_->FileSize(path).value_or(0);
  if (sizes_.size() > 4096) sizes_.clear();
  sizes_[path] = size;
  return size;
}

std::vector<std::pair<int64_t, uint64_t>> ProcessTreeSampler::Members() const {
  std::vector<std::pair<int64_t, uint64_t>> out;
  for (const auto& [pid, m] : members_) out.emplace_back(pid, m.start_time_ticks);
  return out;
}

// Adds the children listed in /proc/PID/task/PID/children.
void ProcessTreeSampler::Discover(int64_t pid, int depth, std::vector<int64_t>* queue) {
  auto text = fs_->ReadFile(PidDir(pid) + "/task/" + std::to_string(pid) + "/children", 1 << 16);
  if (!text) return;
  size_t i = 0;
  while (i < text->size()) {
    size_t j = text->find(' ', i);
    if (j == std::string::npos) j = text->size();
    int64_t child = 0;
    if (ParsePid(text->substr(i, j - i), &child) && !members_.count(child)) {
      auto stat = fs_->ReadFile(PidDir(child) + "/stat", 4096);
      auto parsed = stat ? ParseStat(*stat) : std::nullopt;
      if (parsed) {
        members_[child] = NewMember(parsed->start_time_ticks, depth + 1);
        queue->push_back(child);
      }
    }
    i = j + 1;
  }
}

void ProcessTreeSampler::FullScan() {
  std::map<int64_t, std::vector<std::pair<int64_t, uint64_t>>> children;
  for (const auto& name : fs_->ListDir("/proc")) {
    int64_t pid = 0;
    if (!ParsePid(name, &pid)) continue;
    auto text = fs_->ReadFile(PidDir(pid) + "/stat", 4096);
    auto stat = text ? ParseStat(*text) : std::nullopt;
    if (stat) children[stat->ppid].emplace_back(pid, stat->start_time_ticks);
  }
  std::vector<int64_t> queue;
  for (const auto& [pid, m] : members_) queue.push_back(pid);
  while (!queue.empty()) {
    int64_t pid = queue.back();
    queue.pop_back();
    auto it = children.find(pid);
    if (it == children.end()) continue;
    int depth = members_[pid].depth;
    for (const auto& [child, start] : it->second) {
      if (members_.count(child)) continue;
      members_[child] = NewMember(start, depth + 1);
      queue.push_back(child);
    }
  }
}

// Classifies one fd: 'w' weight file (added to m.weight_fds and out), 's'
// socket (inode appended), 'o' anything else, 0 when it is gone.
char ProcessTreeSampler::ReadFd(int64_t pid, const std::string& fd, Member& m, ProcessSample* out,
                                std::vector<uint64_t>* inodes) {
  auto target = fs_->ReadLink(PidDir(pid) + "/fd/" + fd);
  if (!target) return 0;
  if (auto inode = SocketInode(*target)) {
    if (inodes) inodes->push_back(*inode);
    return 's';
  }
  if (!IsWeightFile(*target)) return 'o';
  auto info = fs_->ReadFile(PidDir(pid) + "/fdinfo/" + fd, 4096);
  // A file open for writing is being written (a checkpoint), not loaded.
  if (info && FdInfoWritable(*info)) return 'o';
  WeightFile w;
  w.path = *target;
  w.size = CachedSize(*target);
  w.pos = info ? ParseFdInfoPos(*info).value_or(-1) : -1;
  m.weight_fds.emplace_back(fd, w);
  out->weight_files.push_back(std::move(w));
  return 'w';
}

void ProcessTreeSampler::ReadFds(int64_t pid, Member& m, ProcessSample* out, std::vector<uint64_t>* inodes) {
  std::vector<std::string> fds = fs_->ListDir(PidDir(pid) + "/fd");
  out->open_fds = static_cast<int>(fds.size());
  m.weight_fds.clear();
  m.fd_kinds.clear();
  m.tcp_listening = m.tcp_connecting = m.tcp_established = 0;
  int seen = 0;
  for (const auto& fd : fds) {
    if (++seen > options_.max_fds) break;
    char kind = ReadFd(pid, fd, m, out, inodes);
    if (kind == 0) continue;
    m.fd_kinds[fd] = kind;
    out->sockets += kind == 's';
  }
  m.sockets = out->sockets;
}

// Between detailed reads: the fd list, the targets of new fds only, and the
// read offsets of the weight files.
void ProcessTreeSampler::ReadWeightOffsets(int64_t pid, Member& m, ProcessSample* out) {
  std::vector<std::string> fds = fs_->ListDir(PidDir(pid) + "/fd");
  out->open_fds = static_cast<int>(fds.size());
  std::set<std::string> now(fds.begin(), fds.end());
  for (auto it = m.fd_kinds.begin(); it != m.fd_kinds.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second == 's') --m.sockets;
    it = m.fd_kinds.erase(it);
  }
  for (auto it = m.weight_fds.begin(); it != m.weight_fds.end();) {
    auto info = now.count(it->first) ? fs_->ReadFile(PidDir(pid) + "/fdinfo/" + it->first, 4096) : std::nullopt;
    if (!info) {  // closed since
      it = m.weight_fds.erase(it);
      continue;
    }
    it->second.pos = ParseFdInfoPos(*info).value_or(-1);
    out->weight_files.push_back(it->second);
    ++it;
  }
  int added = 0;
  for (const auto& fd : fds) {
    if (m.fd_kinds.count(fd) || static_cast<int>(m.fd_kinds.size()) >= options_.max_fds || ++added > 256) continue;
    char kind = ReadFd(pid, fd, m, out, nullptr);
    if (kind == 0) continue;
    m.fd_kinds[fd] = kind;
    m.sockets += kind == 's';
  }
  out->sockets = m.sockets;
  out->tcp_listening = m.tcp_listening;
  out->tcp_connecting = m.tcp_connecting;
  out->tcp_established = m.tcp_established;
}

void ProcessTreeSampler::ReadThreads(int64_t pid, ProcessSample* out) {
  std::string task_dir = PidDir(pid) + "/task";
  std::vector<std::string> tids = fs_->ListDir(task_dir);
  ThreadStates& ts = out->thread_states;
  int read = 0;
  for (const auto& tid : tids) {
    if (read++ >= options_.max_threads_detail) break;
    auto text = fs_->ReadFile(task_dir + "/" + tid + "/stat", 4096);
    auto stat = text ? ParseStat(*text) : std::nullopt;
    if (!stat) continue;
    ts.sampled = true;
    switch (stat->state) {
      case 'R':
        ++ts.running;
        continue;  // wchan of a running thread is "0"
      case 'S':
        ++ts.sleeping;
        break;
      case 'D':
        ++ts.disk;
        break;
      default:
        ++ts.other;
        break;
    }
    auto wchan = fs_->ReadFile(task_dir + "/" + tid + "/wchan", 256);
    if (wchan && !wchan->empty() && *wchan != "0") ++ts.wchan[*wchan];
  }
}

void ProcessTreeSampler::ReadMaps(int64_t pid, Member& m) {
  m.mapped.clear();
  auto text = fs_->ReadFile(PidDir(pid) + "/maps", 8 << 20);
  if (!text) return;
  std::set<std::string> paths;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    size_t slash = text->find('/', at);
    if (slash < end) {
      std::string path = text->substr(slash, end - slash);
      if (IsWeightFile(path)) paths.insert(path);
    }
    at = end + 1;
  }
  for (const auto& path : paths) {
    WeightFile w;
    w.path = path;
    w.size = CachedSize(path);
    w.mapped = true;
    m.mapped.push_back(std::move(w));
  }
}

bool ProcessTreeSampler::SampleOne(int64_t pid, Member& m, bool detail, ProcessSample* out,
                                   std::vector<uint64_t>* inodes) {
  std::string dir = PidDir(pid);
  auto stat_text = fs_->ReadFile(dir + "/stat", 4096);
  auto stat = stat_text ? ParseStat(*stat_text) : std::nullopt;
  if (!stat || (m.start_time_ticks != 0 && stat->start_time_ticks != m.start_time_ticks)) return false;
  m.start_time_ticks = stat->start_time_ticks;
  out->pid = pid;
  out->ppid = stat->ppid;
  out->pgrp = stat->pgrp;
  out->start_time_ticks = stat->start_time_ticks;
  out->depth = m.depth;
  out->comm = stat->comm;
  out->state = stat->state;
  out->cpu_seconds =
      static_cast<double>(stat->utime_ticks + stat->stime_ticks) / static_cast<double>(fs_->ClockTicksPerSecond());
  out->threads = stat->num_threads;
  if (stat->state == 'Z' || stat->state == 'X') return true;
  if (m.cmdline.empty()) {
    auto cmd = fs_->ReadFile(dir + "/cmdline", 1 << 16);
    m.cmdline = cmd ? ParseCmdline(*cmd) : "";
    if (m.cmdline.empty()) m.cmdline = "[" + stat->comm + "]";
  }
  out->cmdline = m.cmdline;
  if (auto status_text = fs_->ReadFile(dir + "/status", 1 << 14)) {
    if (auto status = ParseStatus(*status_text)) {
      out->rss_bytes = status->rss_bytes;
      out->rss_file_bytes = status->rss_file_bytes;
    }
  }
  if (auto io_text = fs_->ReadFile(dir + "/io", 4096)) out->io = ParseIo(*io_text);
  // Every fd's target is re-read on detailed samples, and whenever the
  // process reads (rchar up by 1 MiB): an fd number reused for a weight file
  // is then seen at once. Otherwise only new fds and weight offsets are read.
  uint64_t rchar = out->io ? out->io->rchar : 0;
  bool reading = out->io && rchar >= m.last_rchar + (1u << 20);
  m.last_rchar = rchar;
  if (detail || !m.detailed || reading) {
    ReadFds(pid, m, out, inodes);
  } else {
    ReadWeightOffsets(pid, m, out);
  }
  if (detail || !m.detailed) {
    ReadThreads(pid, out);
    m.threads = out->thread_states;
    m.detailed = true;
  } else {
    out->thread_states = m.threads;
  }
  if (m.maps_countdown-- <= 0) {
    ReadMaps(pid, m);
    m.maps_countdown = options_.maps_every - 1;
  }
  for (const auto& w : m.mapped) {
    bool open_too = false;
    for (auto& f : out->weight_files) {
      if (f.path == w.path) {
        f.mapped = true;
        open_too = true;
      }
    }
    if (!open_too) out->weight_files.push_back(w);
  }
  return true;
}

TreeSample ProcessTreeSampler::Sample(bool force_detail) {
  bool detail = force_detail || samples_ % options_.detail_every == 0;
  for (int64_t root : roots_) {
    if (members_.count(root)) continue;
    auto text = fs_->ReadFile(PidDir(root) + "/stat", 4096);
    auto stat = text ? ParseStat(*text) : std::nullopt;
    if (stat) members_[root] = NewMember(stat->start_time_ticks, 0);
  }
  if (samples_++ % options_.full_scan_every == 0) {
    FullScan();
  } else {
    std::vector<int64_t> queue;
    for (const auto& [pid, m] : members_) queue.push_back(pid);
    while (!queue.empty()) {
      int64_t pid = queue.back();
      queue.pop_back();
      Discover(pid, members_[pid].depth, &queue);
    }
  }

  TreeSample sample;
  sample.processes.reserve(members_.size());
  std::vector<uint64_t> inodes;
  std::vector<size_t> socket_owner_index;
  for (auto it = members_.begin(); it != members_.end();) {
    ProcessSample ps;
    size_t before = inodes.size();
    if (!SampleOne(it->first, it->second, detail, &ps, &inodes)) {
      it = members_.erase(it);
      inodes.resize(before);
      continue;
    }
    sample.processes.push_back(std::move(ps));
    socket_owner_index.insert(socket_owner_index.end(), inodes.size() - before, sample.processes.size() - 1);
    ++it;
  }
  if (!inodes.empty()) {
    std::map<uint64_t, int> states;
    std::string net = PidDir(sample.processes[socket_owner_index[0]].pid) + "/net/";
    for (const char* f : {"tcp", "tcp6"}) {
      if (auto text = fs_->ReadFile(net + f, 4 << 20)) ParseNetTcp(*text, &states);
    }
    for (size_t i = 0; i < inodes.size(); ++i) {
      auto st = states.find(inodes[i]);
      if (st == states.end()) continue;
      ProcessSample& ps = sample.processes[socket_owner_index[i]];
      if (st->second == kTcpListen) ++ps.tcp_listening;
      if (st->second == kTcpSynSent) ++ps.tcp_connecting;
      if (st->second == kTcpEstablished) ++ps.tcp_established;
    }
  }
  // Remember the TCP states of the processes read in detail this time.
  for (size_t i = 0; i < inodes.size(); ++i) {
    const ProcessSample& ps = sample.processes[socket_owner_index[i]];
    Member& m = members_[ps.pid];
    m.tcp_listening = ps.tcp_listening;
    m.tcp_connecting = ps.tcp_connecting;
    m.tcp_established = ps.tcp_established;
  }
  std::stable_sort(sample.processes.begin(), sample.processes.end(),
                   [](const ProcessSample& a, const ProcessSample& b) { return a.depth < b.depth; });
  return sample;
}

}  // namespace faultline::probe
