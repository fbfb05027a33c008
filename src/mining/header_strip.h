// StripHeader: a stand-in for the line parser (src/parse/) that cuts the
// prefix a logger writes before the message ("2024-05-01 10:00:00 INFO
// [worker.py:12] "), so that the miner sees the message alone.
//
// kAuto drops, from the left and at most 8 tokens deep, tokens that hold a
// digit and at most 3 letters (dates, times, pids), log level words, month
// and weekday names, tokens in brackets or parentheses ("[core.py:123]",
// "(VllmWorker rank=0 pid=12)"), and then either one "component:" token or a
// glog-style "file.py:851]" token, which ends the header; it never drops the
// whole line. kNone returns the line unchanged.
#ifndef FAULTLINE_MINING_HEADER_STRIP_H_
#define FAULTLINE_MINING_HEADER_STRIP_H_

#include <string_view>

namespace faultline::mining {

enum class HeaderMode { kNone, kAuto };

std::string_view StripHeader(std::string_view line, HeaderMode mode);

}  // namespace faultline::mining

#endif  // FAULTLINE_MINING_HEADER_STRIP_H_
