// Parsers for the text of /proc files: pure functions from file content to
// structs, so they are tested on recorded text. A malformed file gives
// nullopt (or an empty result), never an exception.
#ifndef FAULTLINE_PROBE_PROC_PARSE_H_
#define FAULTLINE_PROBE_PROC_PARSE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace faultline::probe {

// /proc/PID/stat and /proc/PID/task/TID/stat.
struct ProcStat {
  int64_t pid = 0;
  std::string comm;
  char state = '?';  // R S D Z T t X I
  int64_t ppid = 0;
  int64_t pgrp = 0;
  int64_t session = 0;
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  int64_t num_threads = 0;
  uint64_t start_time_ticks = 0;  // since boot; with pid, identifies a process
  int64_t rss_pages = 0;
};
std::optional<ProcStat> ParseStat(std::string_view text);

// The fields we use from /proc/PID/status.
struct ProcStatus {
  int64_t rss_bytes = 0;       // VmRSS
  int64_t rss_anon_bytes = 0;  // RssAnon
  int64_t rss_file_bytes = 0;  // RssFile: file pages mapped in (mmap'd weights)
  int64_t threads = 0;
};
std::optional<ProcStatus> ParseStatus(std::string_view text);

// /proc/PID/io (readable only for our own processes or as root).
struct ProcIo {
  uint64_t rchar = 0;  // bytes read through read(), any source
  uint64_t wchar = 0;
  uint64_t read_bytes = 0;  // bytes fetched from storage
  uint64_t write_bytes = 0;
};
std::optional<ProcIo> ParseIo(std::string_view text);

// "pos:" of /proc/PID/fdinfo/FD.
std::optional<int64_t> ParseFdInfoPos(std::string_view text);
// "flags:" of /proc/PID/fdinfo/FD (octal, as open(2) flags).
std::optional<int> ParseFdInfoFlags(std::string_view text);
// Whether fdinfo says the fd was opened for writing (O_WRONLY or O_RDWR): a
// file being written (a checkpoint) is never a weight file being read.
bool FdInfoWritable(std::string_view text);

// /proc/PID/net/tcp and tcp6: socket inode -> TCP state (1 established,
// 2 syn-sent, 10 listen, ...).
void ParseNetTcp(std::string_view text, std::map<uint64_t, int>* states);
inline constexpr int kTcpEstablished = 1;
inline constexpr int kTcpSynSent = 2;
inline constexpr int kTcpListen = 10;

// "socket:[12345]" -> 12345.
std::optional<uint64_t> SocketInode(std::string_view link_target);

// /proc/PID/cmdline (NUL-separated) as one space-separated line.
std::string ParseCmdline(std::string_view text);

}  // namespace faultline::probe

#endif  // FAULTLINE_PROBE_PROC_PARSE_H_
