#include "rules/pattern_matcher.h"

#include <fmt/format.h>
#include <hs/hs.h>

#include <atomic>
#include <cstdlib>

namespace faultline::rules {

namespace {
std::atomic<uint64_t> matcher_serials{0};
}  // namespace

struct PatternMatcher::Impl {
  uint64_t serial = ++matcher_serials;  // unique per database in the process (an address may be reused)
  hs_database_t* db = nullptr;
  mutable hs_scratch_t* scratch = nullptr;
  ~Impl() {
    if (scratch) hs_free_scratch(scratch);
    if (db) hs_free_database(db);
  }
};

PatternMatcher::~PatternMatcher() = default;

std::string ToHyperscanPattern(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      out += p.substr(i, 2);
      ++i;
      continue;
    }
    // (?P<name>  ->  (
    if (p.substr(i, 4) == "(?P<") {
      size_t close = p.find('>', i);
      if (close != std::string_view::npos) {
        out += '(';
        i = close;
        continue;
      }
    }
    out += p[i];
  }
  return out;
}

Result<std::unique_ptr<PatternMatcher>> PatternMatcher::Compile(
    const std::vector<std::pair<unsigned, std::string>>& patterns) {
  std::vector<std::string> converted;
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  converted.reserve(patterns.size());
  for (const auto& [id, pattern] : patterns) {
    converted.push_back(ToHyperscanPattern(pattern));
    ids.push_back(id);
    flags.push_back(HS_FLAG_PREFILTER | HS_FLAG_MULTILINE);
  }
  for (const auto& c : converted) exprs.push_back(c.c_str());
  std::unique_ptr<PatternMatcher> m(new PatternMatcher());
  m->impl_ = std::make_unique<Impl>();
  if (exprs.empty()) return m;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                       nullptr, &m->impl_->db, &err) != HS_SUCCESS) {
    std::string msg = err && err->message ? err->message : "unknown error";
    int at = err ? err->expression : -1;
    hs_free_compile_error(err);
    std::string which = at >= 0 && static_cast<size_t>(at) < patterns.size() ? patterns[at].second : "?";
    return Status::InvalidArgument(fmt::format("pattern '{}' cannot be compiled: {}", which, msg));
  }
  if (hs_alloc_scratch(m->impl_->db, &m->impl_->scratch) != HS_SUCCESS) {
    return Status::Internal("hyperscan: cannot allocate scratch space");
  }
  return m;
}

Result<std::string> PatternMatcher::Serialize() const {
  if (!impl_->db) return std::string();
  char* bytes = nullptr;
  size_t length = 0;
  if (hs_serialize_database(impl_->db, &bytes, &length) != HS_SUCCESS) {
    return Status::Internal("hyperscan: cannot serialize database");
  }
  std::string out(bytes, length);
  free(bytes);
  return out;
}

Result<std::unique_ptr<PatternMatcher>> PatternMatcher::Deserialize(std::string_view bytes) {
  std::unique_ptr<PatternMatcher> m(new PatternMatcher());
  m->impl_ = std::make_unique<Impl>();
  if (bytes.empty()) return m;
  if (hs_deserialize_database(bytes.data(), bytes.size(), &m->impl_->db) != HS_SUCCESS) {
    return Status::DataLoss("hyperscan: serialized database does not load on this machine");
  }
  if (hs_alloc_scratch(m->impl_->db, &m->impl_->scratch) != HS_SUCCESS) {
    return Status::Internal("hyperscan: cannot allocate scratch space");
  }
  return m;
}

uint64_t PatternMatcher::Fingerprint(const std::vector<std::pair<unsigned, std::string>>& patterns) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  mix(hs_version());
  mix(std::to_string(HS_FLAG_PREFILTER | HS_FLAG_MULTILINE));
  for (const auto& [id, pattern] : patterns) {
    mix(std::to_string(id));
    mix(pattern);
  }
  return h;
}

namespace {
int OnMatch(unsigned int id, unsigned long long /*from*/, unsigned long long to, unsigned int /*flags*/, void* ctx) {
  static_cast<std::vector<PatternHit>*>(ctx)->push_back({id, static_cast<size_t>(to)});
  return 0;
}
}  // namespace

// Hyperscan scratch space may be used by one thread at a time: each thread
// keeps its own, grown to fit every database it scans. hs_alloc_scratch
// takes ~0.3 ms even when the scratch already fits (once per block: ~40 ms
// of a 128 MiB log, and most of a small file's scan), so it is called only
// when the thread scans another database than the last one.
struct ThreadScratch {
  hs_scratch_t* scratch = nullptr;
  uint64_t fits = 0;  // the serial of the database it was last grown for
  ~ThreadScratch() {
    if (scratch) hs_free_scratch(scratch);
  }
};

void PatternMatcher::Scan(std::string_view data, std::vector<PatternHit>* hits) const {
  if (!impl_->db || data.empty()) return;
  thread_local ThreadScratch tls;
  if (tls.fits != impl_->serial) {
    if (hs_alloc_scratch(impl_->db, &tls.scratch) != HS_SUCCESS) std::abort();  // out of memory
    tls.fits = impl_->serial;
  }
  hs_scan(impl_->db, data.data(), static_cast<unsigned>(data.size()), 0, tls.scratch, OnMatch, hits);
}

}  // namespace faultline::rules
