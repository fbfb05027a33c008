// BlockPipeline: reads, cleans and scans blocks of lines one step ahead of
// the consumer, on a second thread when the machine has a second core, so
// that the Hyperscan scan of block N+1 overlaps the line walk of block N
// (each is about half the work). Memory: at most kDepth blocks in flight.
//
// Next() is called by one consumer thread; the reader and the matcher are
// used only by the producer until the pipeline is destroyed.
#ifndef FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_
#define FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "input/line_reader.h"
#include "parse/wrapper.h"
#include "rules/pattern_matcher.h"

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
};

class BlockPipeline {
 public:
  static constexpr size_t kDepth = 3;
  // `wrappers` (may be null) are detected from the input's first lines and
  // peeled from every line before the scan.
  BlockPipeline(input::LineReader *reader, const rules::PatternMatcher &matcher, bool threaded,
                const parse::WrapperSet *wrappers = nullptr);
  ~BlockPipeline();
  BlockPipeline(const BlockPipeline &) = delete;
  BlockPipeline &operator=(const BlockPipeline &) = delete;

  // The next block, or nullptr at the end of the input. Valid until the
  // next call.
  const ScannedBlock *Next();

  // The wrappers detected ("" when none). Valid once Next() returned a block.
  std::string wrappers() const;

 private:
  bool Produce(ScannedBlock *out);  // false at the end of the input
  void Peel(ScannedBlock *out);     // applies stack_ to out->data
  void ProducerLoop();

  input::LineReader *reader_;
  const rules::PatternMatcher &matcher_;
  const bool threaded_;
  const parse::WrapperSet *wrappers_;
  static constexpr size_t kSampleLines = 200;    // non-empty lines the detection reads at most
  static constexpr size_t kMinSampleLines = 32;  // detection is final once it has read this many
  bool detected_ = false;
  std::vector<std::string> sample_;
  parse::WrapperStack stack_;
  std::string peel_buffer_;
  std::string last_identity_;  // of the previous peeled line
  int last_rank_ = -1;
  std::unordered_map<std::string, uint32_t> identity_ids_;  // of the block being peeled
  std::vector<std::unique_ptr<ScannedBlock>> storage_;
  ScannedBlock *current_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ScannedBlock *> free_;
  std::deque<ScannedBlock *> ready_;
  bool done_ = false;
  bool stop_ = false;
  std::thread producer_;
};

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_
