#include "mining/template_miner.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace faultline::mining {
namespace {

// A value that masking turned into a variable as a whole ("<*>", "<*>,",
// "[<*>]"): such a position holds a variable.
bool IsMaskedValue(std::string_view token) {
  auto punct = [](char c) { return c != '<' && c != '>' && c != '*' && !std::isalnum(static_cast<unsigned char>(c)); };
  while (!token.empty() && punct(token.front())) token.remove_prefix(1);
  while (!token.empty() && punct(token.back())) token.remove_suffix(1);
  return token == kWildcard;
}

// True when `a` and `b` differ by a masked value: after their common prefix
// (the key in "rhost=<*>" / "rhost=csnsu.nsuok.edu"), one is masked whole.
bool DifferByMaskedValue(std::string_view a, std::string_view b) {
  size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k] && a[k] != '<') ++k;
  // An empty value ("rhost=") is an absence, not one more value.
  if (k == a.size() || k == b.size()) return false;
  return IsMaskedValue(a.substr(k)) || IsMaskedValue(b.substr(k));
}

}  // namespace

TemplateMiner::TemplateMiner() : TemplateMiner(MinerOptions{}, std::move(Masker::Create(MaskOptions{}).value())) {}

TemplateMiner::TemplateMiner(MinerOptions options, std::unique_ptr<Masker> masker)
    : options_(std::move(options)), masker_(std::move(masker)) {
  nodes_.emplace_back();
  if (options_.max_templates == 0) options_.max_templates = 1;
  if (options_.max_children == 0) options_.max_children = 1;
}

TemplateMiner::~TemplateMiner() = default;

Result<std::unique_ptr<TemplateMiner>> TemplateMiner::Create(MinerOptions options) {
  auto masker = Masker::Create(options.mask);
  if (!masker.ok()) return masker.status();
  return std::unique_ptr<TemplateMiner>(new TemplateMiner(std::move(options), std::move(masker.value())));
}

TemplateId TemplateMiner::Add(std::string_view message) {
  ++messages_;
  const MaskedMessage& masked = masker_->Mask(message);
  if (options_.cache_entries > 0) {
    auto hit = cache_.find(masked.key);
    if (hit != cache_.end()) {
      // The slot remembered with the id saves a lookup unless the template
      // was merged or evicted since.
      uint32_t slot = hit->second.slot;
      if (slot >= slots_.size() || !slots_[slot].live_ || slots_[slot].id_ != hit->second.id) {
        auto live = id_to_slot_.find(hit->second.id);
        slot = live == id_to_slot_.end() ? UINT32_MAX : live->second;
      }
      if (slot != UINT32_MAX) {
        hit->second.slot = slot;
        Template& t = slots_[slot];
        ++t.count_;
        if (lru_head_ != slot) {
          LruUnlink(slot);
          LruPushFront(slot);
        }
        return t.id_;
      }
      cache_.erase(hit);
    }
  }

  const uint32_t leaf = Leaf(masked);
  const size_t n = masked.tokens.size();
  uint32_t best = UINT32_MAX;
  size_t best_agree = 0;
  size_t best_exact = 0;
  for (uint32_t g : nodes_[leaf].groups) {
    const std::vector<std::string>& tokens = groups_[g].tokens;
    size_t agree = 0;
    size_t exact = 0;
    for (size_t i = 0; i < n; ++i) {
      if (tokens[i] == masked.tokens[i]) {
        ++agree;
        ++exact;
      } else if (tokens[i] == kWildcard) {
        ++agree;
      }
    }
    if (best == UINT32_MAX || agree > best_agree || (agree == best_agree && exact > best_exact)) {
      best = g;
      best_agree = agree;
      best_exact = exact;
    }
  }
  uint32_t g;
  if (best != UINT32_MAX && (n == 0 || static_cast<double>(best_agree) >= options_.similarity * n)) {
    g = best;
    Widen(g, masked);
  } else {
    g = NewGroup(masked, leaf);
  }
  const uint32_t slot = TemplateFor(g, masked);
  ++slots_[slot].count_;
  LruUnlink(slot);
  LruPushFront(slot);
  const TemplateId id = slots_[slot].id_;
  while (live_count_ > options_.max_templates) Evict(lru_tail_);
  if (options_.cache_entries > 0) {
    if (cache_.size() >= options_.cache_entries) cache_.clear();
    cache_.emplace(std::string(masked.key), CacheEntry{id, slot});
  }
  return id;
}

uint32_t TemplateMiner::Leaf(const MaskedMessage& masked) {
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), masked.tokens.size());
  uint32_t node = 0;
  auto descend = [&](std::string_view key, bool bounded) {
    auto& children = nodes_[node].children;
    auto it = children.find(key);
    if (it == children.end() && bounded && key != kWildcard && children.size() >= options_.max_children) {
      key = kWildcard;
      it = children.find(key);
    }
    if (it != children.end()) {
      node = it->second;
      return;
    }
    const uint32_t child = static_cast<uint32_t>(nodes_.size());
    children.emplace(std::string(key), child);
    nodes_.emplace_back();  // invalidates `children`; not used after this
    node = child;
  };
  descend(std::string_view(digits, end - digits), false);
  const size_t depth = static_cast<size_t>(std::max(options_.prefix_tokens, 0));
  size_t routed = 0;
  for (size_t i = 0; i < masked.tokens.size() && routed < depth; ++i) {
    std::string_view token = masked.tokens[i];
    if (Masker::HasVariable(token)) {
      if (options_.skip_variable_prefix) continue;
      token = kWildcard;
    }
    descend(token, true);
    ++routed;
  }
  return node;
}

uint32_t TemplateMiner::NewGroup(const MaskedMessage& masked, uint32_t leaf) {
  uint32_t g;
  if (!free_groups_.empty()) {
    g = free_groups_.back();
    free_groups_.pop_back();
  } else {
    g = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
  }
  Group& group = groups_[g];
  group.tokens.assign(masked.tokens.begin(), masked.tokens.end());
  group.separators.assign(masked.separators.begin(), masked.separators.end());
  group.positions.assign(masked.tokens.size(), Position{});
  group.templates.clear();
  group.node = leaf;
  group.live = true;
  nodes_[leaf].groups.push_back(g);
  return g;
}

void TemplateMiner::Widen(uint32_t g, const MaskedMessage& masked) {
  Group& group = groups_[g];
  const size_t limit = options_.variant_values;
  const bool masked_rule = options_.masked_value_is_variable;
  bool rekey = false;
  for (size_t i = 0; i < group.tokens.size(); ++i) {
    Position& p = group.positions[i];
    std::string_view token = masked.tokens[i];
    switch (p.kind) {
      case Slot::kConstant:
        if (token != group.tokens[i]) {
          // A second value is one too many when the limit is below 2, and a
          // masked value (<*>) proves the position holds a variable.
          if (limit < 2 || (masked_rule && DifferByMaskedValue(token, group.tokens[i]))) {
            p.kind = Slot::kVariable;
            p.prefix = p.suffix = group.tokens[i];
            p.shortest = group.tokens[i].size();
            p.Fit(token);
          } else {
            p.kind = Slot::kVariant;
            p.values = {group.tokens[i], std::string(token)};
          }
          group.tokens[i] = kWildcard;
          rekey = true;
        }
        break;
      case Slot::kVariant:
        if (std::find(p.values.begin(), p.values.end(), token) == p.values.end()) {
          p.values.emplace_back(token);
          if (p.values.size() > limit || (masked_rule && DifferByMaskedValue(token, p.values.front()))) {
            p.kind = Slot::kVariable;
            p.prefix = p.suffix = p.values.front();
            p.shortest = p.values.front().size();
            for (const std::string& v : p.values) p.Fit(v);
            p.values.clear();
            p.values.shrink_to_fit();
            rekey = true;
          }
        }
        break;
      case Slot::kVariable:
        if (p.Fit(token)) rekey = true;
        break;
    }
  }
  if (rekey) Rekey(g);
}

bool TemplateMiner::Position::Fit(std::string_view value) {
  const size_t old_prefix = prefix.size();
  const size_t old_suffix = suffix.size();
  size_t k = 0;
  while (k < prefix.size() && k < value.size() && prefix[k] == value[k]) ++k;
  prefix.resize(k);
  // Never cut a <*> in two: the affixes stop before the first '<' / after
  // the last '>'.
  if (size_t lt = prefix.find('<'); lt != std::string::npos) prefix.resize(lt);
  size_t m = 0;
  while (m < suffix.size() && m < value.size() && suffix[suffix.size() - 1 - m] == value[value.size() - 1 - m]) ++m;
  suffix.erase(0, suffix.size() - m);
  if (size_t gt = suffix.rfind('>'); gt != std::string::npos) suffix.erase(0, gt + 1);
  const size_t old_shortest = shortest;
  shortest = std::min(shortest, value.size());
  return prefix.size() != old_prefix || suffix.size() != old_suffix || shortest != old_shortest;
}

std::string TemplateMiner::Position::Render() const {
  std::string_view tail = suffix;
  if (prefix.size() + tail.size() > shortest) {
    tail.remove_prefix(std::min(tail.size(), prefix.size() + tail.size() - shortest));
  }
  std::string out = prefix;
  out += kWildcard;
  out += tail;
  return out;
}

void TemplateMiner::Rekey(uint32_t g) {
  Group& group = groups_[g];
  std::vector<uint32_t> members;
  members.reserve(group.templates.size());
  for (const auto& [key, slot] : group.templates) members.push_back(slot);
  // Oldest first, so that merges keep the oldest id.
  std::sort(members.begin(), members.end(), [&](uint32_t a, uint32_t b) { return slots_[a].id_ < slots_[b].id_; });
  group.templates.clear();
  for (uint32_t slot : members) {
    Template& t = slots_[slot];
    for (size_t i = 0; i < t.tokens_.size(); ++i) {
      if (group.positions[i].kind == Slot::kVariable) t.tokens_[i] = group.positions[i].Render();
    }
    t.key_ = KeyOf(group, t.tokens_);
    Render(t, group);
    auto [it, inserted] = group.templates.emplace(t.key_, slot);
    if (!inserted) it->second = MergeInto(slot, it->second);
  }
}

std::string TemplateMiner::KeyOf(const Group& group, const std::vector<std::string_view>& tokens) const {
  std::string key;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (group.positions[i].kind == Slot::kVariant) {
      key += tokens[i];
      key += '\x1f';
    }
  }
  return key;
}

std::string TemplateMiner::KeyOf(const Group& group, const std::vector<std::string>& tokens) const {
  std::string key;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (group.positions[i].kind == Slot::kVariant) {
      key += tokens[i];
      key += '\x1f';
    }
  }
  return key;
}

uint32_t TemplateMiner::TemplateFor(uint32_t g, const MaskedMessage& masked) {
  std::string key = KeyOf(groups_[g], masked.tokens);
  auto it = groups_[g].templates.find(key);
  if (it != groups_[g].templates.end()) return it->second;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const Group& group = groups_[g];
  Template& t = slots_[slot];
  t.id_ = next_id_++;
  t.count_ = 0;
  t.merged_ids_.clear();
  t.tokens_.resize(group.tokens.size());
  for (size_t i = 0; i < group.tokens.size(); ++i) {
    const Position& p = group.positions[i];
    t.tokens_[i] = p.kind == Slot::kVariant    ? std::string(masked.tokens[i])
                   : p.kind == Slot::kVariable ? p.Render()
                                               : group.tokens[i];
  }
  t.key_ = key;
  t.group_ = g;
  t.live_ = true;
  Render(t, group);
  id_to_slot_[t.id_] = slot;
  ++live_count_;
  groups_[g].templates.emplace(std::move(key), slot);
  return slot;
}

void TemplateMiner::Render(Template& t, const Group& group) {
  t.text_.clear();
  for (size_t i = 0; i < t.tokens_.size(); ++i) {
    if (i > 0) t.text_ += group.separators[i];
    t.text_ += t.tokens_[i];
  }
}

uint32_t TemplateMiner::MergeInto(uint32_t from, uint32_t into) {
  if (slots_[from].id_ < slots_[into].id_) std::swap(from, into);  // the older id survives
  Template& src = slots_[from];
  Template& dst = slots_[into];
  dst.count_ += src.count_;
  dst.merged_ids_.push_back(src.id_);
  dst.merged_ids_.insert(dst.merged_ids_.end(), src.merged_ids_.begin(), src.merged_ids_.end());
  id_to_slot_[src.id_] = into;
  for (TemplateId id : src.merged_ids_) id_to_slot_[id] = into;
  // A merged-away template that was more recently used lends its place.
  if (src.lru_prev_ != UINT32_MAX || lru_head_ == from) {
    LruUnlink(into);
    LruUnlink(from);
    LruPushFront(into);
  }
  Retire(from);
  return into;
}

void TemplateMiner::Evict(uint32_t slot) {
  Template& t = slots_[slot];
  const uint32_t g = t.group_;
  Group& group = groups_[g];
  auto entry = group.templates.find(t.key_);
  if (entry != group.templates.end() && entry->second == slot) group.templates.erase(entry);
  id_to_slot_.erase(t.id_);
  for (TemplateId id : t.merged_ids_) id_to_slot_.erase(id);
  Retire(slot);
  ++evicted_;
  if (group.templates.empty()) {
    auto& leaf = nodes_[group.node].groups;
    leaf.erase(std::find(leaf.begin(), leaf.end(), g));
    group = Group{};
    free_groups_.push_back(g);
  }
}

void TemplateMiner::Retire(uint32_t slot) {
  LruUnlink(slot);
  Template& t = slots_[slot];
  t = Template{};
  free_slots_.push_back(slot);
  --live_count_;
}

void TemplateMiner::LruUnlink(uint32_t slot) {
  Template& t = slots_[slot];
  if (t.lru_prev_ != UINT32_MAX) {
    slots_[t.lru_prev_].lru_next_ = t.lru_next_;
  } else if (lru_head_ == slot) {
    lru_head_ = t.lru_next_;
  }
  if (t.lru_next_ != UINT32_MAX) {
    slots_[t.lru_next_].lru_prev_ = t.lru_prev_;
  } else if (lru_tail_ == slot) {
    lru_tail_ = t.lru_prev_;
  }
  t.lru_prev_ = t.lru_next_ = UINT32_MAX;
}

void TemplateMiner::LruPushFront(uint32_t slot) {
  Template& t = slots_[slot];
  t.lru_prev_ = UINT32_MAX;
  t.lru_next_ = lru_head_;
  if (lru_head_ != UINT32_MAX) slots_[lru_head_].lru_prev_ = slot;
  lru_head_ = slot;
  if (lru_tail_ == UINT32_MAX) lru_tail_ = slot;
}

const Template* TemplateMiner::Find(TemplateId id) const {
  auto it = id_to_slot_.find(id);
  if (it == id_to_slot_.end()) return nullptr;
  return &slots_[it->second];
}

std::vector<const Template*> TemplateMiner::Templates() const {
  std::vector<const Template*> out;
  out.reserve(live_count_);
  for (const Template& t : slots_) {
    if (t.live_) out.push_back(&t);
  }
  std::sort(out.begin(), out.end(), [](const Template* a, const Template* b) { return a->id_ < b->id_; });
  return out;
}

}  // namespace faultline::mining
