// Findings: what the scan of the inputs collected, before ranking.
// Bounded: events are capped (the earliest are kept: they hold the root
// cause), phases are kept once per (process, phase), facts once per name.
#ifndef FAULTLINE_DIAGNOSIS_FINDINGS_H_
#define FAULTLINE_DIAGNOSIS_FINDINGS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/event.h"
#include "mining/template_miner.h"
#include "report/triage_report.h"

namespace faultline::diagnosis {

struct PhaseHit {
  std::string phase;
  size_t rule = 0;
  events::LineInfo where;
  events::ProcessId process;
  parse::Timestamp time;
  bool completes = false;
};

struct ProcessStats {
  events::ProcessId process;
  int64_t lines = 0;
  int64_t errors = 0;
  events::LineInfo first_line;
  events::LineInfo last_line;
};

struct Findings {
  static constexpr size_t kMaxEvents = 20000;
  std::vector<events::Event> events;
  int64_t events_dropped = 0;
  std::vector<PhaseHit> phases;
  rules::Captures facts;  // latest value per name
  std::map<std::string, ProcessStats, std::less<>> processes;  // lookup by string_view
  std::vector<report::InputSummary> inputs;
  std::vector<std::string> warnings;
  std::optional<events::LineInfo> last_line;
  int64_t total_lines = 0;
  std::unique_ptr<mining::TemplateMiner> miner;  // set when templates are mined
};

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_FINDINGS_H_
