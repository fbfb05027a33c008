#include "json_schema_check.h"

#include <fmt/format.h>

namespace faultline::testing {
namespace {

using nlohmann::json;

bool HasType(const json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (type == "number") return v.is_number();
  return false;
}

void Check(const json& s, const json& v, const std::string& at, std::vector<std::string>* errors) {
  if (s.contains("type")) {
    bool ok = false;
    if (s["type"].is_array()) {
      for (const json& t : s["type"]) ok = ok || HasType(v, t.get<std::string>());
    } else {
      ok = HasType(v, s["type"].get<std::string>());
    }
    if (!ok) {
      errors->push_back(fmt::format("{}: type {} expected, got {}", at, s["type"].dump(), v.dump()));
      return;
    }
  }
  if (s.contains("const") && v != s["const"]) errors->push_back(fmt::format("{}: must be {}", at, s["const"].dump()));
  if (s.contains("enum")) {
    bool found = false;
    for (const json& e : s["enum"]) found = found || e == v;
    if (!found) errors->push_back(fmt::format("{}: {} not in {}", at, v.dump(), s["enum"].dump()));
  }
  if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) {
    errors->push_back(fmt::format("{}: {} below minimum {}", at, v.dump(), s["minimum"].dump()));
  }
  if (v.is_object()) {
    if (s.contains("required")) {
      for (const json& r : s["required"]) {
        if (!v.contains(r.get<std::string>()))
          errors->push_back(fmt::format("{}: missing '{}'", at, r.get<std::string>()));
      }
    }
    for (const auto& [key, value] : v.items()) {
      std::string path = at + "/" + key;
      if (s.contains("properties") && s["properties"].contains(key)) {
        Check(s["properties"][key], value, path, errors);
      } else if (s.contains("additionalProperties")) {
        const json& ap = s["additionalProperties"];
        if (ap.is_boolean() && !ap.get<bool>()) errors->push_back(fmt::format("{}: property not allowed", path));
        if (ap.is_object()) Check(ap, value, path, errors);
      }
    }
  }
  if (v.is_array() && s.contains("items")) {
    for (size_t i = 0; i < v.size(); ++i) Check(s["items"], v[i], fmt::format("{}/{}", at, i), errors);
  }
}

}  // namespace

std::vector<std::string> CheckJsonSchema(const json& schema, const json& doc) {
  std::vector<std::string> errors;
  Check(schema, doc, "", &errors);
  return errors;
}

}  // namespace faultline::testing
