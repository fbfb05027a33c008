// faultline rules list|check: inspect and validate rule files.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "rules/rule_loader.h"
#include "rules/rule_set.h"

namespace faultline::cli {

namespace {

Result<std::vector<rules::Rule>> LoadAll(const std::vector<std::string>& files, bool builtin) {
  std::vector<rules::Rule> all;
  if (builtin) {
    auto b = rules::LoadBuiltinRules();
    if (!b.ok()) return b.status();
    all = std::move(*b);
  }
  for (const auto& f : files) {
    auto r = rules::LoadRuleFile(f);
    if (!r.ok()) return r.status();
    for (auto& x : *r) all.push_back(std::move(x));
  }
  return all;
}

}  // namespace

void AddRulesCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("rules", "List or check the knowledge base (rules/*.yaml)");
  cmd->footer(
      HelpFooter("faultline rules check my-rules.yaml", "0 all files valid, 1 a rule file has errors, 2 usage error"));
  cmd->require_subcommand(1);
  auto files = std::make_shared<std::vector<std::string>>();

  CLI::App* list = cmd->add_subcommand("list", "List the built-in rules");
  list->callback([exit_code]() {
    auto all = LoadAll({}, true);
    if (!all.ok()) {
      std::cerr << "faultline: " << all.status().message() << "\n";
      *exit_code = kExitUsage;
      return;
    }
    for (const auto& r : *all) {
      std::cout << fmt::format("{:<48} {:<9} {}\n", r.id, rules::RuleKindName(r.kind),
                               r.title.empty() ? r.category : r.title);
    }
    *exit_code = kExitHealthy;
  });

  CLI::App* check = cmd->add_subcommand("check",
                                        "Validate rule files: fields, patterns (RE2 "
                                        "and Hyperscan), and every sample line");
  check->add_option("files", *files, "rule files to check (default: the built-in rules)");
  check->callback([files, exit_code]() {
    auto all = LoadAll(*files, files->empty());
    if (!all.ok()) {
      std::cerr << "faultline: " << all.status().message() << "\n";
      *exit_code = kExitUsage;
      return;
    }
    auto set = rules::RuleSet::Build(*all);
    if (!set.ok()) {
      std::cerr << "faultline: " << set.status().message() << "\n";
      *exit_code = kExitDiagnosed;
      return;
    }
    auto problems = rules::CheckSamples(*all);
    for (const auto& p : problems) std::cout << p << "\n";
    std::cout << fmt::format("{} rules checked, {} problem(s)\n", all->size(), problems.size());
    *exit_code = problems.empty() ? kExitHealthy : kExitDiagnosed;
  });
}

FAULTLINE_REGISTER_COMMAND(80, AddRulesCommand);

}  // namespace faultline::cli
