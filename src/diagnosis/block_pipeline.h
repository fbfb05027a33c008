// BlockPipeline: reads, cleans and scans blocks of lines ahead of the
// consumer, on scan threads, so that the Hyperscan scan of the next blocks
// overlaps the line walk of this one. Each scan thread takes the reader in
// turn to read (and decompress) one block, then cleans and scans it on its
// own; blocks are handed to the consumer in input order. With one core (or
// zero scan threads) the consumer reads and scans each block itself.
// Memory: at most kSlack blocks in flight beyond one per scan thread.
//
// Outer wrappers (parse/wrapper.h) are detected from the input's first lines
// and peeled from every line; peeling carries state from line to line, so it
// is done in input order, with the read.
//
// Next() is called by one consumer thread; the reader and the matcher are
// used only by the scan threads until the pipeline is destroyed.
#ifndef FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_
#define FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "input/line_reader.h"
#include "parse/parsed_line.h"
#include "parse/wrapper.h"
#include "rules/pattern_matcher.h"
#include "rules/rule_set.h"

namespace faultline::diagnosis {

struct ScannedBlock {
  std::string data;                     // whole cleaned lines, each ending in '\n'
  std::vector<rules::PatternHit> hits;  // sorted by end offset
  // When the input wears wrappers (parse/wrapper.h), `data` holds the peeled
  // lines and each line's wrapper identity is identities[line_identity[i]]
  // (index 0: none); both are empty for an unwrapped input.
  std::vector<uint32_t> line_identity;
  std::vector<std::string> identities;
  std::vector<int> identity_rank;  // rank the wrapper gives, -1 when none
  // Rule hits already confirmed on the scan thread (the pipeline's confirm
  // hook), one per (line, rule), in order of line end (the offset of the
  // line's '\n', or data.size()).
  struct Confirmed {
    size_t line_end;
    unsigned id;
    bool matched;
    rules::Captures captures;
  };
  std::vector<Confirmed> confirmed;
  // The block's lines, prepared on the scan thread by the same hook (the
  // stateless part of the line walk: where each line is, its hits, its
  // process prefix, and the full parse of a line with a hit), so that the
  // consumer's serial walk only applies them to its per-process state. Empty
  // when the hook prepares nothing.
  struct Line {
    uint32_t start;        // offset of the line in data
    uint32_t end;          // offset of its '\n' (or data.size())
    uint32_t rules_begin;  // its rule hits: rule_ids[rules_begin, rules_end), in order of first hit
    uint32_t rules_end;
    uint32_t structure;        // structural bits hit on the line
    int32_t parsed;            // index of its full parse in `parsed`, -1 when not parsed
    std::string_view process;  // the process its prefixes name (parse::ParseProcessPrefixes), into data
  };
  std::vector<Line> lines;
  std::vector<unsigned> rule_ids;
  std::vector<parse::ParsedLine> parsed;  // views into data
  // Runs of lines whose whole effect on the walk's state, when no traceback
  // is open, is summed up here: plain lines (no hit, or only benign hits) and
  // step lines (only training marks). The walk applies a run at once when its
  // state allows (log_scanner.cc), or walks its lines one by one.
  struct RunProcess {
    std::string_view process;  // into data
    uint32_t lines;            // lines of the run it wrote
    uint32_t last;             // index of its last line in the run
  };
  struct RunMark {  // the last line of the run that a (rule, process) marked
    unsigned rule;
    std::string_view process;   // into data
    uint32_t line;              // index in lines
    uint32_t confirmed;         // its captures: index in confirmed
    parse::Timestamp run_time;  // the latest time a line of the run up to it gives (invalid: none)
    parse::Timestamp own_time;  // the line's own time (its parse's)
  };
  // A phase mark its process had already reached (a served request's
  // line): each (rule, process) of the run, and the last line of the run at
  // which it was the line's last phase rule (the one the walk moves), -1
  // when never (Scanner::OnlyReachedPhases).
  struct RunReached {
    unsigned rule;
    std::string_view process;  // into data
    int64_t line;              // index in lines, -1: none
  };
  struct Run {
    uint32_t first, end;  // lines [first, end)
    uint32_t processes_begin, processes_end;
    uint32_t marks_begin, marks_end;      // in order of line, then of rule on the line
    uint32_t reached_begin, reached_end;  // in order of line (those with a line), a run without marks only
    uint32_t worded_begin, worded_end;    // fallback phase words on its lines, one per (rule, process)
    int32_t last_full = -1;           // the last step line (fully parsed by the walk), -1 when none
    parse::Timestamp latest_time;     // the latest time a line up to last_full gives
  };
  std::vector<Run> runs;
  std::vector<RunProcess> run_processes;
  std::vector<RunMark> run_marks;
  std::vector<RunReached> run_reached;
  std::vector<RunReached> run_worded;  // line unused: a fallback mark never moves
  // Lines a progress bar redrew ('\r' rewrites) from an earlier state of the
  // same bar: (index of the line, that state, cleaned), in order of line.
  // The line's text is its last state (input/line_cleaner.h).
  std::vector<std::pair<uint32_t, std::string>> redraws;
  std::string scratch;   // cleaning buffer (swapped with data)
  bool cleaned = false;  // data is already cleaned (and peeled)
  int64_t seq = 0;
};

// How many scan threads the pipelines created on the calling thread use:
// -1 (the default) one per core, 0 none.
// ScanInputs sets it when it scans several files at once.
void SetPipelineScanThreads(int n);

class BlockPipeline {
 public:
  static constexpr size_t kSlack = 2;
  // `wrappers` (may be null) are detected from the input's first lines and
  // peeled from every line before the scan.
  // `confirm` (may be empty) runs on each block after its scan, on the scan
  // thread: it may fill the block's `confirmed`.
  using ConfirmHook = std::function<void(ScannedBlock*)>;
  BlockPipeline(input::LineReader* reader, const rules::PatternMatcher& matcher, bool threaded,
                const parse::WrapperSet* wrappers = nullptr, ConfirmHook confirm = {});
  ~BlockPipeline();
  BlockPipeline(const BlockPipeline&) = delete;
  BlockPipeline& operator=(const BlockPipeline&) = delete;

  // The next block, or nullptr at the end of the input. Valid until the
  // next call.
  const ScannedBlock* Next();

  // The wrappers detected ("" when none). Valid once Next() returned a block.
  std::string wrappers() const;

 private:
  bool Read(ScannedBlock* out);  // false at the end of the input; under read_mu_
  void Scan(ScannedBlock* block) const;
  void Peel(ScannedBlock* out);  // applies stack_ to out->data; under read_mu_
  void ScanLoop();

  input::LineReader* reader_;
  const rules::PatternMatcher& matcher_;
  const parse::WrapperSet* wrappers_;
  ConfirmHook confirm_;
  std::vector<std::unique_ptr<ScannedBlock>> storage_;
  ScannedBlock* current_ = nullptr;

  std::mutex read_mu_;  // the reader and the peeling state, one scan thread at a time
  int64_t next_read_ = 0;
  bool eof_ = false;
  static constexpr size_t kSampleLines = 200;    // non-empty lines the detection reads at most
  static constexpr size_t kMinSampleLines = 32;  // detection is final once it has read this many
  bool detected_ = false;
  std::vector<std::string> sample_;
  parse::WrapperStack stack_;
  std::string peel_buffer_;
  std::string last_identity_;  // of the previous peeled line
  int last_rank_ = -1;
  std::unordered_map<std::string, uint32_t> identity_ids_;  // of the block being peeled

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ScannedBlock*> free_;
  std::map<int64_t, ScannedBlock*> ready_;  // by sequence number
  int64_t next_out_ = 0;
  int64_t end_seq_ = -1;  // the sequence number the input ended at, once known
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_
