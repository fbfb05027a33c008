// faultline triage [FILE...]: post-mortem diagnosis of a failed or stalled job.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "cli/process_view.h"
#include "diagnosis/triage.h"
#include "report/printers.h"
#include "rules/redactor.h"

namespace faultline::cli {

namespace {
struct TriageArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> rule_files;
  bool json = false;
  std::string format = "text";
  bool explain = false;
  bool no_builtin_rules = false;
  bool templates = false;
  std::string color = "auto";
  size_t max_cascade = 50;
  std::string process;
  std::string around;
  int context = 8;
};

// Bytes in the named inputs (regular files, and the files under directories).
uint64_t InputBytes(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& in : inputs) {
    if (in == "-") continue;
    if (fs::is_directory(in, ec)) {
      for (fs::recursive_directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec)) total += it->file_size(ec);
      }
    } else if (fs::is_regular_file(in, ec)) {
      total += fs::file_size(in, ec);
    }
  }
  return total;
}

// Bytes this process has read so far (rchar of /proc/self/io), compressed
// input counted as read from disk.
uint64_t BytesRead() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

std::string Size(double bytes) {
  if (bytes >= (1 << 30)) return fmt::format("{:.1f} GiB", bytes / (1 << 30));
  return fmt::format("{:.0f} MiB", bytes / (1 << 20));
}

// "faultline: reading 412 MiB of 1.0 GiB (40%)" on a terminal's stderr,
// redrawn in place while a large triage runs and erased when it ends; nothing
// when stderr is not a terminal or the input is small.
class Progress {
 public:
  explicit Progress(const std::vector<std::string>& inputs) {
    if (::isatty(STDERR_FILENO) != 1) return;
    total_ = InputBytes(inputs);
    if (total_ < kMinBytes) return;
    start_ = BytesRead();
    thread_ = std::thread([this] { Loop(); });
  }
  ~Progress() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (shown_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  static constexpr uint64_t kMinBytes = 256ull << 20;
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; })) return;
    while (!done_) {
      uint64_t read = BytesRead() - start_;
      double pct = 100.0 * std::min<double>(read, total_) / total_;
      std::cerr << "\r\033[Kfaultline: reading " << Size(std::min<double>(read, total_)) << " of " << Size(total_)
                << fmt::format(" ({:.0f}%)", pct) << std::flush;
      shown_ = true;
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return done_; });
    }
  }
  uint64_t total_ = 0;
  uint64_t start_ = 0;
  bool shown_ = false;
  bool done_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace

void AddTriageCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TriageArgs>();
  CLI::App* cmd = app.add_subcommand("triage",
                                     "Name the root cause of a failed or stalled job from its logs "
                                     "(files, directories, .gz/.zst; stdin when piped)");
  cmd->footer(HelpFooter("faultline triage examples/seed-vllm-dp-rank/vllm.log", kExitCodesTriage));
  cmd->add_option("inputs", args->inputs,
                  "log files, directories of logs, or - for stdin (the default "
                  "when piped)");
  cmd->add_option("--format", args->format,
                  "text; json (the faultline.triage/1 object); github (an "
                  "Actions ::error annotation on the line)")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "the same as --format json");
  cmd->add_flag("--explain", args->explain, "show why the root cause was chosen and every cascade item");
  cmd->add_option("--rules", args->rule_files, "extra rule file (YAML) to load; repeat for several")
      ->allow_extra_args(false);  // one file per --rules: the log names that follow are inputs
  cmd->add_flag("--no-builtin-rules", args->no_builtin_rules, "do not load the rules built into the binary");
  cmd->add_flag("--templates", args->templates,
                "mine line templates: give reported lines their template id "
                "and count, and list what the log is made of");
  cmd->add_option("--color", args->color, "colour the text report: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--max-cascade", args->max_cascade, "cascade items to list (all are counted)");
  cmd->add_option("--process", args->process,
                  "print one process's lines alone, wrappers peeled, tracebacks whole: a tag as the report names it "
                  "('Worker pid=7506', rank3), a pid or a rank");
  cmd->add_option("--around", args->around,
                  "print the lines around LINE (or FILE:LINE) of every process, each tagged with its process");
  cmd->add_option("--context", args->context, "lines each side for --around")->capture_default_str();
  cmd->callback([args, exit_code]() {
    diagnosis::TriageOptions options;
    options.inputs = args->inputs;
    if (options.inputs.empty()) {
      if (::isatty(STDIN_FILENO) == 1) {
        std::cerr << "faultline: triage: no input; name log files or "
                     "directories, or pipe a log in "
                     "('faultline help triage')\n";
        *exit_code = kExitUsage;
        return;
      }
      options.inputs = {"-"};
    }
    if (!args->process.empty() || !args->around.empty()) {
      if (!args->process.empty() && !args->around.empty()) {
        std::cerr << "faultline: triage: give --process or --around, not both\n";
        *exit_code = kExitUsage;
        return;
      }
      ProcessViewOptions view;
      view.inputs = options.inputs;
      view.rule_files = args->rule_files;
      view.process = args->process;
      view.around = args->around;
      view.context = std::max(0, args->context);
      view.color = report::ShouldColor(args->color, STDOUT_FILENO);
      std::ostringstream shown;
      *exit_code = PrintProcessView(view, shown, std::cerr);
      std::cout << rules::Secrets().Text(shown.str());  // the redaction choke point
      return;
    }
    options.rule_files = args->rule_files;
    options.no_builtin_rules = args->no_builtin_rules;
    options.max_cascade = args->max_cascade;
    options.templates = args->templates;
    std::string format = args->json ? "json" : args->format;
    Result<report::TriageReport> report = [&] {
      Progress progress(options.inputs);
      return diagnosis::Triage(options);
    }();
    if (!report.ok()) {
      std::cerr << "faultline: " << report.status().message() << "\n";
      *exit_code = kExitUsage;
      return;
    }
    if (format == "json") {
      nlohmann::json j = report::ToJson(*report);
      rules::Secrets().Json(&j);  // the redaction choke point (rules/redact.yaml)
      std::cout << report::DumpJson(j) << "\n";
    } else if (format == "github") {
      std::ostringstream shown;
      report::PrintGithub(*report, shown);
      std::cout << rules::Secrets().Text(shown.str());
    } else {
      report::TextOptions text;
      text.color = report::ShouldColor(args->color, STDOUT_FILENO);
      text.explain = args->explain;
      text.width = report::TerminalWidth(STDOUT_FILENO);
      text.wrap_lines = ::isatty(STDOUT_FILENO) == 1;
      std::ostringstream shown;
      report::PrintText(*report, text, shown);
      std::cout << rules::Secrets().Text(shown.str());
    }
    *exit_code = report->verdict == report::Verdict::kHealthy ? kExitHealthy : kExitDiagnosed;
  });
}

FAULTLINE_REGISTER_COMMAND(10, AddTriageCommand);

}  // namespace faultline::cli
