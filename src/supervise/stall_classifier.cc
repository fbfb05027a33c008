#include "supervise/stall_classifier.h"

#include <fmt/format.h>

namespace faultline::supervise {
namespace {

std::vector<std::string> Fill(const std::vector<Templated> &items, const FeatureSet &features) {
  std::vector<std::string> out;
  for (const auto &t : items) {
    if (t.when && !Evaluate(*t.when, features)) continue;
    out.push_back(FillTemplate(t.text, features));
  }
  return out;
}

}  // namespace

StallDiagnosis Classify(const StallRules &rules, const FeatureSet &features) {
  StallDiagnosis d;
  d.last_phase = features.Display("log_last_phase");
  // The phase read from the stacks names its class before any condition.
  std::string stack_class;
  if (const Feature *sp = features.Find("stack_phase"); sp && !sp->is_number && sp->text != "none") {
    for (const auto &ph : rules.stack_phases) {
      if (ph.phase == sp->text) {
        stack_class = ph.class_id;
        break;
      }
    }
  }
  for (int pass = stack_class.empty() ? 1 : 0; pass < 2; ++pass) {
    for (const auto &c : rules.classes) {
      std::vector<std::string> matched;
      if (pass == 0) {
        if (c.id != stack_class) continue;
        matched.push_back(
            fmt::format("stack_phase == {} ({})", features.Display("stack_phase"), features.Display("stack_evidence")));
      } else if (!Evaluate(c.when, features, &matched)) {
        continue;
      }
      d.class_id = c.id;
      d.title = c.title;
      d.explanation = FillTemplate(c.explanation, features);
      d.evidence = Fill(c.evidence, features);
      d.suggestions = Fill(c.suggestions, features);
      d.matched = std::move(matched);
      return d;
    }
  }
  d.class_id = "unknown";
  d.title = "Stalled (cause unknown)";
  return d;
}

}  // namespace faultline::supervise
