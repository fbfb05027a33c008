#include "supervise/condition.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace faultline::supervise {
namespace {

const char* const kOps[] = {"!contains", "contains", "matches", ">=", "<=", "==", "!=", ">", "<"};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const RE2& CachedRegex(const std::string& pattern) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<RE2>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*cache)[pattern];
  if (!slot) slot = std::make_unique<RE2>(pattern, RE2::Quiet);
  return *slot;
}

}  // namespace

Result<Condition> ParseLeaf(const std::string& text) {
  Condition c;
  c.kind = Condition::Kind::kLeaf;
  c.source = text;
  std::string t = Trim(text);
  size_t space = t.find(' ');
  if (space == std::string::npos)
    return Status::InvalidArgument(fmt::format("condition '{}': expected FEATURE OP VALUE", text));
  c.feature = t.substr(0, space);
  std::string rest = Trim(t.substr(space + 1));
  for (const char* op : kOps) {
    std::string o(op);
    if (rest.compare(0, o.size(), o) == 0 && (rest.size() == o.size() || rest[o.size()] == ' ')) {
      c.op = o;
      rest = Trim(rest.substr(o.size()));
      break;
    }
  }
  if (c.op.empty()) return Status::InvalidArgument(fmt::format("condition '{}': unknown operator", text));
  if (!KnownFeatures().count(c.feature)) {
    return Status::InvalidArgument(fmt::format("condition '{}': unknown feature '{}'", text, c.feature));
  }
  if (rest.size() >= 2 && (rest.front() == '\'' || rest.front() == '"') && rest.back() == rest.front()) {
    rest = rest.substr(1, rest.size() - 2);
  }
  c.text_value = rest;
  if (c.op != "contains" && c.op != "!contains" && c.op != "matches") {
    char* end = nullptr;
    double v = std::strtod(rest.c_str(), &end);
    if (end != rest.c_str()) {
      std::string unit = Trim(std::string(end));
      double scale = 1;
      if (unit == "KiB")
        scale = 1024.0;
      else if (unit == "MiB")
        scale = 1024.0 * 1024;
      else if (unit == "GiB")
        scale = 1024.0 * 1024 * 1024;
      else if (unit != "" && unit != "s" && unit != "%") {
        return Status::InvalidArgument(fmt::format("condition '{}': unknown unit '{}'", text, unit));
      }
      c.numeric_value = true;
      c.number_value = v * scale;
    } else if (c.op != "==" && c.op != "!=") {
      return Status::InvalidArgument(fmt::format("condition '{}': {} needs a number", text, c.op));
    }
  }
  if (c.op == "matches" && !CachedRegex(c.text_value).ok()) {
    return Status::InvalidArgument(
        fmt::format("condition '{}': bad regex: {}", text, CachedRegex(c.text_value).error()));
  }
  return c;
}

bool Evaluate(const Condition& c, const FeatureSet& features, std::vector<std::string>* matched) {
  if (c.kind == Condition::Kind::kAll) {
    std::vector<std::string> local;
    for (const auto& child : c.children) {
      if (!Evaluate(child, features, &local)) return false;
    }
    if (matched) matched->insert(matched->end(), local.begin(), local.end());
    return true;
  }
  if (c.kind == Condition::Kind::kAny) {
    for (const auto& child : c.children) {
      if (Evaluate(child, features, matched)) return true;
    }
    return false;
  }
  const Feature* f = features.Find(c.feature);
  if (f == nullptr) return false;
  bool ok = false;
  if (c.op == "contains" || c.op == "!contains") {
    bool has = (f->is_number ? f->display : f->text).find(c.text_value) != std::string::npos;
    ok = (c.op == "contains") == has;
  } else if (c.op == "matches") {
    ok = RE2::PartialMatch(f->is_number ? f->display : f->text, CachedRegex(c.text_value));
  } else if (c.numeric_value && f->is_number) {
    double a = f->number, b = c.number_value;
    if (c.op == ">=")
      ok = a >= b;
    else if (c.op == "<=")
      ok = a <= b;
    else if (c.op == ">")
      ok = a > b;
    else if (c.op == "<")
      ok = a < b;
    else if (c.op == "==")
      ok = a == b;
    else if (c.op == "!=")
      ok = a != b;
  } else if (!f->is_number && (c.op == "==" || c.op == "!=")) {
    ok = (f->text == c.text_value) == (c.op == "==");
  }
  if (ok && matched) {
    matched->push_back(fmt::format("{} ({})", c.source, f->display));
  }
  return ok;
}

}  // namespace faultline::supervise
