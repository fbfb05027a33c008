// TemplateMiner: groups log messages into templates in one streaming pass
// ("Loading weights took <*> seconds" x 64), so that a repeated line is
// reported once and a rare line stands out by its template's count.
//
// The algorithm (docs/mining.md explains the choice) is a Drain-style fixed
// depth tree, with Brain's observation that a constant takes few values and a
// variable many, made online:
//   1. Masking first (mining/masker.h): numbers, hex ids, IPs, UUIDs, paths,
//      pids and ranks become <*> before any comparison.
//   2. An exact-match cache on the masked message: a message whose masked
//      form was seen before goes straight to its template (the common case in
//      real logs, and why one core does > 1 M lines/s).
//   3. Otherwise the message is routed by its token count and its first
//      `prefix_tokens` tokens without a variable to a leaf, and joins the
//      leaf's most similar group if the share of positions that agree (a <*>
//      agrees with anything) is at least `similarity`; else it starts a group.
//   4. Inside a group, a position where members differ is a variable only
//      once it has taken more than `variant_values` distinct values; until
//      then each combination of values at such positions is its own template
//      ("... for user root" and "... for user admin" stay apart while
//      "Invalid user <*>" with many names is one). When a position crosses
//      the limit, the templates that differed only there merge: the younger
//      id then forwards to the older one. Two values one of which masking
//      replaced as a whole, past a common key ("<*>" / "admin",
//      "rhost=<*>" / "rhost=csnsu.nsuok.edu"), make the position a variable
//      at once: masking has already said it holds a variable. variant_values 0 or 1 is plain
//      Drain.
//
// Memory is bounded: at most `max_templates` templates live; creating one
// more evicts the least recently matched template (Drain3's LRU policy); a
// group with no template left is dropped. An evicted id is no longer found
// (Find() returns nullptr). The cache holds at most `cache_entries` masked
// messages and is cleared when full; a group remembers at most
// variant_values + 1 values per position.
//
// Not thread-safe: one miner per stream or per thread.
#ifndef FAULTLINE_MINING_TEMPLATE_MINER_H_
#define FAULTLINE_MINING_TEMPLATE_MINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mining/masker.h"
#include "util/status.h"

namespace faultline::mining {

using TemplateId = uint32_t;
inline constexpr TemplateId kNoTemplate = UINT32_MAX;

struct MinerOptions {
  MaskOptions mask;
  // Share of positions that must agree for a message to join a group.
  // The defaults here match the "default" profile of rules/mining.yaml.
  double similarity = 0.8;
  // Tokens after the length used to route a message to a leaf (Drain's
  // depth - 2).
  int prefix_tokens = 1;
  // Route by the first prefix_tokens tokens that hold no variable (true), or
  // by the first prefix_tokens tokens with variables sent to the <*> child
  // (false, Drain).
  bool skip_variable_prefix = true;
  // Distinct values a position of a group may take before it becomes <*>
  // (0: at the first difference, as in Drain).
  size_t variant_values = 3;
  // Two values of a position one of which was masked whole make it a
  // variable at once (see 4. above).
  bool masked_value_is_variable = true;
  // Children per tree node before new tokens share the <*> child.
  size_t max_children = 100;
  // Live templates; one more evicts the least recently matched one.
  size_t max_templates = 50000;
  // Exact-match cache size (masked messages); 0 disables the cache.
  size_t cache_entries = 1 << 16;
};

// One template: the text with <*> for variables and how many messages it has
// absorbed (including those of templates merged into it).
class Template {
 public:
  TemplateId id() const { return id_; }
  const std::string& text() const { return text_; }
  uint64_t count() const { return count_; }
  // Ids of templates that were merged into this one.
  const std::vector<TemplateId>& merged_ids() const { return merged_ids_; }

 private:
  friend class TemplateMiner;
  TemplateId id_ = kNoTemplate;
  std::string text_;
  uint64_t count_ = 0;
  std::vector<TemplateId> merged_ids_;
  std::vector<std::string> tokens_;  // constants, this template's values, <*>
  std::string key_;                  // its values at the group's variant positions
  uint32_t group_ = 0;
  uint32_t lru_prev_ = UINT32_MAX;
  uint32_t lru_next_ = UINT32_MAX;
  bool live_ = false;
};

// Lets the maps below be probed with a string_view (no copy per lookup).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

class TemplateMiner {
 public:
  // With only the built-in mask classes (cannot fail).
  TemplateMiner();
  // Fails when a mask pattern does not compile.
  static Result<std::unique_ptr<TemplateMiner>> Create(MinerOptions options);
  ~TemplateMiner();
  TemplateMiner(const TemplateMiner&) = delete;
  TemplateMiner& operator=(const TemplateMiner&) = delete;

  // Masks `message`, assigns it to a template (new or existing) and returns
  // the template's id. The id stays valid until that template is evicted; if
  // the template is later merged into another, the id forwards to it.
  TemplateId Add(std::string_view message);

  // The live template for `id` (following merges), or nullptr if evicted or
  // unknown. The pointer is valid until the next Add().
  const Template* Find(TemplateId id) const;
  // REQUIRES: Find(id) != nullptr.
  const Template& Get(TemplateId id) const { return *Find(id); }

  // Number of live templates.
  size_t size() const { return live_count_; }
  // Templates evicted so far to respect max_templates.
  uint64_t evicted() const { return evicted_; }
  // Messages added so far.
  uint64_t messages() const { return messages_; }

  // Live templates in id order.
  std::vector<const Template*> Templates() const;

  const MinerOptions& options() const { return options_; }

 private:
  struct Node {
    StringMap<uint32_t> children;
    std::vector<uint32_t> groups;  // held by a leaf
  };
  // How a position of a group behaves.
  enum class Slot : uint8_t { kConstant, kVariant, kVariable };
  struct Position {
    Slot kind = Slot::kConstant;
    std::vector<std::string> values;  // kVariant: the values seen
    // kVariable: what all its values start and end with, so that the text
    // reads "rhost=<*>" or "[Thunderbird_<*>]" rather than "<*>".
    std::string prefix;
    std::string suffix;
    size_t shortest = SIZE_MAX;  // length of the shortest value
    // Narrows prefix and suffix to fit `value` too; true if they changed.
    bool Fit(std::string_view value);
    // prefix<*>suffix, the two never overlapping in the shortest value.
    std::string Render() const;
  };
  // Messages that routed to one leaf and were similar enough: a Drain
  // cluster. Its templates differ at the kVariant positions.
  struct Group {
    std::vector<std::string> tokens;  // <*> wherever members differ
    std::vector<std::string> separators;
    std::vector<Position> positions;
    StringMap<uint32_t> templates;  // key -> template slot
    uint32_t node = 0;
    bool live = false;
  };

  TemplateMiner(MinerOptions options, std::unique_ptr<Masker> masker);
  uint32_t Leaf(const MaskedMessage& masked);
  uint32_t NewGroup(const MaskedMessage& masked, uint32_t leaf);
  // Widens group `g` to cover `masked`; re-keys its templates if a position
  // changed kind.
  void Widen(uint32_t g, const MaskedMessage& masked);
  void Rekey(uint32_t g);
  std::string KeyOf(const Group& group, const std::vector<std::string_view>& tokens) const;
  std::string KeyOf(const Group& group, const std::vector<std::string>& tokens) const;
  uint32_t TemplateFor(uint32_t g, const MaskedMessage& masked);
  void Render(Template& t, const Group& group);
  uint32_t MergeInto(uint32_t from, uint32_t into);
  void Evict(uint32_t slot);
  void Retire(uint32_t slot);
  void LruUnlink(uint32_t slot);
  void LruPushFront(uint32_t slot);

  MinerOptions options_;
  std::unique_ptr<Masker> masker_;
  std::vector<Node> nodes_;  // nodes_[0] is the root
  std::vector<Group> groups_;
  std::vector<uint32_t> free_groups_;
  std::vector<Template> slots_;
  std::vector<uint32_t> free_slots_;
  std::unordered_map<TemplateId, uint32_t> id_to_slot_;  // own and merged ids
  struct CacheEntry {
    TemplateId id;
    uint32_t slot;  // where id lived when cached
  };
  StringMap<CacheEntry> cache_;
  uint32_t lru_head_ = UINT32_MAX;  // most recently matched
  uint32_t lru_tail_ = UINT32_MAX;
  TemplateId next_id_ = 0;
  size_t live_count_ = 0;
  uint64_t evicted_ = 0;
  uint64_t messages_ = 0;
};

}  // namespace faultline::mining

#endif  // FAULTLINE_MINING_TEMPLATE_MINER_H_
