// Wrapper golden test: every golden log, wrapped line by line the way the
// tools around a job wrap it (docker compose, kubectl, docker logs -t and
// json-file, journald, srun --label, mpirun, torchrun --tee, CI timestamps,
// and a stack of two), must give the root cause, line, verdict and phase of
// the unwrapped log (tests/golden/*/expected.json). The wrapping is a pure
// transformation of real logs: it is what those tools print around them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace faultline::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Wrapper {
  const char* name;
  std::function<std::string(const std::string& line, int file_index)> wrap;
  bool peeled = true;  // false: a framework prefix the line parser reads itself
  // A prefix no spec describes: learned only from a log whose first lines
  // show enough of its structure (parse/prefix_learner.h), so a short log
  // (a 3-line argparse error) may stay wrapped; how many goldens it is
  // learned on is checked by LearnedPrefixesCoverMostGoldens.
  bool learned = false;
};

// The 1-based number of the line being wrapped (WriteWrapped sets it).
int g_line_number = 0;

std::string JsonString(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

const std::vector<Wrapper>& Wrappers() {
  static const std::vector<Wrapper> wrappers = {
      {"docker_compose", [](const std::string& l, int f) { return "worker-" + std::to_string(f + 1) + "  | " + l; }},
      {"docker_compose_colour", [](const std::string& l, int) { return "\x1b[36mqwen-server  |\x1b[0m " + l; }},
      {"kubectl_prefix",
       [](const std::string& l, int f) { return "[pod/trainer-" + std::to_string(f) + "/main] " + l; }},
      {"kubectl_timestamps", [](const std::string& l, int) { return "2025-05-09T15:15:10.123456789Z " + l; }},
      {"github_actions", [](const std::string& l, int) { return "2025-05-09T15:15:10.1234567Z " + l; }},
      {"docker_json_file",
       [](const std::string& l, int) {
         return R"({"log":)" + JsonString(l + "\n") + R"(,"stream":"stderr","time":"2025-05-09T15:15:10.123456789Z"})";
       }},
      {"journald_short_iso",
       [](const std::string& l, int f) {
         return "2025-05-09T15:15:10+0000 gpu-node-" + std::to_string(f) + " python3[7506]: " + l;
       }},
      {"journald_short", [](const std::string& l, int) { return "May 09 15:15:10 gpu-node-1 python3[7506]: " + l; }},
      {"journald_json",
       [](const std::string& l, int) {
         return R"({"_HOSTNAME":"gpu-node-1","SYSLOG_IDENTIFIER":"python3","_PID":"7506","MESSAGE":)" + JsonString(l) +
                "}";
       }},
      {"srun_label", [](const std::string& l, int f) { return (f < 10 ? " " : "") + std::to_string(f) + ": " + l; }},
      {"mpirun_tag_output", [](const std::string& l, int f) { return "[1," + std::to_string(f) + "]<stderr>:" + l; }},
      {"torchrun_tee", [](const std::string& l, int f) { return "[default" + std::to_string(f) + "]:" + l; }, false},
      // SageMaker's MPI runs, Google Cloud Logging sinks, Buildkite's APC time stamps.
      {"sagemaker_mpirank",
       [](const std::string& l, int f) { return "[1,mpirank:" + std::to_string(f) + ",algo-1]<stdout>:" + l; }},
      {"cloud_logging_json",
       [](const std::string& l, int) {
         return R"({"insertId":"x1","textPayload":)" + JsonString(l) + R"(,"timestamp":"2025-05-09T15:15:10.123Z"})";
       }},
      {"buildkite_apc", [](const std::string& l, int) { return "\x1b_bk;t=1746803710123\x07" + l; }, false},
      // stern's "POD CONTAINER " (a Deployment's pod, a StatefulSet's ordinal pod).
      {"stern", [](const std::string& l, int f) { return "vllm-7c9f8d6b5-x2k4" + std::to_string(f) + " vllm " + l; }},
      {"stern_statefulset",
       [](const std::string& l, int f) { return "trainer-" + std::to_string(f) + " pytorch " + l; }},
      // Wrappers no spec describes, learned from the file (parse/prefix_learner.h):
      // a collector's "[time] ", a CI runner's "HH:MM:SS  ".
      {"learned_bracket_time", [](const std::string& l, int) { return "[2025-05-09T15:15:10.123Z] " + l; }, true, true},
      {"learned_ci_clock", [](const std::string& l, int) { return "15:15:10  " + l; }, true, true},
      {"line_numbers", [](const std::string& l, int) { return fmt::format("{:6}\t{}", g_line_number, l); }},
      {"markdown_quote", [](const std::string& l, int) { return l.empty() ? std::string(">") : "> " + l; }},
      // A paste indented as a whole: a Markdown indented code block (blank lines stay empty), and one around
      // docker logs -t. The blanks are peeled before any wrapper (parse::PasteIndentation), when the first
      // lines show them: a log of bars redrawn with '\r' (cleaned to a state at the margin) may not.
      {"markdown_indented_code", [](const std::string& l, int) { return l.empty() ? l : "    " + l; }, true, true},
      {"indented_docker_timestamps",
       [](const std::string& l, int) { return "    2025-05-09T15:15:10.123456789Z " + l; }, true, true},
      {"kubectl_timestamps_around_compose",
       [](const std::string& l, int) { return "2025-05-09T15:15:10.123456789Z trainer  | " + l; }},
  };
  return wrappers;
}

std::vector<std::string> GoldenDirs() {
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(std::string(FAULTLINE_SOURCE_DIR) + "/tests/golden")) {
    if (e.is_directory()) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<std::string> InputFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name != "README.md" && name != "expected.json" && e.is_regular_file()) files.push_back(name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void WriteWrapped(const std::string& from, const std::string& to, const Wrapper& w, int file_index) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  std::string line;
  g_line_number = 0;
  while (std::getline(in, line)) {
    ++g_line_number;
    out << w.wrap(line, file_index) << '\n';
  }
}

class WrapperGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WrapperGoldenTest, EveryWrapperGivesTheUnwrappedDiagnosis) {
  const std::string dir = GetParam();
  json expected = json::parse(ReadFile(dir + "/expected.json"));
  const std::vector<std::string> files = InputFiles(dir);
  // Compressed inputs are wrapped by nobody: wrappers act on text lines.
  for (const auto& f : files) {
    if (f.size() > 3 && (f.ends_with(".gz") || f.ends_with(".zst"))) GTEST_SKIP() << "compressed input";
  }
  const fs::path work = fs::temp_directory_path() /
                        ("faultline-wrap-" + fs::path(dir).filename().string() + "-" + std::to_string(::getpid()));
  for (const Wrapper& w : Wrappers()) {
    SCOPED_TRACE(w.name);
    fs::remove_all(work);
    fs::create_directories(work);
    std::string args;
    for (size_t i = 0; i < files.size(); ++i) {
      WriteWrapped(dir + "/" + files[i], (work / files[i]).string(), w, static_cast<int>(i));
      args += " " + ShellQuote(files[i]);
    }
    CommandResult r = RunShell(std::string(FAULTLINE_BINARY) + " triage --json" + args, work.string());
    json actual = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(actual.is_discarded()) << "not JSON: " << r.out.substr(0, 300) << r.err;
    if (w.learned && !actual["inputs"][0].contains("wrappers")) continue;
    EXPECT_EQ(actual["verdict"], expected["verdict"]);
    EXPECT_EQ(actual["last_phase"], expected["last_phase"]);
    if (expected["root_cause"].is_object() && actual["root_cause"].is_object()) {
      EXPECT_EQ(actual["root_cause"]["message"], expected["root_cause"]["message"]);
      EXPECT_EQ(actual["root_cause"]["line"], expected["root_cause"]["line"]);
      EXPECT_EQ(actual["root_cause"]["rule"], expected["root_cause"]["rule"]);
    }
    ASSERT_TRUE(actual["inputs"].is_array() && !actual["inputs"].empty());
    if (w.peeled) EXPECT_TRUE(actual["inputs"][0].contains("wrappers")) << "no wrapper detected";
  }
  fs::remove_all(work);
}

// The learned wrappers are worth something only if they are learned on most
// logs: on every golden whose first 64 lines hold at least four lines the
// parser recognises, which is all but the shortest.
TEST(WrapperGoldenCoverageTest, LearnedPrefixesCoverMostGoldens) {
  for (const Wrapper& w : Wrappers()) {
    if (!w.learned) continue;
    SCOPED_TRACE(w.name);
    int learned = 0, goldens = 0;
    std::string missed;
    for (const auto& dir : GoldenDirs()) {
      const std::vector<std::string> files = InputFiles(dir);
      if (files.size() != 1 || files[0].ends_with(".gz") || files[0].ends_with(".zst")) continue;
      ++goldens;
      const fs::path work = fs::temp_directory_path() / ("faultline-learn-" + std::to_string(::getpid()));
      fs::remove_all(work);
      fs::create_directories(work);
      WriteWrapped(dir + "/" + files[0], (work / files[0]).string(), w, 0);
      CommandResult r =
          RunShell(std::string(FAULTLINE_BINARY) + " triage --json " + ShellQuote(files[0]), work.string());
      fs::remove_all(work);
      json actual = json::parse(r.out, nullptr, false);
      if (!actual.is_discarded() && actual["inputs"][0].contains("wrappers")) {
        ++learned;
      } else {
        missed += " " + fs::path(dir).filename().string();
      }
    }
    EXPECT_GE(learned * 10, goldens * 8) << learned << " of " << goldens << "; missed:" << missed;
  }
}

std::string Name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).filename().string();
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Logs, WrapperGoldenTest, ::testing::ValuesIn(GoldenDirs()), Name);

}  // namespace
}  // namespace faultline::testing
