#include "json_schema.h"

namespace faultline::testing {
namespace {

using nlohmann::json;

bool HasType(const json& v, const std::string& type) {
  if (type == "null") return v.is_null();
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return false;
}

void Check(const json& root, const json& schema, const json& v, const std::string& path,
           std::vector<std::string>* out) {
  if (schema.contains("$ref")) {
    std::string ref = schema["$ref"];  // "#/$defs/name"
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) == 0 && root.contains("$defs")) {
      Check(root, root["$defs"][ref.substr(prefix.size())], v, path, out);
    }
    return;
  }
  if (schema.contains("type")) {
    bool ok = false;
    if (schema["type"].is_array()) {
      for (const auto& t : schema["type"]) ok = ok || HasType(v, t.get<std::string>());
    } else {
      ok = HasType(v, schema["type"].get<std::string>());
    }
    if (!ok) {
      out->push_back(path + ": expected " + schema["type"].dump() + ", got " + v.dump().substr(0, 80));
      return;
    }
  }
  if (schema.contains("const") && v != schema["const"]) out->push_back(path + ": expected " + schema["const"].dump());
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) out->push_back(path + ": " + v.dump() + " not in " + schema["enum"].dump());
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>()) {
    out->push_back(path + ": below minimum");
  }
  if (v.is_object()) {
    if (schema.contains("required")) {
      for (const auto& r : schema["required"]) {
        if (!v.contains(r.get<std::string>())) out->push_back(path + ": missing required field " + r.get<std::string>());
      }
    }
    const json props = schema.value("properties", json::object());
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) {
        Check(root, props[it.key()], it.value(), path + "." + it.key(), out);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) out->push_back(path + ": unexpected field " + it.key());
        if (extra.is_object()) Check(root, extra, it.value(), path + "." + it.key(), out);
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < v.size(); ++i) Check(root, schema["items"], v[i], path + "[" + std::to_string(i) + "]", out);
  }
}

}  // namespace

std::vector<std::string> ValidateSchema(const json& schema, const json& value) {
  std::vector<std::string> out;
  Check(schema, schema, value, "$", &out);
  return out;
}

}  // namespace faultline::testing
