// ScanInputs: every input scanned into one Findings, several files at once.
//
// Each file is scanned into its own Findings by a pool of threads (one per
// core, at most one per file); the per-file Findings are merged in file
// order as soon as every earlier file is merged, so the result is the one a
// sequential scan gives (events in file order under the same cap, the first
// phase mark per process, the latest fact, process counts summed). Ranking
// needs only the merged events. A template miner is stateful across files:
// with one, files are scanned in turn.
#ifndef FAULTLINE_DIAGNOSIS_SCAN_INPUTS_H_
#define FAULTLINE_DIAGNOSIS_SCAN_INPUTS_H_

#include <vector>

#include "diagnosis/findings.h"
#include "input/input_files.h"
#include "parse/wrapper.h"
#include "rules/rule_set.h"
#include "util/status.h"

namespace faultline::diagnosis {

// Scans files into *findings. A file that cannot be read is an error when it
// is the only input, otherwise a "(skipped)" warning. wrappers (may be
// null): the outer wrappers to detect and peel. threads: 0 = one per core.
Status ScanInputs(const std::vector<input::InputFile>& files, const rules::RuleSet& rules,
                  const parse::WrapperSet* wrappers, Findings* findings, unsigned threads = 0);

// Appends one file's Findings to the merged ones (files in order).
void MergeFindings(Findings&& from, Findings* into);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_SCAN_INPUTS_H_
