// FeatureSet: the named facts about a watched tree that stall rules test and
// quote ("max_cpu_percent", "weight_read_rate", "log_last_phase", ...). Each
// feature has a value (number or text) and a display form for evidence
// ("1.5 GiB", "37 s"). The list of names is closed: KnownFeatures() is what
// rules/stall.yaml may use, checked when the rules are loaded.
#ifndef FAULTLINE_SUPERVISE_FEATURES_H_
#define FAULTLINE_SUPERVISE_FEATURES_H_

#include <map>
#include <set>
#include <string>

namespace faultline::supervise {

struct Feature {
  bool is_number = true;
  double number = 0;
  std::string text;     // the value when !is_number
  std::string display;  // how evidence shows it
};

class FeatureSet {
 public:
  void SetNumber(const std::string& name, double value, std::string display = "");
  void SetText(const std::string& name, std::string value);
  const Feature* Find(const std::string& name) const;
  double Number(const std::string& name) const;  // 0 when absent
  std::string Display(const std::string& name) const;
  const std::map<std::string, Feature>& all() const { return features_; }

 private:
  std::map<std::string, Feature> features_;
};

// Every feature name ComputeFeatures() sets.
const std::set<std::string>& KnownFeatures();

// Replaces {name} by the feature's display form; unknown names stay as they are.
std::string FillTemplate(const std::string& text, const FeatureSet& features);

// Human forms: "1.5 GiB", "37 s" / "4 min 10 s".
std::string HumanBytes(double bytes);
std::string HumanSeconds(double seconds);

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_FEATURES_H_
