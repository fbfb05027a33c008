// Miner profiles: named MinerOptions kept as data in rules/mining.yaml (one
// per log family or benchmark data set), so that tuning never touches code.
//
// File format:
//   profiles:
//     default:              # every other profile starts from this one
//       similarity: 0.5
//       prefix_tokens: 2
//       max_children: 100
//       max_templates: 50000
//       cache_entries: 65536
//       mask: [number, hex, ip, uuid, path, date]   # built-in classes to apply
//       patterns: ['blk_-?\d+',               # RE2, each match -> <*>
//                  {match: 'a(\d+)', replace: 'a<*>'}]  # or a rewrite
//       delimiters: "="                       # extra token separators
//       collapse_wildcards: false
//       max_tokens: 256
//       variant_values: 3                     # see template_miner.h
//       masked_value_is_variable: true
//       skip_variable_prefix: true
// Unknown keys and classes are errors that name file:line.
#ifndef FAULTLINE_MINING_MINER_PROFILE_H_
#define FAULTLINE_MINING_MINER_PROFILE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mining/template_miner.h"
#include "util/status.h"

namespace faultline::mining {

// The profiles file embedded in the binary at build time (rules/mining.yaml).
std::string_view BuiltinProfiles();

// Parses `yaml_text` (`source` names it in errors) and returns the options of
// profile `name`, layered over the file's "default" profile.
Result<MinerOptions> LoadProfile(std::string_view yaml_text, std::string_view source, std::string_view name);

// A miner with built-in profile `name` ("default" for triage).
Result<std::unique_ptr<TemplateMiner>> MakeMiner(std::string_view name = "default");

// Names of the profiles in `yaml_text`, in file order.
Result<std::vector<std::string>> ProfileNames(std::string_view yaml_text, std::string_view source);

}  // namespace faultline::mining

#endif  // FAULTLINE_MINING_MINER_PROFILE_H_
