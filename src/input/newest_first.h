// Newest-first exports read oldest first.
//
// Log viewers that show the newest entry on top (Google Cloud Logging's Logs
// Explorer, Grafana/Loki, Datadog) copy and download in that order, and users
// paste what they see: a traceback then reads bottom-up, the error comes
// before its frames and the failure before the start-up. Such a file is
// recognised by its timestamps (the head's clock runs backwards, line after
// line) and its lines are handed on in reverse, so every later stage sees the
// job's own order. The report still gives the file's own line numbers
// (diagnosis maps them back).
#ifndef FAULTLINE_INPUT_NEWEST_FIRST_H_
#define FAULTLINE_INPUT_NEWEST_FIRST_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "input/byte_source.h"
#include "util/status.h"

namespace faultline::input {

// True when the timestamped lines of `head` (whole lines; the first 200 are
// read) run backwards: at least 8 adjacent pairs whose times differ, and 9 of
// every 10 of those newer first. A clock the line's first 96 bytes carry
// counts ("2025-04-05T00:01:19.5Z", "2025-04-05 00:01:19,123",
// "04-05 00:01:19", "00:01:19.123"); lines without one are skipped.
bool LooksNewestFirst(std::string_view head);

struct NewestFirst {
  bool reversed = false;   // the source yields the file's lines last to first
  bool too_large = false;  // it looked newest first but is over max_bytes: read as it is
};

// Reads the head of `source`; when LooksNewestFirst, reads the rest (up to
// max_bytes in all) and returns a source yielding its lines last to first,
// otherwise one yielding the same bytes as `source`. A damaged stream's
// status (a truncated gzip) is passed on by the returned source after the
// bytes read before the damage, as `source` would.
Result<std::unique_ptr<ByteSource>> OldestFirst(std::unique_ptr<ByteSource> source, size_t max_bytes, NewestFirst* how);

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_NEWEST_FIRST_H_
