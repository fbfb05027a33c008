#include "parse/line_parser.h"

#include <cctype>
#include <cstring>

namespace faultline::parse {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kTrace:
      return "TRACE";
    case Level::kDebug:
      return "DEBUG";
    case Level::kInfo:
      return "INFO";
    case Level::kWarning:
      return "WARNING";
    case Level::kError:
      return "ERROR";
    case Level::kCritical:
      return "CRITICAL";
    case Level::kUnknown:
      break;
  }
  return "";
}

int64_t Timestamp::OrderKey() const {
  static constexpr int kDaysBefore[13] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  int m = (month >= 1 && month <= 12) ? month : 1;
  int64_t days = kDaysBefore[m] + (day > 0 ? day - 1 : 0);
  int64_t secs = ((days * 24 + hour) * 60 + minute) * 60 + second;
  return secs * 1000000 + micros;
}

namespace {

using sv = std::string_view;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || IsUpper(c); }

// Reads exactly n digits at s[pos]; -1 when they are not all digits.
int Fixed(sv s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (!IsDigit(c)) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Reads 1+ digits at s[*pos], advancing it; -1 when none.
int64_t Number(sv s, size_t* pos) {
  size_t p = *pos;
  int64_t v = 0;
  while (p < s.size() && IsDigit(s[p]) && p - *pos < 18) v = v * 10 + (s[p++] - '0');
  if (p == *pos) return -1;
  *pos = p;
  return v;
}

// "HH:MM:SS" at pos.
bool ClockAt(sv s, size_t pos, Timestamp* t) {
  int h = Fixed(s, pos, 2), m = Fixed(s, pos + 3, 2), sec = Fixed(s, pos + 6, 2);
  if (h < 0 || m < 0 || sec < 0 || s[pos + 2] != ':' || s[pos + 5] != ':') return false;
  t->hour = h;
  t->minute = m;
  t->second = sec;
  return true;
}

// Fractional seconds after '.' or ',' at s[*pos]: any number of digits.
void Fraction(sv s, size_t* pos, Timestamp* t) {
  if (*pos >= s.size() || (s[*pos] != '.' && s[*pos] != ',')) return;
  size_t p = *pos + 1;
  int micros = 0, digits = 0;
  while (p < s.size() && IsDigit(s[p])) {
    if (digits < 6) micros = micros * 10 + (s[p] - '0'), ++digits;
    ++p;
  }
  if (p == *pos + 1) return;
  while (digits < 6) micros *= 10, ++digits;
  t->micros = micros;
  *pos = p;
}

// "YYYY-MM-DD HH:MM:SS" at pos (also "YYYY-MM-DDTHH:MM:SS").
bool IsoAt(sv s, size_t pos, Timestamp* t) {
  if (pos + 19 > s.size()) return false;
  int y = Fixed(s, pos, 4), mo = Fixed(s, pos + 5, 2), d = Fixed(s, pos + 8, 2);
  if (y < 0 || mo < 0 || d < 0 || s[pos + 4] != '-' || s[pos + 7] != '-' ||
      (s[pos + 10] != ' ' && s[pos + 10] != 'T')) {
    return false;
  }
  if (!ClockAt(s, pos + 11, t)) return false;
  t->year = y;
  t->month = mo;
  t->day = d;
  t->valid = true;
  return true;
}

Level LevelFromWord(sv w) {
  if (w == "INFO") return Level::kInfo;
  if (w == "WARNING" || w == "WARN") return Level::kWarning;
  if (w == "ERROR") return Level::kError;
  if (w == "DEBUG") return Level::kDebug;
  if (w == "CRITICAL" || w == "FATAL") return Level::kCritical;
  if (w == "TRACE") return Level::kTrace;
  return Level::kUnknown;
}

Level LevelFromLetter(char c) {
  switch (c) {
    case 'I':
      return Level::kInfo;
    case 'W':
      return Level::kWarning;
    case 'E':
      return Level::kError;
    case 'F':
      return Level::kCritical;
    case 'D':
      return Level::kDebug;
    default:
      return Level::kUnknown;
  }
}

void SetProcess(ParsedLine* out, sv key, sv role) {
  if (!out->process.empty()) out->parent = out->process;
  out->process = key;
  out->role = role;
}

// Rank hints inside a process name: "Worker_TP1", "VllmWorker rank=0",
// "Worker_DP1_TP0" (TP rank within the replica), "VllmWorker-3".
int RankFromName(sv name) {
  if (name.find_first_of("0123456789") == sv::npos) return -1;
  size_t p = name.rfind("TP");
  if (p != sv::npos && p + 2 < name.size() && IsDigit(name[p + 2])) {
    size_t q = p + 2;
    return static_cast<int>(Number(name, &q));
  }
  p = name.rfind("rank=");
  if (p != sv::npos) {
    size_t q = p + 5;
    int64_t r = Number(name, &q);
    if (r >= 0) return static_cast<int>(r);
  }
  p = name.rfind('-');
  if (p != sv::npos && p + 1 < name.size() && IsDigit(name[p + 1])) {
    size_t q = p + 1;
    int64_t r = Number(name, &q);
    if (q == name.size()) return static_cast<int>(r);
  }
  return -1;
}

// "(Worker_TP1 pid=7506) " / "(RayWorkerWrapper pid=164889, ip=172.20.4.203) "
bool VllmProcessPrefix(sv s, size_t* pos, ParsedLine* out, bool want_rank = true) {
  size_t p = *pos;
  if (p >= s.size() || s[p] != '(') return false;
  size_t limit = std::min(s.size(), p + 160);
  sv window = s.substr(p, limit - p);
  size_t close = window.find(')');
  if (close == sv::npos) return false;
  sv inside = window.substr(1, close - 1);
  size_t pid_at = inside.find(" pid=");
  if (pid_at == sv::npos || pid_at == 0) return false;
  size_t q = pid_at + 5;
  int64_t pid = Number(inside, &q);
  if (pid < 0) return false;
  if (q != inside.size() && inside.substr(q, 2) != ", ") return false;
  sv name = inside.substr(0, pid_at);
  SetProcess(out, inside.substr(0, q), name);
  out->pid = pid;
  if (want_rank) {
    int rank = RankFromName(name);
    if (rank >= 0) out->rank = rank;
  }
  p += close + 1;
  if (p < s.size() && s[p] == ' ') ++p;
  *pos = p;
  return true;
}

// torchrun "[rank3]:" / torchelastic --tee "[default0]:" (role name + local rank).
bool TorchRankPrefix(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  if (p + 4 > s.size() || s[p] != '[' || !IsAlpha(s[p + 1])) return false;
  size_t q = p + 1;
  while (q < s.size() && q - p < 40 && (IsAlpha(s[q]) || s[q] == '_')) ++q;
  size_t digits_at = q;
  int64_t rank = Number(s, &q);
  if (rank < 0 || q + 1 >= s.size() + 1 || q >= s.size() || s[q] != ']') return false;
  if (q + 1 >= s.size() || s[q + 1] != ':') return false;
  SetProcess(out, s.substr(p + 1, q - p - 1), s.substr(p + 1, digits_at - p - 1));
  out->rank = static_cast<int>(rank);
  *pos = q + 2;
  // torch's exception hook writes "[rank2]: " + line: the space is the
  // prefix's, not the message's indentation.
  if (out->role == "rank" && *pos < s.size() && s[*pos] == ' ') ++*pos;
  return true;
}

// SGLang "[2025-05-09 15:14:59 DP0 TP3] " and DeepSpeed
// "[2025-05-09 15:14:59,123] [INFO] [launch.py:256:main] ".
bool BracketedIsoPrefix(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  if (p >= s.size() || s[p] != '[') return false;
  Timestamp t;
  if (!IsoAt(s, p + 1, &t)) return false;
  size_t q = p + 20;
  Fraction(s, &q, &t);
  size_t tags_begin = q;
  // SGLang process tags: " DP0", " TP3", " PP1", " EP2" ...
  while (q + 2 < s.size() && s[q] == ' ' && IsUpper(s[q + 1])) {
    size_t r = q + 1;
    while (r < s.size() && IsUpper(s[r])) ++r;
    if (Number(s, &r) < 0) break;
    q = r;
  }
  if (q >= s.size() || s[q] != ']') return false;
  sv tags = s.substr(tags_begin, q - tags_begin);
  while (!tags.empty() && tags.front() == ' ') tags.remove_prefix(1);
  out->time = t;
  if (!tags.empty()) {
    SetProcess(out, tags, tags);
    int rank = RankFromName(tags);
    if (rank >= 0) out->rank = rank;
    out->format = "sglang";
  }
  ++q;
  if (q < s.size() && s[q] == ' ') ++q;
  // DeepSpeed: "[INFO] [file.py:line:func] "
  if (q + 2 < s.size() && s[q] == '[' && IsUpper(s[q + 1])) {
    size_t close = s.find(']', q);
    if (close != sv::npos && close - q < 12) {
      Level level = LevelFromWord(s.substr(q + 1, close - q - 1));
      if (level != Level::kUnknown) {
        out->level = level;
        out->format = "deepspeed";
        q = close + 1;
        if (q + 1 < s.size() && s[q] == ' ' && s[q + 1] == '[') {
          size_t end = s.find("] ", q + 2);
          if (end != sv::npos && end - q < 120) {
            out->source = s.substr(q + 2, end - q - 2);
            q = end + 1;
          }
        }
        if (q < s.size() && s[q] == ' ') ++q;
      }
    }
  } else if (q < s.size() && (IsUpper(s[q]) || (s[q] >= 'a' && s[q] <= 'z') || s[q] == '_')) {
    // torch._logging (torch 2.0-2.2): "[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] "
    // on every line of a record: a logger name, then the level in brackets.
    size_t r = q;
    while (r < s.size() && r - q < 100 && (IsUpper(s[r]) || (s[r] >= 'a' && s[r] <= 'z') || IsDigit(s[r]) ||
                                           s[r] == '_' || s[r] == '.')) {
      ++r;
    }
    if (r + 3 < s.size() && s[r] == ':' && s[r + 1] == ' ' && s[r + 2] == '[') {
      size_t close = s.find(']', r + 3);
      Level level = close != sv::npos && close - r < 14 ? LevelFromWord(s.substr(r + 3, close - r - 3)) : Level::kUnknown;
      if (level != Level::kUnknown) {
        out->level = level;
        out->format = "python";
        q = close + 1;
        if (q < s.size() && s[q] == ' ') ++q;
      }
    }
  }
  *pos = q;
  return true;
}

// vLLM "INFO 05-09 15:14:59 [core.py:239] " (and pre-0.8 "core.py:239] ").
bool VllmHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  size_t sp = s.find(' ', p);
  if (sp == sv::npos || sp - p > 8 || sp - p < 4) return false;
  Level level = LevelFromWord(s.substr(p, sp - p));
  if (level == Level::kUnknown) return false;
  size_t q = sp + 1;
  int mo = Fixed(s, q, 2), d = Fixed(s, q + 3, 2);
  if (mo < 0 || d < 0 || q + 15 > s.size() || s[q + 2] != '-' || s[q + 5] != ' ') {
    // vLLM's record without its time ("ERROR [multiproc_executor.py:912] msg"): a paste that cut the
    // "MM-DD HH:MM:SS " out, or a logging config without asctime. Only a "[file.py:line]" source in
    // brackets right after the level makes it one.
    if (q >= s.size() || s[q] != '[') return false;
    size_t close = s.find(']', q + 1);
    if (close == sv::npos || close - q > 80) return false;
    sv src = s.substr(q + 1, close - q - 1);
    size_t colon = src.rfind(':');
    if (colon == sv::npos || colon < 4 || src.substr(colon - 3, 3) != ".py" || colon + 1 == src.size()) return false;
    for (size_t i = colon + 1; i < src.size(); ++i) {
      if (!IsDigit(src[i])) return false;
    }
    for (size_t i = 0; i < colon; ++i) {
      char c = src[i];
      if (!(IsAlpha(c) || IsDigit(c) || c == '_' || c == '.' || c == '/' || c == '-')) return false;
    }
    out->level = level;
    out->source = src;
    out->format = "vllm";
    q = close + 1;
    if (q < s.size() && s[q] == ' ') ++q;
    *pos = q;
    return true;
  }
  Timestamp t;
  if (!ClockAt(s, q + 6, &t)) return false;
  t.month = mo;
  t.day = d;
  t.valid = true;
  q += 14;
  Fraction(s, &q, &t);
  if (q < s.size() && s[q] == ' ') ++q;
  bool bracket = q < s.size() && s[q] == '[';
  size_t src_begin = bracket ? q + 1 : q;
  size_t close = s.find(']', src_begin);
  if (close == sv::npos || close - src_begin > 200) return false;
  out->level = level;
  out->time = t;
  out->source = s.substr(src_begin, close - src_begin);
  out->format = "vllm";
  q = close + 1;
  if (q < s.size() && s[q] == ' ') ++q;
  *pos = q;
  return true;
}

// torch._logging puts the compile being traced after its glog header:
// "[1/0] ", "[0/2_1] " (frame id / compile id, _ restart), "[!0/0] "
// (compiled autograd). It is part of the header, not of the message (a
// traceback's frame lines under it are indented after it).
void SkipTorchCompileId(sv s, size_t* pos) {
  size_t p = *pos;
  if (p >= s.size() || s[p] != '[') return;
  ++p;
  if (p < s.size() && s[p] == '!') ++p;
  size_t digits = p;
  while (p < s.size() && IsDigit(s[p])) ++p;
  if (p == digits || p >= s.size() || s[p] != '/') return;
  digits = ++p;
  while (p < s.size() && IsDigit(s[p])) ++p;
  if (p == digits) return;
  if (p < s.size() && s[p] == '_') {
    digits = ++p;
    while (p < s.size() && IsDigit(s[p])) ++p;
    if (p == digits) return;
  }
  if (p >= s.size() || s[p] != ']') return;
  ++p;
  if (p < s.size() && s[p] == ' ') ++p;
  *pos = p;
}

// glog "I1129 08:00:00.123456 12345 file.cc:12] " and c10/torch
// "[W1129 08:00:00.596013815 ProcessGroupNCCL.cpp:1250] ".
bool GlogHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  bool bracket = p < s.size() && s[p] == '[';
  if (bracket) ++p;
  if (p + 21 > s.size()) return false;
  Level level = LevelFromLetter(s[p]);
  if (level == Level::kUnknown) return false;
  int mo = Fixed(s, p + 1, 2), d = Fixed(s, p + 3, 2);
  if (mo < 0 || d < 0 || s[p + 5] != ' ') return false;
  Timestamp t;
  if (!ClockAt(s, p + 6, &t)) return false;
  t.month = mo;
  t.day = d;
  t.valid = true;
  size_t q = p + 14;
  Fraction(s, &q, &t);
  while (q < s.size() && s[q] == ' ') ++q;
  size_t save = q;
  int64_t pid = Number(s, &q);
  if (pid >= 0 && q < s.size() && s[q] == ' ') {
    out->pid = out->pid >= 0 ? out->pid : pid;
    ++q;
  } else {
    q = save;
  }
  size_t close = s.find(']', q);
  if (close == sv::npos || close - q > 200) return false;
  out->level = level;
  out->time = t;
  out->source = s.substr(q, close - q);
  out->format = "glog";
  q = close + 1;
  if (q < s.size() && s[q] == ' ') ++q;
  SkipTorchCompileId(s, &q);
  *pos = q;
  return true;
}

// TensorFlow/XLA's C++ logging (tsl/platform/default/logging.cc, what JAX and
// TF print): "2025-04-05 18:39:10.837611: E external/xla/.../client.cc:80] msg".
bool TslHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  Timestamp t;
  if (!IsoAt(s, p, &t)) return false;
  size_t q = p + 19;
  Fraction(s, &q, &t);
  if (q + 4 > s.size() || s[q] != ':' || s[q + 1] != ' ' || s[q + 3] != ' ') return false;
  Level level = LevelFromLetter(s[q + 2]);
  if (level == Level::kUnknown) return false;
  q += 4;
  size_t close = s.find("] ", q);
  size_t space = s.find(' ', q);
  if (close == sv::npos || close - q > 200 || space < close) return false;  // "file.cc:12]" has no space
  out->level = level;
  out->time = t;
  out->source = s.substr(q, close - q);
  out->format = "glog";
  *pos = close + 2;
  return true;
}

// NCCL "gpu-node-1:7506:7506 [1] NCCL INFO ..." (host:pid:tid [cudaDev]).
bool NcclHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  size_t sp = s.find(' ', p);
  if (sp == sv::npos || sp - p > 120) return false;
  sv id = s.substr(p, sp - p);
  size_t c2 = id.rfind(':');
  if (c2 == sv::npos || c2 == 0) return false;
  size_t c1 = id.rfind(':', c2 - 1);
  if (c1 == sv::npos) return false;
  size_t q = c1 + 1;
  int64_t pid = Number(id, &q);
  if (pid < 0 || q != c2) return false;
  size_t r = sp + 1;
  if (r >= s.size() || s[r] != '[') return false;
  ++r;
  int64_t dev = Number(s, &r);
  if (dev < 0 || r >= s.size() || s[r] != ']') return false;
  ++r;
  // NCCL >= 2.28 prints the source location first: "[0] init.cc:904 NCCL WARN".
  if (s.substr(r, 6) != " NCCL ") {
    size_t sp2 = s.find(' ', r + 1);
    if (sp2 == sv::npos || sp2 - r > 60 || s.substr(sp2, 6) != " NCCL ") return false;
    out->source = s.substr(r + 1, sp2 - r - 1);
    r = sp2;
  }
  r += 6;
  size_t word_end = s.find(' ', r);
  if (word_end == sv::npos) word_end = s.size();
  Level level = LevelFromWord(s.substr(r, word_end - r));
  if (level == Level::kUnknown) return false;
  out->level = level;
  if (out->pid < 0) out->pid = pid;
  if (out->process.empty()) SetProcess(out, id.substr(0, c2), "NCCL");
  out->format = "nccl";
  *pos = word_end < s.size() ? word_end + 1 : word_end;
  return true;
}

// Python logging: "2025-05-09 15:14:59,123 - name - LEVEL - msg",
// "2025-05-09 15:14:59,123 LEVEL msg", and basicConfig's "LEVEL:name:msg".
bool PythonLoggingHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  Timestamp t;
  if (IsoAt(s, p, &t)) {
    size_t q = p + 19;
    Fraction(s, &q, &t);
    // Find a level word among the next few " - "/space separated fields.
    size_t limit = std::min(s.size(), q + 160);
    size_t r = q;
    while (r < limit) {
      while (r < limit && (s[r] == ' ' || s[r] == '-' || s[r] == '|' || s[r] == '[')) ++r;
      size_t e = r;
      while (e < limit && s[e] != ' ' && s[e] != ']' && s[e] != ':') ++e;
      Level level = LevelFromWord(s.substr(r, e - r));
      if (level != Level::kUnknown) {
        out->level = level;
        q = e;
        while (q < s.size() && (s[q] == ' ' || s[q] == '-' || s[q] == ']' || s[q] == ':' || s[q] == '|')) ++q;
        break;
      }
      if (e == r) break;
      r = e;
      if (r - p > 120) break;
    }
    out->time = t;
    out->format = "python";
    *pos = q;
    return true;
  }
  size_t colon = s.find(':', p);
  if (colon == sv::npos || colon - p > 8 || colon == p) return false;
  Level level = LevelFromWord(s.substr(p, colon - p));
  if (level == Level::kUnknown) return false;
  size_t second = s.find(':', colon + 1);
  if (second == sv::npos || second - colon > 80) return false;
  for (size_t i = colon + 1; i < second; ++i) {
    if (s[i] == ' ') return false;  // a logger name has no spaces
  }
  out->level = level;
  out->format = "python";
  *pos = second + 1;
  return true;
}

// A print redirected into logging: FastChat's and LLaVA's workers (fastchat/utils.py build_logger, copied by
// the servers built on them) replace sys.stdout / sys.stderr with objects that log each printed line to a
// logger named "stdout" (level INFO) or "stderr" (level ERROR), formatted "%(asctime)s | %(levelname)s |
// %(name)s | %(message)s" - the common StreamToLogger recipe. Such a record's level is the stream's, not the
// line's: uvicorn's "INFO:     Uvicorn running" and every traceback line read "... | ERROR | stderr | ...".
// After a Python logging header, "stdout | " / "stderr | " (or " - ") is that redirect: it is skipped, the
// level forgotten, and the line the program printed is parsed as its own line.
bool RedirectedStreamLogger(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  sv rest = s.substr(p);
  if (!(rest.starts_with("stdout") || rest.starts_with("stderr"))) return false;
  size_t q = p + 6;
  if (q < s.size() && s[q] == ' ') ++q;
  if (q >= s.size() || (s[q] != '|' && s[q] != '-')) return false;
  ++q;
  if (q < s.size() && s[q] == ' ') ++q;
  out->level = Level::kUnknown;
  *pos = q;
  return true;
}

// A logger name and a level in brackets: TensorRT-LLM's Python logger "[TRT-LLM] [E] msg" and its C++
// "[TensorRT-LLM][ERROR] msg". The name is a word (letters, digits, '-', '_', '.'), the level a level
// word or one of the letters I W E F D, and the message follows after one space.
bool BracketNameLevelHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  if (p >= s.size() || s[p] != '[') return false;
  size_t e = p + 1;
  if (e >= s.size() || !std::isalpha(static_cast<unsigned char>(s[e]))) return false;
  while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '-' || s[e] == '_' || s[e] == '.'))
    ++e;
  if (e >= s.size() || s[e] != ']' || e - p > 32) return false;
  size_t r = e + 1;
  if (r < s.size() && s[r] == ' ') ++r;
  if (r >= s.size() || s[r] != '[') return false;
  size_t close = s.find(']', r + 1);
  if (close == sv::npos || close - r > 10) return false;
  sv word = s.substr(r + 1, close - r - 1);
  Level level = word.size() == 1 ? LevelFromLetter(word[0]) : LevelFromWord(word);
  if (level == Level::kUnknown) return false;
  out->level = level;
  out->format = "bracket";
  size_t q = close + 1;
  if (q < s.size() && s[q] == ' ') ++q;
  *pos = q;
  return true;
}

// Python logging without a time: "%(name)s - %(levelname)s - %(message)s" ("lmdeploy - ERROR - base.py:55
// - AttributeError: ..."), which a paste also leaves when it cut the asctime off the line's front. The
// logger name is a dotted identifier, and the level must sit between two " - " separators.
bool NameLevelHeader(sv s, size_t* pos, ParsedLine* out) {
  size_t p = *pos;
  size_t e = p;
  while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_' || s[e] == '.')) ++e;
  if (e == p || e - p > 80 || s.substr(e, 3) != " - ") return false;
  size_t r = e + 3;
  size_t le = r;
  while (le < s.size() && IsUpper(s[le])) ++le;
  Level level = LevelFromWord(s.substr(r, le - r));
  if (level == Level::kUnknown || s.substr(le, 3) != " - ") return false;
  out->level = level;
  out->format = "python";
  *pos = le + 3;
  return true;
}

}  // namespace

ParsedLine ParseLine(std::string_view line) {
  ParsedLine out;
  out.text = line;
  size_t pos = 0;
  bool header_seen = false;
  for (int round = 0; round < 8 && pos < line.size(); ++round) {
    char c = line[pos];
    bool matched = false;
    if (c == '(') {
      matched = VllmProcessPrefix(line, &pos, &out);
    } else if (c == '[') {
      matched = TorchRankPrefix(line, &pos, &out) || BracketedIsoPrefix(line, &pos, &out) ||
                (!header_seen && GlogHeader(line, &pos, &out) && (header_seen = true)) ||
                (!header_seen && BracketNameLevelHeader(line, &pos, &out) && (header_seen = true));
    } else if (!header_seen && IsUpper(c)) {
      matched = (VllmHeader(line, &pos, &out) || GlogHeader(line, &pos, &out) || PythonLoggingHeader(line, &pos, &out));
      header_seen = matched;
    } else if (!header_seen && IsDigit(c)) {
      matched = TslHeader(line, &pos, &out) || PythonLoggingHeader(line, &pos, &out);
      header_seen = matched;
      // A redirected print: the printed line's own header (if any) is read next.
      if (matched && out.format == "python" && RedirectedStreamLogger(line, &pos, &out)) header_seen = false;
    } else if (!header_seen && c >= 'a' && c <= 'z') {
      matched = NameLevelHeader(line, &pos, &out);
      header_seen = matched;
    }
    if (!matched && !header_seen && c != '(' && c != ' ') {
      matched = NcclHeader(line, &pos, &out);
      header_seen = matched;
    }
    if (!matched) break;
  }
  out.message = line.substr(pos);
  return out;
}

ParsedLine ParseProcessPrefixes(std::string_view line) {
  ParsedLine out;
  out.text = line;
  size_t pos = 0;
  for (int round = 0; round < 4 && pos < line.size(); ++round) {
    char c = line[pos];
    bool matched = false;
    if (c == '(')
      matched = VllmProcessPrefix(line, &pos, &out, /*want_rank=*/false);
    else if (c == '[')
      matched = TorchRankPrefix(line, &pos, &out) || BracketedIsoPrefix(line, &pos, &out);
    if (!matched) break;
  }
  // NCCL names its process in its header ("host:pid:tid [dev] NCCL INFO"):
  // attribute those lines exactly as ParseLine does.
  if (out.process.empty() && pos < line.size() && line[pos] != ' ') {
    ParsedLine nccl;
    size_t p = pos;
    if (NcclHeader(line, &p, &nccl)) {
      out.process = nccl.process;
      out.role = nccl.role;
      out.pid = nccl.pid;
      pos = p;
    }
  }
  out.message = line.substr(pos);
  return out;
}

}  // namespace faultline::parse
