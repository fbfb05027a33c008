#include "parse/wrapper.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <nlohmann/json.hpp>
#include <set>

#include "input/line_cleaner.h"
#include "parse/prefix_learner.h"

namespace faultline::parse {

namespace {

using Captures = std::vector<std::pair<std::string, std::string>>;

std::string_view Lookup(const Captures& caps, std::string_view name) {
  for (const auto& [k, v] : caps) {
    if (k == name) return v;
  }
  return {};
}

// "{node}/{service}[{pid}]": a placeholder with no value drops out together
// with the literal text that joins it to the previous part.
std::string RenderIdentity(std::string_view tmpl, const Captures& caps) {
  std::string out;
  std::string literal;  // text since the previous placeholder
  bool any = false, last_missing = false, first = true;
  size_t i = 0;
  while (i < tmpl.size()) {
    size_t open = tmpl.find('{', i);
    size_t close = open == std::string_view::npos ? open : tmpl.find('}', open);
    if (open == std::string_view::npos || close == std::string_view::npos) break;
    literal.append(tmpl.substr(i, open - i));
    std::string_view value = Lookup(caps, tmpl.substr(open + 1, close - open - 1));
    last_missing = value.empty();
    if (!value.empty()) {
      // The literal before a part joins it to the previous one ("/"), or is
      // the template's own prefix ("task ") before the first placeholder.
      if (any || first) out += literal;
      out += value;
      any = true;
    }
    first = false;
    literal.clear();
    i = close + 1;
  }
  // A trailing literal ("]") closes the last part only when it was printed.
  if (any && !last_missing && i < tmpl.size()) out += tmpl.substr(i);
  return any ? out : std::string();
}

std::string JsonText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return std::to_string(v.get<int64_t>());
  if (v.is_array()) {  // journald gives non-UTF-8 messages as byte arrays
    std::string out;
    for (const auto& b : v) {
      if (b.is_number_integer()) out.push_back(static_cast<char>(b.get<int>()));
    }
    return out;
  }
  return {};
}

// json_line: "{time} {level} [{span}: ]{target}: {line}": a placeholder is its capture's value; a
// bracketed group is printed only when every placeholder in it has a value.
std::string RenderLine(std::string_view tmpl, const Captures& caps) {
  std::string out, group;
  bool in_group = false, group_ok = true;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    const char c = tmpl[i];
    std::string& dst = in_group ? group : out;
    if (c == '[' && !in_group) {
      in_group = true, group_ok = true, group.clear();
    } else if (c == ']' && in_group) {
      if (group_ok) out += group;
      in_group = false;
    } else if (c == '{') {
      const size_t close = tmpl.find('}', i);
      if (close == std::string_view::npos) {
        dst.append(tmpl.substr(i));
        break;
      }
      std::string_view value = Lookup(caps, tmpl.substr(i + 1, close - i - 1));
      if (value.empty()) group_ok = false;
      dst.append(value);
      i = close;
    } else {
      dst.push_back(c);
    }
  }
  return out;
}

// A field of a record: a dotted path into nested objects ("span.rank"), the
// first of "a|b" alternatives that the record holds; null when none.
const nlohmann::json* FindField(const nlohmann::json& record, std::string_view spec) {
  while (true) {
    const size_t bar = spec.find('|');
    std::string_view path = spec.substr(0, bar);
    const nlohmann::json* node = &record;
    while (node && !path.empty()) {
      const size_t dot = path.find('.');
      const std::string key(path.substr(0, dot));
      if (!node->is_object()) {
        node = nullptr;
        break;
      }
      auto it = node->find(key);
      node = it == node->end() ? nullptr : &*it;
      path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    }
    if (node && node != &record) return node;
    if (bar == std::string_view::npos) return nullptr;
    spec = spec.substr(bar + 1);
  }
}

int RankOf(std::string_view s) {
  if (s.empty() || s.size() > 6) return -1;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

WrapperSet::~WrapperSet() = default;

Result<std::unique_ptr<WrapperSet>> WrapperSet::Build(std::vector<WrapperSpec> specs) {
  std::unique_ptr<WrapperSet> set(new WrapperSet());
  for (auto& spec : specs) {
    if (spec.pattern.empty() == spec.json_field.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: wrapper {} needs exactly one of 'pattern' or 'json_field'", spec.source, spec.id));
    }
    std::unique_ptr<RE2> re;
    if (!spec.pattern.empty()) {
      RE2::Options options;
      options.set_log_errors(false);
      re = std::make_unique<RE2>("^(?:" + spec.pattern + ")", options);
      if (!re->ok()) {
        return Status::InvalidArgument(
            fmt::format("{}: wrapper {}: bad pattern: {}", spec.source, spec.id, re->error()));
      }
    }
    set->compiled_.push_back(std::move(re));
    set->specs_.push_back(std::move(spec));
  }
  return set;
}

bool WrapperSet::PeelOne(size_t layer, std::string_view line, std::string* scratch, std::string_view* inner,
                         Captures* captures, std::string* earlier) const {
  const WrapperSpec& spec = specs_[layer];
  if (const RE2* re = compiled_[layer].get()) {
    if (!captures) {  // the match's extent only (detection: every spec on every sample line): RE2's DFA
      re2::StringPiece whole;
      if (!re->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::ANCHOR_START, &whole, 1)) {
        return false;
      }
      *inner = line.substr(whole.size());
      return true;
    }
    const int groups = re->NumberOfCapturingGroups();
    std::vector<re2::StringPiece> sub(static_cast<size_t>(groups) + 1);
    if (!re->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::ANCHOR_START, sub.data(),
                   groups + 1)) {
      return false;
    }
    if (captures) {
      for (const auto& [name, index] : re->NamedCapturingGroups()) {
        const auto& piece = sub[static_cast<size_t>(index)];
        if (piece.data() != nullptr && !piece.empty()) captures->emplace_back(name, std::string(piece));
      }
    }
    *inner = line.substr(sub[0].size());
    return true;
  }
  // JSON record: cheap shape check first, most lines of a non-JSON file fail
  // here.
  if (line.empty() || line.front() != '{' || line.back() != '}') return false;
  nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_discarded() || !record.is_object()) return false;
  const nlohmann::json* field = FindField(record, spec.json_field);
  if (!field) return false;
  *scratch = JsonText(*field);
  // A rebuilt line keeps the message's own line ends until it is rendered: the text formatter prints the
  // event's fields after them (TGI's " rank=0" under a shard's stderr dump).
  if (spec.json_line.empty()) {
    while (!scratch->empty() && (scratch->back() == '\n' || scratch->back() == '\r')) scratch->pop_back();
  }
  // The record's text was escaped (colour codes as \u001b) when the file was
  // cleaned: clean it now, so that the layer under it (TGI's own time stamp,
  // a compose prefix) is detected and peeled on text, not colour codes.
  if (input::NeedsCleaning(*scratch)) {
    std::string cleaned;
    input::CleanLineInto(*scratch, &cleaned, earlier);
    *scratch = std::move(cleaned);
  }
  if (captures || !spec.json_line.empty()) {
    Captures fields;
    for (const auto& [capture, name] : spec.json_captures) {
      if (const nlohmann::json* f = FindField(record, name)) {
        std::string v = JsonText(*f);
        if (!v.empty()) fields.emplace_back(capture, std::move(v));
      }
    }
    if (!spec.json_line.empty()) {
      // The line as the logger's text format prints it, rebuilt from the record.
      Captures with_line = fields;
      with_line.emplace_back("line", *scratch);
      *scratch = RenderLine(spec.json_line, with_line);
      while (!scratch->empty() && (scratch->back() == '\n' || scratch->back() == '\r')) scratch->pop_back();
    }
    if (captures) captures->insert(captures->end(), fields.begin(), fields.end());
  }
  *inner = *scratch;
  return true;
}

// A wrapper names where a line came from (a host, a pod, a service, a rank): its identity repeats over
// the lines each source writes. When most of the lines a spec peels name a different identity each, the
// "prefix" is the lines' own text: tqdm bars whose description is the tensor being loaded ("mlp1.0.bias:
// 8%|...", "language_model.model.layers.47.ffn_norm.weight:  75%|...") read as pdsh's "HOST: ".
static bool IdentitiesMostlyDistinct(const WrapperSet& set, size_t layer, const std::vector<std::string_view>& lines) {
  std::set<std::string> distinct;
  size_t peeled = 0;
  for (auto l : lines) {
    Captures caps;
    std::string scratch, earlier;
    std::string_view inner;
    if (!set.PeelOne(layer, l, &scratch, &inner, &caps, &earlier)) continue;
    ++peeled;
    distinct.insert(RenderIdentity(set.specs()[layer].identity, caps));
  }
  return peeled >= 6 && distinct.size() * 2 > peeled;
}

WrapperStack WrapperSet::Detect(const std::vector<std::string_view>& first_lines) const {
  WrapperStack stack;
  stack.set_ = this;
  std::vector<std::string_view> lines;
  std::vector<std::string> owned;  // decoded JSON text of the current layer
  for (auto l : first_lines) {
    if (!l.empty()) lines.push_back(l);
  }
  const std::string_view indentation = PasteIndentation(lines);
  if (!indentation.empty()) {
    stack.indentation_ = std::string(indentation);
    for (auto& l : lines) {
      if (l.starts_with(stack.indentation_)) l.remove_prefix(stack.indentation_.size());
    }
  }
  for (int depth = 0; depth < 4 && !lines.empty(); ++depth) {
    // The wrapper that peels the most lines wins; between equals, the one
    // that peels more of them (journald's "TIME HOST IDENT[PID]: " over a
    // bare time stamp).
    size_t best = specs_.size(), best_hits = 0, best_peeled = 0;
    for (size_t i = 0; i < specs_.size(); ++i) {
      size_t hits = 0, peeled = 0;
      std::string scratch;
      std::string_view inner;
      const double needed = specs_[i].min_share * static_cast<double>(lines.size());
      bool hopeless = false;
      for (size_t k = 0; k < lines.size(); ++k) {
        // A spec that can no longer peel its share, or as many lines as the
        // best so far, cannot win: the rest of its lines are not tried.
        const size_t most = hits + (lines.size() - k);
        if (static_cast<double>(most) < needed || most < best_hits) {
          hopeless = true;
          break;
        }
        const std::string_view l = lines[k];
        if (!PeelOne(i, l, &scratch, &inner, nullptr)) continue;
        ++hits;
        peeled += l.size() > inner.size() ? l.size() - inner.size() : 1;
      }
      if (hopeless) continue;
      if (hits == 0 || static_cast<double>(hits) < needed) continue;
      if (!specs_[i].identity.empty() && hits >= 6 && IdentitiesMostlyDistinct(*this, i, lines)) continue;
      if (hits > best_hits || (hits == best_hits && peeled > best_peeled))
        best = i, best_hits = hits, best_peeled = peeled;
    }
    if (best == specs_.size()) break;
    stack.layers_.push_back(best);
    std::vector<std::string> next_owned;
    std::vector<std::string_view> next;
    next_owned.reserve(lines.size());
    for (auto l : lines) {
      std::string scratch;
      std::string_view inner;
      if (PeelOne(best, l, &scratch, &inner, nullptr)) {
        next_owned.emplace_back(inner);
      } else {
        next_owned.emplace_back(l);
      }
    }
    owned = std::move(next_owned);
    lines.clear();
    for (const auto& s : owned) {
      if (!s.empty()) lines.push_back(s);
    }
  }
  if (auto learned = LearnPrefix(lines)) {
    auto re = std::make_shared<RE2>(learned->pattern, RE2::Quiet);
    size_t hits = 0;
    for (auto l : lines) {
      re2::StringPiece rest(l.data(), l.size());
      if (re->ok() && RE2::Consume(&rest, *re)) ++hits;
    }
    if (re->ok() && hits * 2 >= lines.size()) {
      stack.learned_ = std::move(re);
      stack.learned_shape_ = learned->shape;
    }
  }
  return stack;
}

std::string WrapperStack::Describe() const {
  std::string out = indentation_.empty() ? "" : fmt::format("indented {}", indentation_.size());
  for (size_t layer : layers_) {
    if (!out.empty()) out += '+';
    out += set_->specs()[layer].id;
  }
  if (learned_) out += fmt::format("{}learned \"{}\"", out.empty() ? "" : "+", learned_shape_);
  return out;
}

PeeledLine WrapperStack::Peel(std::string_view line, std::string* scratch) const {
  PeeledLine out;
  out.inner = line;
  // Not `peeled`: the indentation carries no identity, and a line no wrapper
  // layer matched still takes the last line's.
  if (!indentation_.empty() && out.inner.starts_with(indentation_)) out.inner.remove_prefix(indentation_.size());
  std::string identity;
  for (size_t layer : layers_) {
    Captures caps;
    std::string_view inner;
    std::string decoded;
    std::string earlier;
    if (!set_->PeelOne(layer, out.inner, &decoded, &inner, &caps, &earlier)) continue;
    if (!earlier.empty()) out.earlier = std::move(earlier);
    out.peeled = true;
    const WrapperSpec& spec = set_->specs()[layer];
    if (spec.pattern.empty()) {  // `inner` is the decoded text: keep it alive in
                                 // *scratch
      *scratch = std::move(decoded);
      inner = *scratch;
    }
    out.inner = inner;
    std::string id = RenderIdentity(spec.identity, caps);
    if (!id.empty()) {
      if (!identity.empty()) identity += '/';
      identity += id;
    }
    if (!spec.rank_capture.empty()) {
      int rank = RankOf(Lookup(caps, spec.rank_capture));
      if (rank >= 0) out.rank = rank;
    }
  }
  if (learned_) {
    re2::StringPiece rest(out.inner.data(), out.inner.size());
    if (RE2::Consume(&rest, *learned_)) {
      out.inner = std::string_view(rest.data(), rest.size());
      out.peeled = true;
    }
  }
  out.identity = std::move(identity);
  return out;
}

std::vector<std::string> CheckWrapperSamples(const WrapperSet& set) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < set.specs().size(); ++i) {
    const WrapperSpec& spec = set.specs()[i];
    if (spec.match_samples.empty()) {
      problems.push_back(fmt::format("{}: wrapper {} has no samples.match", spec.source, spec.id));
    }
    for (const auto& s : spec.match_samples) {
      std::string scratch;
      std::string_view inner;
      if (!set.PeelOne(i, s, &scratch, &inner, nullptr)) {
        problems.push_back(fmt::format("{}: wrapper {} does not peel its sample: {}", spec.source, spec.id, s));
      }
    }
    for (const auto& s : spec.no_match_samples) {
      std::string scratch;
      std::string_view inner;
      if (set.PeelOne(i, s, &scratch, &inner, nullptr)) {
        problems.push_back(fmt::format("{}: wrapper {} peels its no_match sample: {}", spec.source, spec.id, s));
      }
    }
  }
  return problems;
}

}  // namespace faultline::parse
