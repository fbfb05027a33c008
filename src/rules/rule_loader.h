// Loads rule files (YAML) into Rule values, validating each field; an error
// names file:line and what to change.
#ifndef FAULTLINE_RULES_RULE_LOADER_H_
#define FAULTLINE_RULES_RULE_LOADER_H_

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.h"
#include "util/status.h"

namespace faultline::rules {

// The phase vocabulary of design.md, in the order a job moves through it.
const std::vector<std::string>& PhaseOrder();
int PhaseIndex(std::string_view phase);  // -1 when not a known phase

// Parses one rule file's text; `name` is used in messages and Rule::source.
Result<std::vector<Rule>> ParseRuleFile(std::string_view yaml_text, const std::string& name);
Result<std::vector<Rule>> LoadRuleFile(const std::string& path);

// Whether a YAML file is a triage rule file (has a top-level rules: list).
bool IsTriageRuleFile(std::string_view yaml_text);

// The rule files compiled into the binary (rules/*.yaml at build time): the
// copy that precompile_rules parsed and serialised at build time when the
// binary has one (RegisterBuiltinRules; parsing the YAML was most of
// triage's start-up), else ParseBuiltinRuleFiles().
Result<std::vector<Rule>> LoadBuiltinRules();
// Always parses the embedded YAML (the build-time tools, the test that the
// serialised copy equals it).
Result<std::vector<Rule>> ParseBuiltinRuleFiles();

// Rules to and from a compact byte string (every field of Rule).
std::string SerializeRules(const std::vector<Rule>& rules);
Result<std::vector<Rule>> DeserializeRules(std::string_view blob);
// Called by the generated source (diagnosis/precompiled_rules.cc) before main;
// `blob` stays valid for the process's life.
void RegisterBuiltinRules(std::string_view blob);
bool HaveSerialisedBuiltinRules();

// Checks every rule's samples against its own pattern: each match sample must
// match and each no_match sample must not. Returns one message per failure.
std::vector<std::string> CheckSamples(const std::vector<Rule>& rules);

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_RULE_LOADER_H_
