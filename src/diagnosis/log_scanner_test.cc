// The line walk that applies runs of plain and step lines at once (the scan
// threads sum them up) must leave exactly the Findings of the walk that takes
// every line one by one, wherever the blocks are cut: inside a traceback,
// inside a multi-line exception message, inside a run of step lines.
#include "diagnosis/log_scanner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "diagnosis/block_pipeline.h"
#include "parse/line_parser.h"
#include "rules/rule_loader.h"
#include "rules/wrapper_loader.h"

namespace faultline::diagnosis {
namespace {

namespace fs = std::filesystem;

// Every input of tests/real and every log of tests/golden: real logs with
// tracebacks, chained exceptions, step counters, progress bars, wrappers.
std::vector<input::InputFile> RealLogs() {
  std::vector<input::InputFile> files;
  const fs::path root(FAULTLINE_SOURCE_DIR);
  for (const char* corpus : {"tests/real", "tests/golden"}) {
    for (const auto& dir : fs::directory_iterator(root / corpus)) {
      if (!dir.is_directory()) continue;
      for (const auto& f : fs::directory_iterator(dir.path())) {
        const std::string name = f.path().filename().string();
        if (!f.is_regular_file() || name == "README.md" || name.rfind("expect", 0) == 0) continue;
        files.push_back({f.path().string(), f.path().string()});
      }
    }
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return files;
}

// The scan thread reuses the parses of the line before for a line of the
// same digit shape (log_scanner.cc PrepareOnScanThread): that holds while the
// parser decides on shapes, never on a digit's value. Every line of every
// real and golden log, with its digits changed two ways, must parse to the
// same structure: the same process prefix at the same place, the same
// header format and level, the message at the same place, a time or none.
TEST(LineShapeTest, ShapesDecideTheParse) {
  auto shape_of = [](const parse::ParsedLine& p, std::string_view line) {
    auto at = [&](std::string_view v) {  // where a view into the line is; another one's text ("NCCL")
      if (v.empty()) return std::string("-");
      if (v.data() < line.data() || v.data() + v.size() > line.data() + line.size()) return "'" + std::string(v) + "'";
      return std::to_string(v.data() - line.data()) + "+" + std::to_string(v.size());
    };
    return at(p.process) + " " + at(p.role) + " " + at(p.parent) + " " + at(p.message) + " " + at(p.source) + " " +
           std::string(p.format) + " " + std::to_string(static_cast<int>(p.level)) + " " +
           (p.time.valid ? "t" : "-") + (p.pid >= 0 ? "p" : "-") + (p.rank >= 0 ? "r" : "-");
  };
  size_t lines = 0, failures = 0;
  for (const auto& file : RealLogs()) {
    std::ifstream in(file.path, std::ios::binary);
    std::string line;
    while (std::getline(in, line) && failures < 20) {
      if (line.find_first_of("0123456789") == std::string::npos) continue;
      ++lines;
      const std::string shape = shape_of(parse::ParseLine(line), line);
      const std::string prefix = shape_of(parse::ParseProcessPrefixes(line), line);
      for (int way = 0; way < 2; ++way) {
        std::string other = line;
        for (char& c : other) {
          if (c >= '0' && c <= '9') c = static_cast<char>(way == 0 ? '0' + (c - '0' + 1) % 10 : '9' - (c - '0'));
        }
        const std::string other_shape = shape_of(parse::ParseLine(other), other);
        const std::string other_prefix = shape_of(parse::ParseProcessPrefixes(other), other);
        if (other_shape != shape || other_prefix != prefix) {
          ++failures;
          ADD_FAILURE() << file.path << ": the parse depends on a digit's value:\n  " << line << "\n  " << shape
                        << " / " << prefix << "\n  " << other << "\n  " << other_shape << " / " << other_prefix;
        }
      }
    }
  }
  EXPECT_GT(lines, 10000u);
}

std::string Time(const parse::Timestamp& t) {
  if (!t.valid) return "-";
  return std::to_string(t.year) + "/" + std::to_string(t.OrderKey());
}

std::string Where(const events::LineInfo& w) {
  return std::to_string(w.file) + ":" + std::to_string(w.line) + "[" + w.text + "]";
}

// Everything the ranker and the report read from Findings.
std::string Describe(const Findings& f) {
  std::string s = "lines " + std::to_string(f.total_lines) + " dropped " + std::to_string(f.events_dropped) + "\n";
  for (const auto& e : f.events) {
    s += "event " + std::to_string(static_cast<int>(e.kind)) + " " + Where(e.where) + " " + e.process.key + " " +
         e.message + " | " + e.exception + " t " + Time(e.time) + " repeats " + std::to_string(e.repeats) + "\n";
    for (const auto& c : e.context) s += "  ctx " + Where(c) + "\n";
    for (const auto& c : e.continuation) s += "  cont " + Where(c) + "\n";
    for (const auto& c : e.chain) s += "  chain " + c + "\n";
    for (const auto& m : e.matches) s += "  match " + std::to_string(m.rule) + "\n";
  }
  for (const auto& p : f.phases) {
    s += "phase " + p.phase + " " + std::to_string(p.rule) + " " + p.process.key + " " + p.process.role + " " +
         std::to_string(p.process.pid) + " " + Where(p.where) + " t " + Time(p.time) + " last " + Where(p.last) +
         " t " + Time(p.last_time) + (p.completes ? " completes" : "") + (p.generic ? " generic" : "") + "\n";
  }
  for (const auto& st : f.stops) s += "stop " + std::to_string(st.rule) + " " + Where(st.where) + "\n";
  auto marks = [&s](const char* what, const auto& m) {
    for (const auto& [k, v] : m) {
      s += std::string(what) + " " + k + " " + Where(v.where) + " t " + Time(v.time) + " " + v.step + "/" + v.total +
           "\n";
    }
  };
  marks("progress", f.last_progress);
  marks("generic", f.last_generic_progress);
  marks("completion", f.last_completion);
  for (const auto& [k, v] : f.progress_counters) s += "counter " + std::to_string(k.first) + " " + k.second + "\n";
  for (const auto& [k, v] : f.facts) s += "fact " + k + "=" + v + "\n";
  for (const auto& [k, st] : f.processes) {
    s += "proc " + k + " " + std::to_string(st.lines) + " " + std::to_string(st.errors) + " " + Where(st.first_line) +
         " " + Where(st.last_line) + "\n";
  }
  for (const auto& in : f.inputs) s += "input " + in.file + " " + std::to_string(in.lines) + "\n";
  for (const auto& w : f.warnings) s += "warning " + w + "\n";
  if (f.last_line) s += "last " + Where(*f.last_line) + "\n";
  return s;
}

class RunWalkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto builtin = rules::LoadBuiltinRules();
    ASSERT_TRUE(builtin.ok());
    auto set = BuildScanRuleSet(std::move(*builtin));
    ASSERT_TRUE(set.ok());
    rules_ = set->release();
    auto wrappers = rules::LoadWrappers({});
    ASSERT_TRUE(wrappers.ok());
    wrappers_ = wrappers->release();
  }
  static void TearDownTestSuite() {
    delete rules_;
    delete wrappers_;
  }
  static const rules::RuleSet* rules_;
  static const parse::WrapperSet* wrappers_;
};
const rules::RuleSet* RunWalkTest::rules_ = nullptr;
const parse::WrapperSet* RunWalkTest::wrappers_ = nullptr;

TEST_F(RunWalkTest, RunsAtOnceEqualLineByLineAtEveryBlockSize) {
  const std::vector<input::InputFile> files = RealLogs();
  ASSERT_GT(files.size(), 200u);
  int64_t applied = 0, step_runs = 0;
  // Small blocks cut inside tracebacks and multi-line messages on every log
  // (the tiniest only on the smaller logs: the test stays fast).
  struct Cut {
    size_t block_bytes;
    int scan_threads;
    uintmax_t max_file_bytes;
  };
  for (const Cut& cut : {Cut{150, 0, 8 << 10}, Cut{1000, 2, 64 << 10}, Cut{1 << 20, 0, ~uintmax_t{0}}}) {
    SetPipelineScanThreads(cut.scan_threads);
    for (bool need_times : {false, true}) {
      for (const auto& file : files) {
        if (fs::file_size(file.path) > cut.max_file_bytes) continue;
        Findings serial, runs;
        ScanTuning one_by_one{cut.block_bytes, false, nullptr};
        ScanTuning at_once{cut.block_bytes, true, &applied, &step_runs};
        Status a = ScanInput(file, 0, need_times, *rules_, wrappers_, &serial, one_by_one);
        Status b = ScanInput(file, 0, need_times, *rules_, wrappers_, &runs, at_once);
        ASSERT_EQ(a.ok(), b.ok()) << file.path;
        ASSERT_EQ(Describe(serial), Describe(runs))
            << file.path << " block " << cut.block_bytes << " threads " << cut.scan_threads << " times " << need_times;
      }
    }
  }
  SetPipelineScanThreads(-1);
  EXPECT_GT(applied, 300) << "the runs were never applied: the test compares nothing";
  EXPECT_GT(step_runs, 5) << "no run moved a training mark";
}

// The block size is the machine's choice (AutoBlockBytes: 256 KiB on few
// cores, 1 MiB on many): every real log gives the same findings at both, the
// times of phase marks included (a served request's line is not parsed for its
// time as it passes: Scanner::DeferTime).
TEST_F(RunWalkTest, FindingsDoNotDependOnTheBlockSizeTheMachineChooses) {
  const std::vector<input::InputFile> files = RealLogs();
  ASSERT_GT(files.size(), 200u);
  size_t cut = 0;  // logs the smaller block size cuts into several blocks
  for (const auto& file : files) {
    ScanTuning at_256k;
    at_256k.block_bytes = size_t{256} << 10;
    ScanTuning at_1m;
    at_1m.block_bytes = size_t{1} << 20;
    for (bool need_times : {false, true}) {
      Findings small, large;
      ASSERT_TRUE(ScanInput(file, 0, need_times, *rules_, wrappers_, &small, at_256k).ok()) << file.path;
      ASSERT_TRUE(ScanInput(file, 0, need_times, *rules_, wrappers_, &large, at_1m).ok()) << file.path;
      EXPECT_EQ(Describe(small), Describe(large)) << file.path << " times " << need_times;
    }
    cut += fs::file_size(file.path) > at_256k.block_bytes;
  }
  EXPECT_GT(cut, 3u) << "no log spans two 256 KiB blocks: the test compares nothing";
  const size_t auto_bytes = AutoBlockBytes();
  EXPECT_TRUE(auto_bytes == (size_t{256} << 10) || auto_bytes == (size_t{1} << 20)) << auto_bytes;
}

// Gated rules (rules::RuleSet::GateLiterals: training marks and progress
// counters, found by their literals and confirmed by RE2) leave exactly the
// Findings of the scan that matches them in Hyperscan, on every real and
// golden log, alone and as one of several inputs.
TEST_F(RunWalkTest, GatedRulesFindWhatTheFullScanFinds) {
  auto builtin = rules::LoadBuiltinRules();
  ASSERT_TRUE(builtin.ok());
  size_t gated = 0;
  for (const rules::Rule& r : *builtin) gated += !rules::RuleSet::GateLiterals(r).empty();
  EXPECT_GE(gated, 5u) << "no rule is gated: the test compares nothing";
  auto ungated = BuildScanRuleSet(std::move(*builtin), false);
  ASSERT_TRUE(ungated.ok()) << ungated.status().message();
  int64_t marked = 0;
  for (bool need_times : {false, true}) {
    for (const auto& file : RealLogs()) {
      Findings full, gate;
      ASSERT_EQ(ScanInput(file, 0, need_times, **ungated, wrappers_, &full).ok(),
                ScanInput(file, 0, need_times, *rules_, wrappers_, &gate).ok());
      ASSERT_EQ(Describe(full), Describe(gate)) << file.path << " times " << need_times;
      marked += static_cast<int64_t>(gate.last_progress.size() + gate.last_generic_progress.size());
    }
  }
  EXPECT_GT(marked, 50) << "no training mark or progress counter was found";
}

// A real step log (tests/real/hf-trainer-llamafactory-lora-sft-h100-completed:
// the HF Trainer's loss dicts between tqdm redraws), read as one of several
// inputs (times resolved on every line) and alone, cut at every few bytes:
// the step lines' marks, the phase's latest line and every process's counts
// agree at every cut, and the runs moved the marks at some of them.
TEST_F(RunWalkTest, StepLogMarksAgreeAtEveryCut) {
  const fs::path log = fs::path(FAULTLINE_SOURCE_DIR) / "tests" / "real" /
                       "hf-trainer-llamafactory-lora-sft-h100-completed" / "train.log";
  std::vector<input::InputFile> logs{{log.string(), log.string()}};
  ASSERT_FALSE(logs.empty());
  int64_t applied = 0, step_runs = 0;
  for (bool need_times : {false, true}) {
    for (size_t block_bytes = 40; block_bytes < 13000; block_bytes += 211) {
      Findings serial, runs;
      ScanTuning one_by_one{block_bytes, false, nullptr, nullptr};
      ScanTuning at_once{block_bytes, true, &applied, &step_runs};
      ASSERT_TRUE(ScanInput(logs[0], 0, need_times, *rules_, wrappers_, &serial, one_by_one).ok());
      ASSERT_TRUE(ScanInput(logs[0], 0, need_times, *rules_, wrappers_, &runs, at_once).ok());
      ASSERT_EQ(Describe(serial), Describe(runs)) << "block " << block_bytes << " times " << need_times;
      ASSERT_FALSE(serial.last_progress.empty());
    }
  }
  EXPECT_GT(step_runs, 20);
}

// A step line of the previous line's shape takes its resolved hits
// (ScanTuning::reuse_shapes): the Findings are those of resolving every
// line, on every real and golden log, alone and as one of several inputs,
// in whole blocks and cut small.
TEST_F(RunWalkTest, LinesOfOneShapeFindWhatResolvingEachLineFinds) {
  for (size_t block_bytes : {size_t{1} << 20, size_t{700}}) {
    for (bool need_times : {false, true}) {
      for (const auto& file : RealLogs()) {
        if (block_bytes < 1000 && fs::file_size(file.path) > (64 << 10)) continue;
        Findings each, reused;
        ScanTuning resolve_each{block_bytes, true, nullptr, nullptr, false};
        ScanTuning reuse{block_bytes, true, nullptr, nullptr, true};
        ASSERT_EQ(ScanInput(file, 0, need_times, *rules_, wrappers_, &each, resolve_each).ok(),
                  ScanInput(file, 0, need_times, *rules_, wrappers_, &reused, reuse).ok());
        ASSERT_EQ(Describe(each), Describe(reused)) << file.path << " block " << block_bytes << " times " << need_times;
      }
    }
  }
}

}  // namespace
}  // namespace faultline::diagnosis
