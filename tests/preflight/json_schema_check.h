// A small JSON Schema checker for the tests: the subset our schemas use
// (type incl. unions with null, const, enum, required, properties,
// additionalProperties as bool or schema, items, minimum). Returns the list of
// violations, each with its JSON pointer; empty when the document conforms.
#ifndef FAULTLINE_TESTS_PREFLIGHT_JSON_SCHEMA_CHECK_H_
#define FAULTLINE_TESTS_PREFLIGHT_JSON_SCHEMA_CHECK_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace faultline::testing {

std::vector<std::string> CheckJsonSchema(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_PREFLIGHT_JSON_SCHEMA_CHECK_H_
