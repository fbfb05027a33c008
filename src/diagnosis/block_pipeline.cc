#include "diagnosis/block_pipeline.h"

#include <algorithm>
#include <cstring>

#include "input/line_cleaner.h"

namespace faultline::diagnosis {

BlockPipeline::BlockPipeline(input::LineReader *reader, const rules::PatternMatcher &matcher, bool threaded,
                             const parse::WrapperSet *wrappers)
    : reader_(reader), matcher_(matcher), threaded_(threaded), wrappers_(wrappers) {
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

bool BlockPipeline::Produce(ScannedBlock *out) {
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
  out->line_identity.clear();
  out->identities.clear();
  out->identity_rank.clear();
  if (!detected_ && wrappers_) {
    // The wrappers a file wears show on its first lines. A first block can be
    // a single line (the reader hands over what it has when the data ends at a
    // newline), so the sample grows over blocks until it is large enough.
    std::string_view rest = out->data;
    while (!rest.empty() && sample_.size() < kSampleLines) {
      size_t nl = rest.find('\n');
      std::string_view l = rest.substr(0, nl);
      if (!l.empty()) sample_.emplace_back(l);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    std::vector<std::string_view> views(sample_.begin(), sample_.end());
    stack_ = wrappers_->Detect(views);
    if (sample_.size() >= kMinSampleLines) {
      detected_ = true;
      sample_.clear();
      sample_.shrink_to_fit();
    }
  }
  if (!stack_.empty()) Peel(out);
  matcher_.Scan(out->data, &out->hits);
  auto by_end = [](const rules::PatternHit &a, const rules::PatternHit &b) { return a.end < b.end; };
  if (!std::is_sorted(out->hits.begin(), out->hits.end(), by_end)) {
    std::stable_sort(out->hits.begin(), out->hits.end(), by_end);
  }
  return true;
}

void BlockPipeline::Peel(ScannedBlock *out) {
  peel_buffer_.clear();
  identity_ids_.clear();
  out->identities.push_back("");
  out->identity_rank.push_back(-1);
  std::string_view data = out->data;
  std::string scratch;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    parse::PeeledLine p = stack_.Peel(data.substr(pos, nl - pos), &scratch);
    // Decoded JSON text may hold escapes and colours of its own.
    if (input::NeedsCleaning(p.inner))
      input::CleanLineInto(p.inner, &peel_buffer_);
    else
      peel_buffer_.append(p.inner);
    peel_buffer_.push_back('\n');
    // A line the wrappers did not mark (a progress bar's '\r' rewrite kept
    // only the job's text) came from the stream of the line before it.
    if (!p.peeled) p.identity = last_identity_, p.rank = last_rank_;
    last_identity_ = p.identity;
    last_rank_ = p.rank;
    uint32_t id = 0;
    if (!p.identity.empty()) {
      auto [it, added] = identity_ids_.try_emplace(p.identity, static_cast<uint32_t>(out->identities.size()));
      if (added) {
        out->identities.push_back(p.identity);
        out->identity_rank.push_back(p.rank);
      }
      id = it->second;
    }
    out->line_identity.push_back(id);
    pos = nl + 1;
  }
  out->data.swap(peel_buffer_);
}

std::string BlockPipeline::wrappers() const { return stack_.Describe(); }

void BlockPipeline::ProducerLoop() {
  for (;;) {
    ScannedBlock *block = nullptr;
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
      if (more)
        ready_.push_back(block);
      else {
        free_.push_back(block);
        done_ = true;
      }
    }
    cv_.notify_all();
    if (!more) return;
  }
}

const ScannedBlock *BlockPipeline::Next() {
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
