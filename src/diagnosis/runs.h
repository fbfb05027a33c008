// Runs: a log that holds more than one run of the same job (torchrun's --max-restarts relaunching its
// worker group, a script that relaunches `deepspeed`). Only the last run says how the job ended: the
// earlier run's crash or stall was already handled by the relaunch.
#ifndef FAULTLINE_DIAGNOSIS_RUNS_H_
#define FAULTLINE_DIAGNOSIS_RUNS_H_

#include <optional>
#include <string>

#include "diagnosis/findings.h"
#include "rules/rule_set.h"

namespace faultline::diagnosis {

// Where the last run of the job starts: the line after the latest run end (an event matched by a
// `run_end` rule) after which the job ran again - the same agent (a known process pid) reported another run end
// or was stopped, or a phase mark of a process that had already passed it came again (its latest mark
// after the run end, its first before). nullopt for a log of one run.
std::optional<events::LineInfo> LastRunStart(const Findings& f, const rules::RuleSet& rules);

// Drops what the earlier runs left in the findings of the run start's file (events, stops, progress and
// completion marks before it; a phase first reached earlier keeps only its mark in the last run) and adds
// a warning naming the line. Returns whether a relaunch was found.
bool KeepLastRun(const rules::RuleSet& rules, Findings* f);

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_RUNS_H_
