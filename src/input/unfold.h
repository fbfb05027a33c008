// Hard-wrapped pastes read as the lines they were.
//
// A log copied out of a terminal (tmux, screen, a web console) or passed
// through `fold` comes back cut into rows of the terminal's width: a
// traceback frame's path goes on at the next row's margin, an exception's
// message is split mid-word, and the rows of a padded copy are filled with
// blanks to the width. Such a file is recognised from its head: many rows of
// exactly one width, the widest, far more than the widths just below it,
// whose next rows begin unlike the file's lines begin and mostly go on
// mid-word. Its rows of that width are joined to the rows after them, and
// every later stage sees the lines the job printed. The report still gives
// the file's own row numbers (Unfolding::FileLine).
#ifndef FAULTLINE_INPUT_UNFOLD_H_
#define FAULTLINE_INPUT_UNFOLD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input/byte_source.h"
#include "util/status.h"

namespace faultline::input {

struct FoldShape {
  int width = 0;        // the terminal's width in columns; 0: not hard-wrapped
  bool padded = false;  // every row filled with blanks to the width (a screen copy)
};

// The fold of `head`'s rows (the first 2000 are read; a last row without its
// newline only when `complete`: the head is the whole input). Widths are
// columns: a UTF-8 character is one, an East Asian wide one two, a tab up to
// the next multiple of 8, an escape byte one (as `fold` counts).
FoldShape DetectFold(std::string_view head, bool complete = false);

// The display width of one row, as DetectFold counts it.
int RowWidth(std::string_view row);

// Which lines took more than one row. Lines are numbered from 1 in the
// joined text; rows in the file.
struct Unfolding {
  FoldShape shape;
  bool too_large = false;  // looked hard-wrapped but is over max_bytes: read as it is
  // (line, rows joined into lines up to and including it), for each line
  // that took more than one row, in order.
  std::vector<std::pair<int64_t, int64_t>> joined;
  // The file's row where `line` begins.
  int64_t FileLine(int64_t line) const;
  // Rows the file holds for `lines` joined lines.
  int64_t FileRows(int64_t lines) const;
};

// Joins `data`'s rows the way `shape` says (a row of the full width goes on
// in the next row) and records the joins in `joined`.
std::string JoinRows(std::string_view data, FoldShape shape, std::vector<std::pair<int64_t, int64_t>>* joined);

// Reads the head of `source`; when DetectFold finds a fold, reads the rest
// (up to max_bytes in all) and returns a source yielding the joined lines,
// otherwise one yielding the same bytes as `source`. A damaged stream's
// status is passed on after the bytes read before the damage.
Result<std::unique_ptr<ByteSource>> Unfolded(std::unique_ptr<ByteSource> source, size_t max_bytes, Unfolding* how);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_UNFOLD_H_
