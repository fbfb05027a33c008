// A small JSON Schema checker for the subset our docs/*.schema.json use:
// type (string or list), properties, required, additionalProperties (false or a schema),
// items, enum, const, minimum. Enough to keep the documented contract and the
// writer from drifting apart.
#ifndef FAULTLINE_TESTS_JSON_SCHEMA_H_
#define FAULTLINE_TESTS_JSON_SCHEMA_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace faultline::testing {

// Returns one message per violation ("$.root_cause.line: expected integer").
std::vector<std::string> ValidateSchema(const nlohmann::json& schema, const nlohmann::json& value);

}  // namespace faultline::testing

#endif  // FAULTLINE_TESTS_JSON_SCHEMA_H_
