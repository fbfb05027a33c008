#include "diagnosis/block_pipeline.h"

#include <algorithm>
#include <cstring>

#include "input/line_cleaner.h"

namespace faultline::diagnosis {

namespace {

thread_local int scan_threads_hint = -1;

// Blocks a finished pipeline leaves to the next one on its thread. A block's
// buffers grow to a block's size over its first use; a directory of many
// small files built a pipeline per file, and filling fresh buffers (page
// faults, copies on growth) cost more than scanning them. Every field is
// reset when a block is read into (blocks are reused within a pipeline), so
// a reused block carries nothing over. At most kKeptBlocks are kept: memory
// stays bounded by one pipeline's.
constexpr size_t kKeptBlocks = 8;
thread_local std::vector<std::unique_ptr<ScannedBlock>> kept_blocks;

std::unique_ptr<ScannedBlock> TakeBlock() {
  if (kept_blocks.empty()) return std::make_unique<ScannedBlock>();
  std::unique_ptr<ScannedBlock> b = std::move(kept_blocks.back());
  kept_blocks.pop_back();
  return b;
}

void CleanInto(std::string_view data, std::string* out, std::vector<std::pair<uint32_t, std::string>>* redraws) {
  out->clear();
  size_t pos = 0;
  std::string earlier;
  for (uint32_t index = 0; pos < data.size(); ++index) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    input::CleanLineInto(data.substr(pos, nl - pos), out, &earlier);
    if (!earlier.empty()) redraws->emplace_back(index, std::move(earlier));
    out->push_back('\n');
    pos = nl + 1;
  }
}

}  // namespace

void SetPipelineScanThreads(int n) { scan_threads_hint = n; }

BlockPipeline::BlockPipeline(input::LineReader* reader, const rules::PatternMatcher& matcher, bool threaded,
                             const parse::WrapperSet* wrappers, ConfirmHook confirm)
    : reader_(reader), matcher_(matcher), wrappers_(wrappers), confirm_(std::move(confirm)) {
  int n = 0;
  if (threaded) {
    n = scan_threads_hint;
    // The consumer's walk is lighter than the scan: one scan thread per core.
    if (n < 0) n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  const size_t blocks = n == 0 ? 1 : static_cast<size_t>(n) + kSlack;
  for (size_t i = 0; i < blocks; ++i) {
    storage_.push_back(TakeBlock());
    free_.push_back(storage_.back().get());
  }
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { ScanLoop(); });
}

BlockPipeline::~BlockPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  for (auto& b : storage_) {
    if (kept_blocks.size() < kKeptBlocks) kept_blocks.push_back(std::move(b));
  }
}

bool BlockPipeline::Read(ScannedBlock* out) {
  std::lock_guard<std::mutex> lock(read_mu_);
  if (eof_) return false;
  input::LineBlock block;
  if (!reader_->NextBlock(&block)) {
    eof_ = true;
    std::lock_guard<std::mutex> l(mu_);
    end_seq_ = next_read_;
    return false;
  }
  out->seq = next_read_++;
  out->line_identity.clear();
  out->identities.clear();
  out->identity_rank.clear();
  out->cleaned = false;
  out->redraws.clear();
  // Cleaning is left to the scan threads, but for the first block (the
  // wrappers show on the cleaned first lines) and for a wrapped input
  // (peeling is in input order).
  const bool clean_here = !detected_ || !stack_.empty();
  if (clean_here && input::NeedsCleaning(block.data)) {  // one check for the whole block
    CleanInto(block.data, &out->data, &out->redraws);
  } else {
    out->data.assign(block.data);  // the reader reuses its buffer
  }
  out->cleaned = clean_here;
  if (!detected_ && wrappers_) {
    // The wrappers a file wears show on its first lines. A first block can be
    // a single line (the reader hands over what it has when the data ends at a
    // newline), so the sample grows over blocks until it is large enough.
    // A wrapper writes its prefix at the start of each raw line; a progress bar's '\r' redraws after it
    // overwrite it in the cleaned line ("worker-1  | 10%|█ ...\r 20%|██ ..." cleans to " 20%|██ ..."). So each
    // sample line is the raw line's text before its first '\r', cleaned, when that holds anything but
    // blanks (the cleaned line otherwise: a bare bar that starts with its own '\r').
    std::string_view rest = block.data;
    std::string seg_clean;
    while (!rest.empty() && sample_.size() < kSampleLines) {
      size_t nl = rest.find('\n');
      std::string_view raw = rest.substr(0, nl);
      const size_t cr = raw.find('\r');
      std::string_view seg = raw.substr(0, cr);
      if (cr != std::string_view::npos && seg.find_first_not_of(" \t") != std::string_view::npos) {
        seg_clean.clear();
        if (input::NeedsCleaning(seg)) {
          input::CleanLineInto(seg, &seg_clean);
        } else {
          seg_clean.assign(seg);
        }
        if (!seg_clean.empty()) sample_.emplace_back(seg_clean);
      } else if (!raw.empty()) {
        if (input::NeedsCleaning(raw)) {
          // The blanks before a bare bar's first '\r' are a paste's indentation, when it has one
          // ("    \r 10%|█ ..."): the redraw does not take them from the sample.
          seg_clean.assign(cr == std::string_view::npos ? std::string_view() : seg);
          const size_t indentation = seg_clean.size();
          input::CleanLineInto(raw, &seg_clean);
          if (seg_clean.size() > indentation) sample_.emplace_back(seg_clean);
        } else {
          sample_.emplace_back(raw);
        }
      }
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    std::vector<std::string_view> views(sample_.begin(), sample_.end());
    stack_ = wrappers_->Detect(views);
    if (sample_.size() >= kMinSampleLines) {
      detected_ = true;
      sample_.clear();
      sample_.shrink_to_fit();
    }
  } else {
    detected_ = true;
  }
  if (!stack_.empty()) Peel(out);
  return true;
}

void BlockPipeline::Peel(ScannedBlock* out) {
  peel_buffer_.clear();
  identity_ids_.clear();
  out->identities.push_back("");
  out->identity_rank.push_back(-1);
  std::string_view data = out->data;
  std::string scratch;
  std::string earlier;
  const size_t cleaned_redraws = out->redraws.size();
  size_t pos = 0;
  for (uint32_t index = 0; pos < data.size(); ++index) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) nl = data.size();
    parse::PeeledLine p = stack_.Peel(data.substr(pos, nl - pos), &scratch);
    // Decoded JSON text may hold escapes, colours and redraws of its own.
    if (!p.earlier.empty()) out->redraws.emplace_back(index, std::move(p.earlier));
    if (input::NeedsCleaning(p.inner)) {
      input::CleanLineInto(p.inner, &peel_buffer_, &earlier);
      if (!earlier.empty()) out->redraws.emplace_back(index, std::move(earlier));
    } else {
      peel_buffer_.append(p.inner);
    }
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
  if (cleaned_redraws != 0 && cleaned_redraws != out->redraws.size()) {
    std::stable_sort(out->redraws.begin(), out->redraws.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
}

std::string BlockPipeline::wrappers() const { return stack_.Describe(); }

void BlockPipeline::Scan(ScannedBlock* out) const {
  out->hits.clear();
  if (!out->cleaned && input::NeedsCleaning(out->data)) {  // one check for the whole block
    CleanInto(out->data, &out->scratch, &out->redraws);
    out->data.swap(out->scratch);
  }
  matcher_.Scan(out->data, &out->hits);
  // In order of end, and at one end the higher id first: Hyperscan reports the matches that end at one offset in
  // an order of its compiled database, which a rule added anywhere (or the gated database's other patterns)
  // changes, and the phase marks a line records must not depend on it (RunWalkTest.GatedRulesFindWhatTheFullScanFinds
  // failed once two rules were added). Higher id first is the order the database gave the golden logs (their
  // phase records name the same rules as before).
  auto by_end = [](const rules::PatternHit& a, const rules::PatternHit& b) {
    return a.end < b.end || (a.end == b.end && a.id > b.id);
  };
  // Hyperscan reports in order of end already: only the few hits at one end
  // need moving, in place (a stable sort of every block's hits cost 13% of a
  // step log's scan, its merge buffer included).
  std::vector<rules::PatternHit>& hits = out->hits;
  bool ends_in_order = true;
  for (size_t i = 1; i < hits.size() && ends_in_order; ++i) ends_in_order = hits[i - 1].end <= hits[i].end;
  if (!ends_in_order) {
    std::stable_sort(hits.begin(), hits.end(), by_end);
  } else {
    for (size_t i = 1; i < hits.size(); ++i) {
      if (!by_end(hits[i], hits[i - 1])) continue;
      const rules::PatternHit hit = hits[i];
      size_t j = i;
      for (; j > 0 && by_end(hit, hits[j - 1]); --j) hits[j] = hits[j - 1];
      hits[j] = hit;
    }
  }
  out->confirmed.clear();
  if (confirm_) confirm_(out);
}

void BlockPipeline::ScanLoop() {
  for (;;) {
    ScannedBlock* block = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || end_seq_ >= 0 || !free_.empty(); });
      if (stop_ || end_seq_ >= 0) return;
      block = free_.front();
      free_.pop_front();
    }
    if (!Read(block)) {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(block);
      cv_.notify_all();
      return;
    }
    Scan(block);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_.emplace(block->seq, block);
    }
    cv_.notify_all();
  }
}

const ScannedBlock* BlockPipeline::Next() {
  if (threads_.empty()) {
    current_ = storage_[0].get();
    if (!Read(current_)) return nullptr;
    Scan(current_);
    return current_;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (current_) {
    free_.push_back(current_);
    current_ = nullptr;
    cv_.notify_all();
  }
  cv_.wait(lock, [this] { return ready_.count(next_out_) || (end_seq_ >= 0 && next_out_ >= end_seq_); });
  auto it = ready_.find(next_out_);
  if (it == ready_.end()) return nullptr;
  current_ = it->second;
  ready_.erase(it);
  ++next_out_;
  return current_;
}

}  // namespace faultline::diagnosis
