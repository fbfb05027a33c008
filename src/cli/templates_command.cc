// `faultline templates FILE...`: mines log templates and prints them with
// their counts (text or --json), or with --per-line one CSV row per input
// line (LineId,EventId,EventTemplate) for scoring against labelled data.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "input/byte_source.h"
#include "input/line_reader.h"
#include "mining/header_strip.h"
#include "mining/miner_profile.h"
#include "mining/template_miner.h"
#include "rules/redactor.h"
#include "util/read_file.h"
#include "util/status.h"

namespace faultline::cli {
namespace {

struct TemplatesPlan {
  std::vector<std::string> inputs;
  bool json = false;
  bool per_line = false;
  bool csv = false;
  bool messages = false;
  std::string header = "auto";
  std::string profile = "default";
  std::string profiles_file;
  bool timing = false;
};

std::string CsvField(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string EventId(const mining::TemplateMiner& miner, mining::TemplateId id) {
  const mining::Template* t = miner.Find(id);
  return t == nullptr ? std::string("evicted") : fmt::format("E{}", t->id() + 1);
}

Result<std::string> ReadFile(const std::string& path) { return ReadSmallFile(path); }

int RunTemplates(const TemplatesPlan& plan) {
  // Settings first, so that a bad profile fails before any input is read.
  std::string yaml_text(mining::BuiltinProfiles());
  std::string source = "rules/mining.yaml (built in)";
  if (!plan.profiles_file.empty()) {
    auto text = ReadFile(plan.profiles_file);
    if (!text.ok()) {
      std::cerr << "faultline templates: " << text.status().message() << "\n";
      return kExitUsage;
    }
    yaml_text = std::move(text.value());
    source = plan.profiles_file;
  }
  auto options = mining::LoadProfile(yaml_text, source, plan.profile);
  if (!options.ok()) {
    std::cerr << "faultline templates: " << options.status().message() << "\n";
    return kExitUsage;
  }
  auto miner_or = mining::TemplateMiner::Create(std::move(options.value()));
  if (!miner_or.ok()) {
    std::cerr << "faultline templates: " << miner_or.status().message() << "\n";
    return kExitUsage;
  }
  mining::TemplateMiner& miner = *miner_or.value();
  const mining::HeaderMode header =
      plan.messages || plan.header == "none" ? mining::HeaderMode::kNone : mining::HeaderMode::kAuto;

  std::vector<mining::TemplateId> line_ids;
  const auto start = std::chrono::steady_clock::now();
  uint64_t bytes = 0;
  for (const std::string& path : plan.inputs) {
    auto src = input::OpenByteSource(path);
    if (!src.ok()) {
      std::cerr << "faultline templates: " << src.status().message() << "\n";
      return kExitUsage;
    }
    input::LineReader reader(std::move(src.value()));
    input::LineBlock block;
    while (reader.NextBlock(&block)) {
      std::string_view data = block.data;
      bytes += data.size();
      while (!data.empty()) {
        size_t nl = data.find('\n');
        std::string_view line = data.substr(0, nl);
        data.remove_prefix(nl == std::string_view::npos ? data.size() : nl + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
        mining::TemplateId id = miner.Add(mining::StripHeader(line, header));
        if (plan.per_line) line_ids.push_back(id);
      }
    }
    if (!reader.status().ok()) {
      std::cerr << "faultline templates: warning: " << reader.status().message() << "\n";
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (plan.timing) {
    std::cerr << fmt::format("lines={} bytes={} templates={} seconds={:.4f} lines_per_s={:.0f} mb_per_s={:.1f}\n",
                             miner.messages(), bytes, miner.size(), seconds, miner.messages() / seconds,
                             bytes / seconds / 1e6);
  }

  // A template is shown through the redaction choke point (rules/redact.yaml).
  auto Shown = [](const mining::Template* t) { return rules::Secrets().Text(t->text()); };
  std::string out;
  if (plan.per_line && !plan.json) {
    out = "LineId,EventId,EventTemplate\n";
    for (size_t i = 0; i < line_ids.size(); ++i) {
      const mining::Template* t = miner.Find(line_ids[i]);
      out += fmt::format("{},{},{}\n", i + 1, EventId(miner, line_ids[i]), CsvField(t ? Shown(t) : ""));
    }
  } else {
    std::vector<const mining::Template*> templates = miner.Templates();
    std::stable_sort(templates.begin(), templates.end(),
                     [](const auto* a, const auto* b) { return a->count() > b->count(); });
    if (plan.json) {
      nlohmann::json doc;
      doc["schema"] = "faultline.templates/1";
      doc["lines"] = miner.messages();
      doc["evicted"] = miner.evicted();
      nlohmann::json& list = doc["templates"] = nlohmann::json::array();
      for (const auto* t : templates) {
        list.push_back({{"id", fmt::format("E{}", t->id() + 1)}, {"count", t->count()}, {"template", Shown(t)}});
      }
      if (plan.per_line) {
        nlohmann::json& lines = doc["line_templates"] = nlohmann::json::array();
        for (auto id : line_ids) lines.push_back(EventId(miner, id));
      }
      out = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else if (plan.csv) {
      out = "EventId,EventTemplate,Occurrences\n";
      for (const auto* t : templates) out += fmt::format("E{},{},{}\n", t->id() + 1, CsvField(Shown(t)), t->count());
    } else {
      out = fmt::format("{} lines, {} templates{}\n", miner.messages(), templates.size(),
                        miner.evicted() ? fmt::format(" ({} evicted)", miner.evicted()) : "");
      for (const auto* t : templates) out += fmt::format("{:>8}  E{:<5} {}\n", t->count(), t->id() + 1, Shown(t));
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitHealthy;
}

}  // namespace

void AddTemplatesCommand(CLI::App& app, int* exit_code) {
  auto plan = std::make_shared<TemplatesPlan>();
  CLI::App* cmd = app.add_subcommand("templates", "Group log lines into templates and print them with counts");
  cmd->footer(HelpFooter("faultline templates vllm.log", "0, 2 usage or input error"));
  cmd->add_option("files", plan->inputs, "Log files (\"-\" for standard input)")->required();
  cmd->add_flag("--json", plan->json, "Print one JSON object (schema faultline.templates/1)");
  cmd->add_flag("--per-line", plan->per_line, "Print LineId,EventId,EventTemplate for every input line");
  cmd->add_flag("--csv", plan->csv, "CSV output (the default with --per-line)");
  cmd->add_flag("--messages", plan->messages, "Each line is a bare message: no header stripping");
  cmd->add_option("--header", plan->header, "How to cut the log prefix before mining: auto or none")
      ->check(CLI::IsMember({"auto", "none"}));
  cmd->add_option("--profile", plan->profile, "Miner profile (rules/mining.yaml)");
  cmd->add_option("--profiles", plan->profiles_file, "Profiles file to use instead of the built-in one");
  cmd->add_flag("--timing", plan->timing, "Print lines/s on standard error");
  cmd->callback([plan, exit_code] { *exit_code = RunTemplates(*plan); });
}

FAULTLINE_REGISTER_COMMAND(70, AddTemplatesCommand);

}  // namespace faultline::cli
