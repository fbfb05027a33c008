#include "mining/miner_profile.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "mining/builtin_profiles.h"

namespace faultline::mining {
namespace {

std::string Where(std::string_view source, const YAML::Node& node) {
  return fmt::format("{}:{}", source, node.Mark().line + 1);
}

// Applies the keys of one profile node on top of `options`.
Status ApplyProfile(const YAML::Node& profile, std::string_view source, MinerOptions& options) {
  if (!profile.IsMap()) return Status::InvalidArgument(Where(source, profile) + ": a profile must be a map");
  for (const auto& entry : profile) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    try {
      if (key == "similarity") {
        options.similarity = value.as<double>();
        if (options.similarity < 0 || options.similarity > 1) {
          return Status::InvalidArgument(Where(source, value) + ": similarity must be within [0, 1]");
        }
      } else if (key == "variant_values") {
        options.variant_values = value.as<size_t>();
      } else if (key == "masked_value_is_variable") {
        options.masked_value_is_variable = value.as<bool>();
      } else if (key == "skip_variable_prefix") {
        options.skip_variable_prefix = value.as<bool>();
      } else if (key == "prefix_tokens") {
        options.prefix_tokens = value.as<int>();
      } else if (key == "max_children") {
        options.max_children = value.as<size_t>();
      } else if (key == "max_templates") {
        options.max_templates = value.as<size_t>();
      } else if (key == "cache_entries") {
        options.cache_entries = value.as<size_t>();
      } else if (key == "max_tokens") {
        options.mask.max_tokens = value.as<size_t>();
      } else if (key == "delimiters") {
        options.mask.delimiters = value.as<std::string>();
      } else if (key == "collapse_wildcards") {
        options.mask.collapse_wildcards = value.as<bool>();
      } else if (key == "patterns") {
        options.mask.patterns.clear();
        for (const auto& item : value) {
          if (item.IsMap()) {
            if (!item["match"]) return Status::InvalidArgument(Where(source, item) + ": pattern needs 'match'");
            options.mask.patterns.emplace_back(item["match"].as<std::string>(),
                                               item["replace"] ? item["replace"].as<std::string>() : "<*>");
          } else {
            options.mask.patterns.emplace_back(item.as<std::string>());
          }
        }
      } else if (key == "mask") {
        MaskOptions& m = options.mask;
        m.numbers = m.hex = m.ip = m.uuid = m.path = m.date = false;
        for (const auto& cls : value) {
          const std::string name = cls.as<std::string>();
          if (name == "number") {
            m.numbers = true;
          } else if (name == "hex") {
            m.hex = true;
          } else if (name == "ip") {
            m.ip = true;
          } else if (name == "uuid") {
            m.uuid = true;
          } else if (name == "path") {
            m.path = true;
          } else if (name == "date") {
            m.date = true;
          } else {
            return Status::InvalidArgument(fmt::format(
                "{}: unknown mask class '{}' (known: number, hex, ip, uuid, path, date)", Where(source, cls), name));
          }
        }
      } else {
        return Status::InvalidArgument(fmt::format("{}: unknown key '{}'", Where(source, entry.first), key));
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(fmt::format("{}: bad value for '{}': {}", Where(source, value), key, e.msg));
    }
  }
  return Status::Ok();
}

Result<YAML::Node> ParseProfiles(std::string_view yaml_text, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, e.mark.line + 1, e.msg));
  }
  YAML::Node profiles = root["profiles"];
  if (!profiles || !profiles.IsMap()) {
    return Status::InvalidArgument(fmt::format("{}: missing 'profiles' map", source));
  }
  return profiles;
}

}  // namespace

std::string_view BuiltinProfiles() { return kBuiltinProfilesYaml; }

Result<MinerOptions> LoadProfile(std::string_view yaml_text, std::string_view source, std::string_view name) {
  auto profiles = ParseProfiles(yaml_text, source);
  if (!profiles.ok()) return profiles.status();
  MinerOptions options;
  const std::string wanted(name);
  if (YAML::Node base = (*profiles)["default"]) {
    if (Status s = ApplyProfile(base, source, options); !s.ok()) return s;
  }
  if (wanted == "default") return options;
  YAML::Node profile = (*profiles)[wanted];
  if (!profile) return Status::NotFound(fmt::format("{}: no miner profile '{}'", source, wanted));
  if (Status s = ApplyProfile(profile, source, options); !s.ok()) return s;
  return options;
}

Result<std::unique_ptr<TemplateMiner>> MakeMiner(std::string_view name) {
  auto options = LoadProfile(BuiltinProfiles(), "rules/mining.yaml", name);
  if (!options.ok()) return options.status();
  return TemplateMiner::Create(std::move(options.value()));
}

Result<std::vector<std::string>> ProfileNames(std::string_view yaml_text, std::string_view source) {
  auto profiles = ParseProfiles(yaml_text, source);
  if (!profiles.ok()) return profiles.status();
  std::vector<std::string> names;
  for (const auto& entry : *profiles) names.push_back(entry.first.as<std::string>());
  return names;
}

}  // namespace faultline::mining
