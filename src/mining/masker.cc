#include "mining/masker.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <array>
#include <cstdint>

namespace faultline::mining {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsDigit(c) || IsAlpha(c); }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Character classes for the one-pass scans: a table lookup per byte.
enum : uint8_t { kDigitBit = 1, kAlphaBit = 2, kSlashBit = 4, kColonBit = 8, kEqualsBit = 16 };
constexpr auto kCharClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigitBit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kAlphaBit;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kAlphaBit;
  t['/'] = kSlashBit;
  t['\\'] = kSlashBit;
  t[':'] = kColonBit;
  t['='] = kEqualsBit;
  return t;
}();
uint8_t ClassOf(char c) { return kCharClass[static_cast<unsigned char>(c)]; }

bool IsLeadingPunct(char c) { return c == '(' || c == '[' || c == '{' || c == '"' || c == '\'' || c == '<'; }
bool IsTrailingPunct(char c) {
  return c == ')' || c == ']' || c == '}' || c == '"' || c == '\'' || c == ',' || c == ';' || c == ':' || c == '.' ||
         c == '>';
}

// 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!IsHexDigit(s[i])) {
      return false;
    }
  }
  return true;
}

// 0x1f, or at least 8 hex digits (optionally grouped by ':' '-' '.') with at
// least one decimal digit among them.
bool IsHex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    for (size_t i = 2; i < s.size(); ++i) {
      if (!IsHexDigit(s[i])) return false;
    }
    return true;
  }
  size_t hex_digits = 0;
  bool decimal = false;
  for (char c : s) {
    if (IsHexDigit(c)) {
      ++hex_digits;
      decimal = decimal || IsDigit(c);
    } else if (c != ':' && c != '-' && c != '.') {
      return false;
    }
  }
  return hex_digits >= 8 && decimal;
}

// 10.0.0.1 with an optional :port or /prefix.
bool IsIp(std::string_view s) {
  size_t i = 0;
  for (int group = 0; group < 4; ++group) {
    size_t start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == start || i - start > 3) return false;
    if (group < 3) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  if (i == s.size()) return true;
  if (s[i] != ':' && s[i] != '/') return false;
  ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
  }
  return true;
}

// A digit and no letters (42, -1.5, 12:03:44, 50%), or a number with a unit
// of at most three letters (10ms, 4GB, 1.5s).
bool IsNumberLike(std::string_view s) {
  bool digit = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (IsDigit(c)) {
      digit = true;
    } else if (IsAlpha(c)) {
      break;
    }
  }
  if (!digit) return false;
  if (i == s.size()) return true;
  // Letters follow: a unit only when the prefix is a plain number and the
  // letters run to the end.
  for (size_t j = 0; j < i; ++j) {
    char c = s[j];
    if (!IsDigit(c) && c != '.' && c != '-' && c != '+' && c != ',') return false;
  }
  size_t letters = s.size() - i;
  if (letters > 3) return false;
  for (size_t j = i; j < s.size(); ++j) {
    if (!IsAlpha(s[j])) return false;
  }
  return true;
}

// host.domain:port or localhost:port. Host names with one dot must be lower
// case, so that "state.clipTopAmount:180" stays a key and a value.
bool IsHostPort(std::string_view s) {
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return false;
  for (size_t i = colon + 1; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
  }
  std::string_view host = s.substr(0, colon);
  size_t dots = 0;
  bool upper = false;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c >= 'A' && c <= 'Z') {
      upper = true;
    } else if (!IsDigit(c) && !(c >= 'a' && c <= 'z') && c != '-') {
      return false;
    }
  }
  return dots >= 2 || (dots == 1 && !upper) || host == "localhost";
}

// A DNS name with a digit in it (ec2-52-80-34-196.compute.amazonaws.com,
// 5.36.59.76.dynamic-dsl-ip.omantel.net.om): three or more labels, the last
// one letters only, so that library names like libcuda.so.1 stay.
bool IsHostName(std::string_view s) {
  size_t labels = 1;
  size_t label_start = 0;
  bool digit = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (i == label_start) return false;
      ++labels;
      label_start = i + 1;
    } else if (IsDigit(c)) {
      digit = true;
    } else if (!IsAlpha(c) && c != '-') {
      return false;
    }
  }
  if (!digit || labels < 3 || label_start + 2 > s.size()) return false;
  for (size_t i = label_start; i < s.size(); ++i) {
    if (!IsAlpha(s[i])) return false;
  }
  return true;
}

// Three-letter month and weekday names as dates print them (Jul, Fri).
bool IsDateWord(std::string_view s) {
  static constexpr std::string_view kWords[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                                "Nov", "Dec", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  if (s.size() != 3) return false;
  for (std::string_view w : kWords) {
    if (s == w) return true;
  }
  return false;
}

// "rank3", "DP1", "gpu0": a rank or device name whose number is the
// variable (letters from a short list, then digits).
size_t RankPrefixLength(std::string_view run) {
  static constexpr std::string_view kPrefixes[] = {"rank", "gpu",    "cuda", "dp",     "tp",    "pp",
                                                   "ep",   "worker", "node", "device", "local", "shard"};
  size_t letters = 0;
  while (letters < run.size() && IsAlpha(run[letters])) ++letters;
  if (letters == 0 || letters == run.size()) return 0;
  for (size_t i = letters; i < run.size(); ++i) {
    if (!IsDigit(run[i])) return 0;
  }
  for (std::string_view p : kPrefixes) {
    if (p.size() != letters) continue;
    bool same = true;
    for (size_t i = 0; i < letters && same; ++i) same = (run[i] | 0x20) == p[i];
    if (same) return letters;
  }
  return 0;
}

// /usr/lib/x.so, ./a, ~/a, C:\x, scheme://host/a, or a relative a/b/c.
bool IsPath(std::string_view s) {
  if (s.size() < 2) return false;
  bool alnum = false;
  size_t slashes = 0;
  for (char c : s) {
    alnum = alnum || IsAlnum(c);
    slashes += c == '/';
  }
  if (!alnum) return false;
  if (s[0] == '/') return true;
  if (s.starts_with("./") || s.starts_with("../") || s.starts_with("~/")) return true;
  if (s.size() > 2 && IsAlpha(s[0]) && s[1] == ':' && s[2] == '\\') return true;
  if (s.find("://") != std::string_view::npos) return true;
  return slashes >= 2;
}

}  // namespace

Result<std::unique_ptr<Masker>> Masker::Create(MaskOptions options) {
  std::unique_ptr<Masker> masker(new Masker(std::move(options)));
  for (const MaskPattern& pattern : masker->options_.patterns) {
    auto re = std::make_unique<re2::RE2>(pattern.match, re2::RE2::Quiet);
    if (!re->ok()) {
      return Status::InvalidArgument(fmt::format("mask pattern '{}': {}", pattern.match, re->error()));
    }
    std::string why;
    if (!re->CheckRewriteString(pattern.replace, &why)) {
      return Status::InvalidArgument(
          fmt::format("mask pattern '{}': bad replace '{}': {}", pattern.match, pattern.replace, why));
    }
    masker->patterns_.push_back(std::move(re));
  }
  return masker;
}

Masker::Masker(MaskOptions options) : options_(std::move(options)) {
  for (unsigned char c : options_.delimiters) is_delimiter_[c] = true;
  for (unsigned char c : std::string_view(" \t\r\n\f\v")) is_delimiter_[c] = true;
  if (options_.max_tokens == 0) options_.max_tokens = 1;
}

Masker::~Masker() = default;

bool Masker::HasVariable(std::string_view token) {
  if (token.find(kWildcard) != std::string_view::npos) return true;
  for (char c : token) {
    if (IsDigit(c)) return true;
  }
  return false;
}

const MaskedMessage& Masker::Mask(std::string_view message) {
  if (!patterns_.empty()) {
    rewritten_.assign(message);
    for (size_t i = 0; i < patterns_.size(); ++i) {
      re2::RE2::GlobalReplace(&rewritten_, *patterns_[i], options_.patterns[i].replace);
    }
    message = rewritten_;
  }
  buffer_.clear();
  separator_buffer_.clear();
  token_spans_.clear();
  separator_spans_.clear();
  const bool keep_separators = !options_.delimiters.empty();
  size_t i = 0;
  const size_t n = message.size();
  while (i < n) {
    size_t sep_start = i;
    while (i < n && is_delimiter_[static_cast<unsigned char>(message[i])]) ++i;
    if (i == n) break;
    size_t start = i;
    uint8_t classes = 0;
    while (i < n && !is_delimiter_[static_cast<unsigned char>(message[i])]) {
      classes |= ClassOf(message[i]);
      ++i;
    }
    bool last = token_spans_.size() + 1 == options_.max_tokens && i < n;
    size_t begin = buffer_.size();
    if (!token_spans_.empty()) ++begin;  // room for the joining space
    if (!token_spans_.empty()) buffer_.push_back(' ');
    if (last) {
      buffer_.append(kWildcard);
    } else if (!(classes & (kDigitBit | kSlashBit)) && !(options_.date && i - start <= 8)) {
      // No class can match a token without a digit or a slash, except a
      // date word (short).
      buffer_.append(message.substr(start, i - start));
    } else {
      MaskToken(message.substr(start, i - start), classes);
    }
    std::string_view masked(buffer_.data() + begin, buffer_.size() - begin);
    if (options_.collapse_wildcards && masked == kWildcard && !token_spans_.empty()) {
      const auto& prev = token_spans_.back();
      if (std::string_view(buffer_.data() + prev.first, prev.second) == kWildcard) {
        buffer_.resize(begin - 1);
        continue;
      }
    }
    token_spans_.emplace_back(begin, buffer_.size() - begin);
    if (keep_separators) {
      std::string_view sep = message.substr(sep_start, start - sep_start);
      // Whitespace runs read as one space; other delimiters are kept.
      size_t sep_begin = separator_buffer_.size();
      bool space = false;
      for (char c : sep) {
        if (IsSpace(c)) {
          space = true;
        } else {
          if (space && separator_buffer_.size() > sep_begin) separator_buffer_.push_back(' ');
          space = false;
          separator_buffer_.push_back(c);
        }
      }
      if (space) separator_buffer_.push_back(' ');
      separator_spans_.emplace_back(sep_begin, separator_buffer_.size() - sep_begin);
    }
    if (last) break;
  }
  result_.tokens.clear();
  result_.separators.clear();
  for (const auto& [begin, len] : token_spans_) result_.tokens.emplace_back(buffer_.data() + begin, len);
  if (keep_separators) {
    for (const auto& [begin, len] : separator_spans_) {
      result_.separators.emplace_back(separator_buffer_.data() + begin, len);
    }
  } else {
    result_.separators.assign(result_.tokens.size(), std::string_view(" "));
  }
  if (!result_.separators.empty()) result_.separators[0] = std::string_view();
  result_.key = buffer_;
  return result_;
}

void Masker::MaskToken(std::string_view token, int classes) {
  size_t lead = 0;
  size_t end = token.size();
  while (lead < end && IsLeadingPunct(token[lead]) && !token.substr(lead).starts_with(kWildcard)) ++lead;
  while (end > lead && IsTrailingPunct(token[end - 1]) &&
         !(token[end - 1] == '>' && token.substr(lead, end - lead).ends_with(kWildcard))) {
    --end;
  }
  if (lead == end) {
    buffer_.append(token);
    return;
  }
  buffer_.append(token.substr(0, lead));
  // Stripped punctuation holds no digit, letter or slash: the token's class
  // bits serve for its core (a colon bit too many only costs a check).
  MaskCore(token.substr(lead, end - lead), classes);
  buffer_.append(token.substr(end));
}

void Masker::MaskCore(std::string_view core, int token_classes) {
  // Fast paths: every class but `date` needs a digit or a slash, and a
  // digit without letters is a number whatever else it could be.
  uint8_t classes = 0;
  if (token_classes >= 0) {
    classes = static_cast<uint8_t>(token_classes);
  } else {
    for (char c : core) classes |= ClassOf(c);
  }
  const bool digit = classes & kDigitBit;
  const bool slash = classes & kSlashBit;
  const bool letter = classes & kAlphaBit;
  if (digit && !letter && options_.numbers) {
    buffer_.append(kWildcard);
    return;
  }
  if (!digit && !slash) {
    if (options_.date && IsDateWord(core)) {
      buffer_.append(kWildcard);
    } else {
      buffer_.append(core);
    }
    return;
  }
  const bool colon = classes & kColonBit;
  if ((options_.uuid && IsUuid(core)) || (options_.hex && IsHex(core)) || (options_.path && slash && IsPath(core)) ||
      ((options_.ip || options_.numbers) && digit && (IsIp(core) || (colon && IsHostPort(core)) || IsHostName(core))) ||
      (options_.numbers && digit && IsNumberLike(core))) {
    buffer_.append(kWildcard);
    return;
  }
  size_t eq = classes & kEqualsBit ? core.rfind('=') : std::string_view::npos;
  if (eq != std::string_view::npos && eq + 1 < core.size()) {
    MaskDigitRunsOrKeep(core.substr(0, eq + 1));
    MaskCore(core.substr(eq + 1));
    return;
  }
  MaskDigitRunsOrKeep(core);
}

void Masker::MaskDigitRunsOrKeep(std::string_view core) {
  if (!options_.numbers) {
    buffer_.append(core);
    return;
  }
  // Each alphanumeric run that stands between non-alphanumerics and is a
  // number (42) or a hex number (0e, b9000564: hex digits with a decimal
  // digit) is masked.
  const size_t n = core.size();
  size_t i = 0;
  while (i < n) {
    if (!IsAlnum(core[i])) {
      buffer_.push_back(core[i]);
      ++i;
      continue;
    }
    size_t start = i;
    bool digit = false;
    bool hex = true;
    bool letter = false;
    while (i < n && IsAlnum(core[i])) {
      digit = digit || IsDigit(core[i]);
      letter = letter || IsAlpha(core[i]);
      hex = hex && IsHexDigit(core[i]);
      ++i;
    }
    std::string_view run = core.substr(start, i - start);
    if (size_t prefix = letter && digit ? RankPrefixLength(run) : 0; prefix > 0) {
      buffer_.append(run.substr(0, prefix));
      buffer_.append(kWildcard);
    } else if (digit && (!letter || (hex && options_.hex && (IsDigit(run[0]) || run.size() >= 6)) ||
                         (options_.hex && IsHex(run)))) {
      // A sign that itself follows a non-alphanumeric belongs to the number.
      if (!letter && start > 0 && (core[start - 1] == '-' || core[start - 1] == '+') &&
          (start == 1 || !IsAlnum(core[start - 2]))) {
        buffer_.pop_back();
      }
      buffer_.append(kWildcard);
    } else {
      buffer_.append(run);
    }
  }
}

}  // namespace faultline::mining
