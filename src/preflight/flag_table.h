// The flags of each launcher that preflight understands, loaded from
// rules/preflight_flags.yaml (built in): names, the field each one sets, and
// whether it takes a value, so that unknown flags can be skipped without
// losing track of positional arguments.
#ifndef FAULTLINE_PREFLIGHT_FLAG_TABLE_H_
#define FAULTLINE_PREFLIGHT_FLAG_TABLE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace faultline::preflight {

enum class FlagType { kInt, kFloat, kSize, kString, kBool, kList };

struct FlagSpec {
  std::vector<std::string> names;  // "--tensor-parallel-size", "-tp"
  std::string key;                 // "tensor_parallel_size"; empty: skip only
  FlagType type = FlagType::kString;
  // Allowed range of int / size / float values (rules/preflight_flags.yaml
  // `min` / `max`); a value outside it is an input error, as the launcher's
  // own parser would refuse it. Floats must also be finite.
  std::optional<double> min, max;
};

struct FlagTable {
  bool underscores = false;  // --tensor_parallel_size accepted
  std::map<std::string, std::string> defaults;
  std::vector<FlagSpec> flags;

  // Exact name, then (for long flags) the unique prefix argparse would
  // accept. Returns nullptr when unknown or ambiguous.
  const FlagSpec* Find(std::string_view name) const;
};

// Loads the table of one launcher ("vllm", "sglang", "torchrun") from YAML.
Result<FlagTable> LoadFlagTable(std::string_view yaml_text, const std::string& launcher);
// The built-in table (cached).
const FlagTable& BuiltinFlagTable(const std::string& launcher);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_FLAG_TABLE_H_
