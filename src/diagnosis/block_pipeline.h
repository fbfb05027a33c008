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
#include <vector>

#include "input/line_reader.h"
#include "rules/pattern_matcher.h"

namespace faultline::diagnosis {

struct ScannedBlock {
  std::string data;                     // whole cleaned lines, each ending in '\n'
  std::vector<rules::PatternHit> hits;  // sorted by end offset
};

class BlockPipeline {
 public:
  static constexpr size_t kDepth = 3;
  BlockPipeline(input::LineReader* reader, const rules::PatternMatcher& matcher, bool threaded);
  ~BlockPipeline();
  BlockPipeline(const BlockPipeline&) = delete;
  BlockPipeline& operator=(const BlockPipeline&) = delete;

  // The next block, or nullptr at the end of the input. Valid until the
  // next call.
  const ScannedBlock* Next();

 private:
  bool Produce(ScannedBlock* out);  // false at the end of the input
  void ProducerLoop();

  input::LineReader* reader_;
  const rules::PatternMatcher& matcher_;
  const bool threaded_;
  std::vector<std::unique_ptr<ScannedBlock>> storage_;
  ScannedBlock* current_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ScannedBlock*> free_;
  std::deque<ScannedBlock*> ready_;
  bool done_ = false;
  bool stop_ = false;
  std::thread producer_;
};

}  // namespace faultline::diagnosis

#endif  // FAULTLINE_DIAGNOSIS_BLOCK_PIPELINE_H_
