// faultline triage FILE...: post-mortem diagnosis of a failed or stalled job.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "diagnosis/triage.h"
#include "report/printers.h"
#include "rules/redactor.h"

namespace faultline::cli {

namespace {
struct TriageArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> rule_files;
  bool json = false;
  bool explain = false;
  bool no_builtin_rules = false;
  bool templates = false;
  std::string color = "auto";
  size_t max_cascade = 50;
};
}  // namespace

void AddTriageCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = app.add_subcommand(
      "triage", "Name the root cause of a failed or stalled job from its logs (files, directories, .gz/.zst, - for stdin)");
  cmd->add_option("inputs", args->inputs, "log files, directories of logs, or - for stdin")->required();
  cmd->add_flag("--json", args->json, "print the faultline.triage/1 JSON object");
  cmd->add_flag("--explain", args->explain, "show why the root cause was chosen and every cascade item");
  cmd->add_option("--rules", args->rule_files, "extra rule file(s) (YAML) to load");
  cmd->add_flag("--no-builtin-rules", args->no_builtin_rules, "do not load the rules built into the binary");
  cmd->add_flag("--templates", args->templates,
                "mine line templates: give reported lines their template id and count, and list what the log is made of");
  cmd->add_option("--color", args->color, "colour the text report: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--max-cascade", args->max_cascade, "cascade items to list (all are counted)");
  cmd->callback([args, exit_code]() {
    diagnosis::TriageOptions options;
    options.inputs = args->inputs;
    options.rule_files = args->rule_files;
    options.no_builtin_rules = args->no_builtin_rules;
    options.max_cascade = args->max_cascade;
    options.templates = args->templates;
    auto report = diagnosis::Triage(options);
    if (!report.ok()) {
      std::cerr << "faultline: " << report.status().message() << "\n";
      *exit_code = kExitUsage;
      return;
    }
    // Both forms leave through the redaction choke point (rules/redact.yaml).
    if (args->json) {
      nlohmann::json j = report::ToJson(*report);
      rules::Secrets().Json(&j);
      std::cout << report::DumpJson(j) << "\n";
    } else {
      report::TextOptions text;
      text.color = report::ShouldColor(args->color, STDOUT_FILENO);
      text.explain = args->explain;
      std::ostringstream shown;
      report::PrintText(*report, text, shown);
      std::cout << rules::Secrets().Text(shown.str());
    }
    *exit_code = report->verdict == report::Verdict::kHealthy ? kExitHealthy : kExitDiagnosed;
  });
}

FAULTLINE_REGISTER_COMMAND(10, AddTriageCommand);

}  // namespace faultline::cli
