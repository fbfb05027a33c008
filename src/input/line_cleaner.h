// Cleans one raw log line into the text faultline reasons about.
//
// Logs captured from terminals carry bytes that are not text: ANSI colour
// and cursor codes, '\r' rewrites from progress bars (tqdm prints
// "\r 10%|#   |\r 20%|##  |" on one line: only the last state is real), a
// trailing '\r' from Windows line endings, and NUL bytes from preallocated or
// crashed writers. Pastes in caret notation (`cat -v`, less: "^[[36m" for
// ESC [ 36 m, a trailing "^M" for '\r') are cleaned the same way. Invalid
// UTF-8 is kept here and replaced only when JSON is written.
#ifndef FAULTLINE_INPUT_LINE_CLEANER_H_
#define FAULTLINE_INPUT_LINE_CLEANER_H_

#include <string>
#include <string_view>

namespace faultline::input {

// True when line holds any byte that CleanLine would change.
bool NeedsCleaning(std::string_view line);

// Appends the cleaned form of line (without its '\n') to *out. A line a
// progress bar redrew ('\r' rewrites) keeps only its last state; when
// `earlier` is given it gets the cleaned first state of the same bar (the
// first segment whose text before its first digit is the last's, and whose
// text differs from it: "train:   0%| 0/1000" under "train:  32%| 315/1000"),
// or is cleared when the line holds none.
void CleanLineInto(std::string_view line, std::string* out, std::string* earlier = nullptr);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_LINE_CLEANER_H_
