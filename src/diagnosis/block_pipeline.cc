#include "diagnosis/block_pipeline.h"

#include <algorithm>
#include <cstring>

#include "input/line_cleaner.h"

namespace faultline::diagnosis {

BlockPipeline::BlockPipeline(input::LineReader* reader, const rules::PatternMatcher& matcher, bool threaded)
    : reader_(reader), matcher_(matcher), threaded_(threaded) {
  for (size_t i = 0; i < (threaded_ ? kDepth : 1); ++i) {
    storage_.push_back(std::make_unique<ScannedBlock>());
    free_.push_back(storage_.back().get());
  }
  if (threaded_) producer_ = std::thread([this] { ProducerLoop(); });
}

BlockPipeline::~BlockPipeline() {
  if (producer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    producer_.join();
  }
}

bool BlockPipeline::Produce(ScannedBlock* out) {
  input::LineBlock block;
  if (!reader_->NextBlock(&block)) return false;
  out->data.clear();
  out->hits.clear();
  std::string_view data = block.data;
  if (input::NeedsCleaning(data)) {  // one check for the whole block
    size_t pos = 0;
    while (pos < data.size()) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) nl = data.size();
      input::CleanLineInto(data.substr(pos, nl - pos), &out->data);
      out->data.push_back('\n');
      pos = nl + 1;
    }
  } else {
    out->data.assign(data);  // the reader reuses its buffer
  }
  matcher_.Scan(out->data, &out->hits);
  auto by_end = [](const rules::PatternHit& a, const rules::PatternHit& b) { return a.end < b.end; };
  if (!std::is_sorted(out->hits.begin(), out->hits.end(), by_end)) {
    std::stable_sort(out->hits.begin(), out->hits.end(), by_end);
  }
  return true;
}

void BlockPipeline::ProducerLoop() {
  for (;;) {
    ScannedBlock* block = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
      if (stop_) return;
      block = free_.front();
      free_.pop_front();
    }
    bool more = Produce(block);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (more) ready_.push_back(block);
      else {
        free_.push_back(block);
        done_ = true;
      }
    }
    cv_.notify_all();
    if (!more) return;
  }
}

const ScannedBlock* BlockPipeline::Next() {
  if (!threaded_) {
    current_ = storage_[0].get();
    return Produce(current_) ? current_ : nullptr;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (current_) {
    free_.push_back(current_);
    current_ = nullptr;
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return done_ || !ready_.empty(); });
  if (ready_.empty()) return nullptr;
  current_ = ready_.front();
  ready_.pop_front();
  return current_;
}

}  // namespace faultline::diagnosis
