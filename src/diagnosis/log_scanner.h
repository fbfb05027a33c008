// LogScanner: one streaming pass over one input, feeding Findings.
//
// Per block of lines: clean the block only if it holds bytes that need it,
// scan it once with the shared Hyperscan database (rules + structural
// patterns), then walk its lines; a line is parsed and handed to the
// EventBuilder when it has a hit or while a traceback is open. Phase and
// fact rules are recorded as they match.
#ifndef FAULTLINE_DIAGNOSIS_LOG_SCANNER_H_
#define FAULTLINE_DIAGNOSIS_LOG_SCANNER_H_

#include <string>

#include "diagnosis/findings.h"
#include "input/input_files.h"
#include "parse/wrapper.h"
#include "rules/rule_set.h"
#include "util/status.h"

namespace faultline::diagnosis {

// The rule set with the structural patterns compiled in. `gate`: gated rules
// are found by their literals (rules::RuleSet::GateLiterals; tests compare
// the scan without).
Result<std::unique_ptr<rules::RuleSet>> BuildScanRuleSet(std::vector<rules::Rule> rules, bool gate = true);

// Scans one input into *findings. A damaged input (truncated archive) adds a
// warning and keeps what was read; an unreadable one returns the error.
// need_times: parse every line's timestamp (to order several inputs).
// wrappers (may be null): the outer wrappers to detect and peel.
// tuning: the block size and whether runs of plain and step lines are
// applied at once (tests compare the walks; the result is the same).
// The block size for this machine: 256 KiB up to 4 cores, 1 MiB above.
// bench/triage (--mb 256, 3 runs): on 2 cores 256 KiB took 0.46-0.82x the
// wall time of 1 MiB on single files (page faults were a fifth of a step
// log's scan); on 16 cores it took 1.0-1.44x (rank-steps 1.44, vllm-phases
// 1.27, .zst 1.27).
size_t AutoBlockBytes();

struct ScanTuning {
  // 0: chosen by the cores (AutoBlockBytes). A block's buffers (its lines,
  // hits, parses, confirmations) are several times its bytes and a pipeline
  // holds one block per scan thread and two more, so the block size trades
  // first-touch page faults (small blocks win on few cores) against the
  // hand-offs between scan threads and the serial walk (large blocks win on
  // many).
  size_t block_bytes = 0;
  bool runs = true;
  int64_t* runs_applied = nullptr;       // when set, counts the runs applied at once
  int64_t* step_runs_applied = nullptr;  // ... and those of them that moved training marks
  // A line of the same shape as the line before it (the same text but for
  // its digits) with the same pattern hits takes that line's resolved hits
  // when every rule confirmed there is digit-blind (rules::RuleSet::DigitBlind).
  bool reuse_shapes = true;
};
Status ScanInput(const input::InputFile& file, int file_index, bool need_times, const rules::RuleSet& rules,
                 const parse::WrapperSet* wrappers, Findings* findings, const ScanTuning& tuning = {});

// False when no timestamp the line parser reads can be in the line (it has
// no "HH:MM:SS" clock): such a line's time needs no parse.
bool MayCarryTime(std::string_view line);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_LOG_SCANNER_H_
