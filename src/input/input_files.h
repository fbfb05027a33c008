// Expands what the user named (files, directories, "-") into the list of
// log inputs, in a stable order.
//
// A directory contributes every regular file below it (sorted by path) that
// looks like text or a gzip/zstd archive; binary files inside a directory are
// skipped with a warning, while a binary file named directly is an error.
#ifndef FAULTLINE_INPUT_INPUT_FILES_H_
#define FAULTLINE_INPUT_INPUT_FILES_H_

#include <string>
#include <vector>

#include "input/job_layout.h"
#include "util/status.h"

namespace faultline::input {

struct InputFile {
  std::string path;     // what to open ("-" for stdin)
  std::string display;  // how reports name it
  FileIdentity identity;  // rank / node the path says (job_layout.h)
};

struct ExpandedInputs {
  std::vector<InputFile> files;
  std::vector<std::string> warnings;
};

Result<ExpandedInputs> ExpandInputs(const std::vector<std::string>& names);

// Heuristic on the first bytes of a (decoded) stream: NULs or mostly
// control bytes mean this is not a log. An empty sample is text. A run of
// kNulHoleBytes or more NULs between text is a hole, not binary data: a log
// truncated (`> log`) while another process still writes it at its old
// offset, or a file system that zero-filled a crashed writer's last blocks;
// such runs are left out of the count (the line reader drops NULs). A
// sample of nothing but NULs stays binary.
inline constexpr size_t kNulHoleBytes = 256;
bool LooksBinary(std::string_view head);
bool LooksBinary(std::string_view head);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_INPUT_FILES_H_
