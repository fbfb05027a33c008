// LineParser: recognises the prefixes and headers of the log formats that
// GPU jobs print (docs/log-formats.md names each format and its source):
//
//   process prefixes  vLLM "(Name pid=N) " and "(Name pid=N, ip=A) " (Ray),
//                     torchrun "[rank3]:" / "[default0]:", SGLang
//                     "[YYYY-MM-DD HH:MM:SS DP0 TP3] "
//   logger headers    vLLM "LEVEL MM-DD HH:MM:SS [file:line] ",
//                     glog / c10 "[W1129 08:00:00.123456 pid file:line] ",
//                     NCCL "host:pid:tid [dev] NCCL INFO ",
//                     Python logging ("YYYY-MM-DD HH:MM:SS,mmm - name - LEVEL - ",
//                     "LEVEL:name:"), DeepSpeed "[YYYY-MM-DD HH:MM:SS,mmm] [INFO] [f.py:1:fn] "
//
// The recognisers are hand-written scanners, not regexes: this runs on every
// line of multi-GB logs. Stateless and thread-compatible.
#ifndef FAULTLINE_PARSE_LINE_PARSER_H_
#define FAULTLINE_PARSE_LINE_PARSER_H_

#include <string_view>

#include "parse/parsed_line.h"

namespace faultline::parse {

// Parses one cleaned line (no trailing newline).
ParsedLine ParseLine(std::string_view line);

// Recognises only the process prefixes (not the logger header): enough to
// attribute a line to its process, at a fraction of ParseLine's cost.
ParsedLine ParseProcessPrefixes(std::string_view line);

}  // namespace faultline::parse

#endif  // FAULTLINE_PARSE_LINE_PARSER_H_
