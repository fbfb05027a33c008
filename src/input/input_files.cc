#include "input/input_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include "input/byte_source.h"

namespace faultline::input {
namespace fs = std::filesystem;

namespace {

// Bytes of `head` inside runs of kNulHoleBytes or more NULs (see LooksBinary).
size_t NulHoleBytes(std::string_view head) {
  size_t holes = 0;
  for (size_t i = head.find('\0'); i != std::string_view::npos; i = head.find('\0', i)) {
    size_t j = head.find_first_not_of('\0', i);
    if (j == std::string_view::npos) j = head.size();
    if (j - i >= kNulHoleBytes) holes += j - i;
    i = j;
  }
  return holes;
}

}  // namespace

bool LooksBinary(std::string_view head) {
  if (head.empty()) return false;
  const size_t holes = NulHoleBytes(head);
  if (holes == head.size()) return true;  // nothing but NULs: no text to judge by
  size_t control = 0;
  size_t nul = 0;
  size_t invalid = 0;  // bytes that are not part of valid UTF-8
  for (size_t i = 0; i < head.size();) {
    // Eight bytes of printable ASCII at once (most of a log): no byte with
    // its high bit set, none below 0x20 (exact for ASCII bytes).
    if (i + 8 <= head.size()) {
      uint64_t w;
      std::memcpy(&w, head.data() + i, 8);
      constexpr uint64_t kHigh = 0x8080808080808080ull, kSpace = 0x2020202020202020ull;
      if (((w | ((w - kSpace) & ~w)) & kHigh) == 0) {
        i += 8;
        continue;
      }
      if ((w & kHigh) == 0) {  // ASCII with a control byte or more (a line end): those bytes alone
        constexpr uint64_t kUp = 0x6060606060606060ull;  // + 0x60: the high bit set for bytes >= 0x20, no carry
        for (uint64_t low = ~(w + kUp) & kHigh; low != 0; low &= low - 1) {
          const auto c = static_cast<unsigned char>(w >> (__builtin_ctzll(low) & ~7));
          if (c == 0) {
            ++nul;
          } else if (c != '\n' && c != '\r' && c != '\t' && c != '\x1b' && c != '\b' && c != '\f') {
            ++control;
          }
        }
        i += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(head[i]);
    if (c < 0x80) {
      if (c == 0) {
        ++nul;
      } else if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\x1b' && c != '\b' && c != '\f') {
        ++control;
      }
      ++i;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len != 0 && i + len > head.size()) break;  // a character cut by the end of the sample
    bool ok = len != 0;
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(head[i + k]) & 0xC0) == 0x80;
    if (ok) {
      i += len;
    } else {
      ++invalid;
      ++i;
    }
  }
  // Logs from crashed writers can hold a few NUL bytes, and a Latin-1 log a
  // few invalid bytes; executables, images and random bytes are full of them.
  nul -= holes;
  const size_t text = head.size() - holes;
  return nul * 10 > text || (control + nul + invalid) * 5 > text;
}

namespace {

// Reads the first decoded bytes of a file to decide whether it is a log.
Result<bool> FileLooksBinary(const std::string& path) {
  auto src = OpenByteSource(path);
  if (!src.ok()) return src.status();
  std::string head(4096, '\0');
  size_t got = 0;
  while (got < head.size()) {
    auto n = (*src)->Read(head.data() + got, head.size() - got);
    if (!n.ok()) break;  // damaged archive: the reader reports it later
    if (*n == 0) break;
    got += *n;
  }
  head.resize(got);
  return LooksBinary(head);
}

// FileLooksBinary of every path, by a thread per core: a directory of 512
// rank logs is sniffed (64 KiB decoded a file) before any scan begins.
std::vector<Result<bool>> FilesLookBinary(const std::vector<std::string>& paths) {
  std::vector<Result<bool>> out(paths.size(), Result<bool>(false));
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), paths.size() / 4);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();) out[i] = FileLooksBinary(paths[i]);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace

Result<ExpandedInputs> ExpandInputs(const std::vector<std::string>& names) {
  ExpandedInputs out;
  if (names.empty()) {
    return Status::InvalidArgument("no input: name log files, a directory, or - for stdin");
  }
  for (const std::string& name : names) {
    if (name == "-") {
      out.files.push_back({"-", "<stdin>"});
      continue;
    }
    std::error_code ec;
    fs::file_status st = fs::status(name, ec);
    if (ec || !fs::exists(st)) return Status::NotFound(fmt::format("{}: no such file or directory", name));
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      // A walk by hand: a sub-directory that cannot be read is reported, not
      // skipped in silence (recursive_directory_iterator either stops or hides it).
      std::vector<fs::path> pending = {fs::path(name)};
      while (!pending.empty()) {
        fs::path dir = pending.back();
        pending.pop_back();
        std::error_code dir_ec;
        fs::directory_iterator it(dir, dir_ec);
        if (dir_ec) {
          out.warnings.push_back(fmt::format("{}: unreadable directory, skipped ({})", dir.string(), dir_ec.message()));
          continue;
        }
        for (; !dir_ec && it != fs::directory_iterator(); it.increment(dir_ec)) {
          std::error_code e;
          if (it->is_symlink(e) && it->is_directory(e)) continue;  // no loops through links
          if (it->is_directory(e)) {
            pending.push_back(it->path());
          } else if (it->is_regular_file(e) && !IsFaultlineRecord(it->path().string())) {
            found.push_back(it->path().string());
          }
        }
        if (dir_ec) out.warnings.push_back(fmt::format("{}: listing stopped ({})", dir.string(), dir_ec.message()));
      }
      std::sort(found.begin(), found.end());
      size_t before = out.files.size();
      std::vector<Result<bool>> sniffed = FilesLookBinary(found);
      for (size_t i = 0; i < found.size(); ++i) {
        const std::string& path = found[i];
        Result<bool>& binary = sniffed[i];
        if (!binary.ok()) {
          out.warnings.push_back(binary.status().message());
          continue;
        }
        if (*binary) {
          out.warnings.push_back(fmt::format("{}: skipped, not a text log", path));
          continue;
        }
        out.files.push_back({path, path, IdentifyLogPath(path)});
      }
      if (out.files.size() == before) {
        return Status::NotFound(fmt::format("{}: directory holds no log files", name));
      }
      continue;
    }
    if (!fs::is_regular_file(st) && !fs::is_fifo(st) && !fs::is_character_file(st)) {
      return Status::InvalidArgument(fmt::format("{}: not a regular file", name));
    }
    if (fs::is_regular_file(st)) {
      auto binary = FileLooksBinary(name);
      if (!binary.ok()) return binary.status();
      if (*binary) {
        return Status::DataLoss(fmt::format("{}: binary file, not a log (compressed logs must be gzip or zstd)", name));
      }
    }
    out.files.push_back({name, name, IdentifyLogPath(name)});
  }
  return out;
}

}  // namespace faultline::input
