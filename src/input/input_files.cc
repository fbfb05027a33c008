#include "input/input_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "input/byte_source.h"

namespace faultline::input {
namespace fs = std::filesystem;

bool LooksBinary(std::string_view head) {
  if (head.empty()) return false;
  size_t control = 0;
  size_t nul = 0;
  for (unsigned char c : head) {
    if (c == 0) ++nul;
    else if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\x1b' && c != '\b' && c != '\f')
      ++control;
  }
  // Logs from crashed writers can hold a few NUL bytes; executables and
  // images are full of them.
  return nul * 10 > head.size() || (control + nul) * 5 > head.size();
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
      for (auto it = fs::recursive_directory_iterator(name, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) found.push_back(it->path().string());
      }
      std::sort(found.begin(), found.end());
      size_t before = out.files.size();
      for (const std::string& path : found) {
        auto binary = FileLooksBinary(path);
        if (!binary.ok()) {
          out.warnings.push_back(binary.status().message());
          continue;
        }
        if (*binary) {
          out.warnings.push_back(fmt::format("{}: skipped, not a text log", path));
          continue;
        }
        out.files.push_back({path, path});
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
    out.files.push_back({name, name});
  }
  return out;
}

}  // namespace faultline::input
