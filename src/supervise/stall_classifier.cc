#include "supervise/stall_classifier.h"

namespace faultline::supervise {
namespace {

std::vector<std::string> Fill(const std::vector<Templated>& items, const FeatureSet& features) {
  std::vector<std::string> out;
  for (const auto& t : items) {
    if (t.when && !Evaluate(*t.when, features)) continue;
    out.push_back(FillTemplate(t.text, features));
  }
  return out;
}

}  // namespace

StallDiagnosis Classify(const StallRules& rules, const FeatureSet& features) {
  StallDiagnosis d;
  d.last_phase = features.Display("log_last_phase");
  for (const auto& c : rules.classes) {
    std::vector<std::string> matched;
    if (!Evaluate(c.when, features, &matched)) continue;
    d.class_id = c.id;
    d.title = c.title;
    d.explanation = FillTemplate(c.explanation, features);
    d.evidence = Fill(c.evidence, features);
    d.suggestions = Fill(c.suggestions, features);
    d.matched = std::move(matched);
    return d;
  }
  d.class_id = "unknown";
  d.title = "Stalled (cause unknown)";
  return d;
}

}  // namespace faultline::supervise
