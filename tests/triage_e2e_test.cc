// End-to-end tests of `faultline triage`: the binary run on real files,
// including the bad inputs a user will hand it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace faultline::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kBin = FAULTLINE_BINARY;
const std::string kSeed = std::string(FAULTLINE_SOURCE_DIR) + "/examples/seed-vllm-dp-rank/vllm.log";

class TriageE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("faultline-e2e-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& data) { std::ofstream(Path(name), std::ios::binary) << data; }
  CommandResult Triage(const std::string& args) { return RunShell(kBin + " triage " + args, dir_.string()); }
  fs::path dir_;
};

TEST_F(TriageE2eTest, SeedIncidentNamesTheWorkerAssertionNotTheEngineMessage) {
  CommandResult r = Triage("--json " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["message"], "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_EQ(j["root_cause"]["exception"], "AssertionError");
  EXPECT_EQ(j["root_cause"]["line"], 41);
  EXPECT_EQ(j["root_cause"]["process"]["pid"], 7506);
  EXPECT_EQ(j["root_cause"]["rule"], "vllm.dp-local-rank-out-of-bounds");
  bool engine_message_is_cascade = false;
  for (const auto& c : j["cascade"]) {
    if (c["message"].get<std::string>().find("Engine core initialization failed") != std::string::npos) {
      engine_message_is_cascade = true;
    }
  }
  EXPECT_TRUE(engine_message_is_cascade);
}

TEST_F(TriageE2eTest, TextReportShowsWhereWhyFixAndPhase) {
  CommandResult r = RunShell("NO_COLOR=1 " + kBin + " triage " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("root cause  AssertionError: DP adjusted local rank 3 is out of bounds."), std::string::npos);
  EXPECT_NE(r.out.find("vllm.log:41, process Worker pid=7506"), std::string::npos);
  EXPECT_NE(r.out.find("fix"), std::string::npos);
  EXPECT_NE(r.out.find("never: weight-loading"), std::string::npos);
  EXPECT_NE(r.out.find("later error(s) are consequences"), std::string::npos);
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "NO_COLOR must disable colour";
  CommandResult colored = RunShell(kBin + " triage --color always " + ShellQuote(kSeed));
  EXPECT_NE(colored.out.find("\x1b["), std::string::npos);
}

// torchrun's failure summary prints "train_mem.py FAILED" above the
// "Root Cause" block it introduces: the cascade is not all "later".
TEST_F(TriageE2eTest, TextReportDoesNotCallConsequencesLoggedFirstLater) {
  const std::string log =
      std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/torchrun-vila-summary-only-sigkill/torchrun-tail.log";
  CommandResult r = RunShell("NO_COLOR=1 " + kBin + " triage " + ShellQuote(log));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("other error(s) are consequences"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("later error(s)"), std::string::npos) << r.out;
  CommandResult gh = RunShell(kBin + " triage --format github " + ShellQuote(log));
  EXPECT_NE(gh.out.find("other error(s) are consequences of this one"), std::string::npos) << gh.out;
}

// CI (issue 14, point 5): the root cause as a GitHub Actions annotation on
// its line; stdin read when no input is named and it is not a terminal.
TEST_F(TriageE2eTest, GithubFormatAnnotatesTheRootCauseLine) {
  CommandResult r = RunShell(kBin + " triage --format github " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("::error file=" + kSeed + ",line=41,title=faultline%3A root cause "
                        "(vllm.dp-local-rank-out-of-bounds)::AssertionError: DP adjusted local rank 3 is out of bounds.",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one workflow command, its lines escaped as %0A";
  EXPECT_NE(r.out.find("%0Afix: "), std::string::npos);
  // Piped in, there is no file to point at.
  CommandResult piped = RunShell(kBin + " triage --format github < " + ShellQuote(kSeed));
  EXPECT_EQ(piped.out.rfind("::error title=", 0), 0u) << piped.out;
}

TEST_F(TriageE2eTest, NoInputNamedReadsAPipedStdin) {
  CommandResult named = RunShell(kBin + " triage --json " + ShellQuote(kSeed));
  CommandResult piped = RunShell("cat " + ShellQuote(kSeed) + " | " + kBin + " triage --json");
  ASSERT_EQ(piped.exit_code, 1) << piped.err;
  EXPECT_EQ(json::parse(piped.out)["root_cause"]["message"], json::parse(named.out)["root_cause"]["message"]);
}

// Terminal output (point 4): prose wrapped to the width, evidence under a
// file heading with line numbers (as ripgrep prints), FORCE_COLOR honoured.
TEST_F(TriageE2eTest, TextFitsTheWidthAndListsLinesUnderTheFile) {
  CommandResult r = RunShell("NO_COLOR=1 COLUMNS=80 " + kBin + " triage " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 1);
  std::string prose = r.out.substr(0, r.out.find("\nevidence\n"));
  std::istringstream lines(prose);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_NE(r.out.find("\nevidence\n  ... 4 earlier line(s)\n  " + kSeed + "\n      30  (Worker pid=7506)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n      41: (Worker pid=7506) ERROR"), std::string::npos) << "the root-cause line is marked";
  EXPECT_EQ(r.out.find(kSeed + ":30"), std::string::npos) << "the file is named once, not on every line";
  CommandResult forced = RunShell("env -u NO_COLOR FORCE_COLOR=1 " + kBin + " triage " + ShellQuote(kSeed));
  EXPECT_NE(forced.out.find("\x1b["), std::string::npos) << "FORCE_COLOR colours a pipe";
  CommandResult clicolor = RunShell("env -u NO_COLOR CLICOLOR_FORCE=1 " + kBin + " triage " + ShellQuote(kSeed));
  EXPECT_NE(clicolor.out.find("\x1b["), std::string::npos);
  CommandResult zero = RunShell("FORCE_COLOR=0 " + kBin + " triage " + ShellQuote(kSeed));
  EXPECT_EQ(zero.out.find("\x1b["), std::string::npos);
  CommandResult no = RunShell("NO_COLOR=1 FORCE_COLOR=1 " + kBin + " triage " + ShellQuote(kSeed));
  EXPECT_EQ(no.out.find("\x1b["), std::string::npos) << "NO_COLOR wins";
}

// One process's story (issue 14, point 7): what `grep -A2 "Worker
// pid=7506.*ERROR"` found by hand.
TEST_F(TriageE2eTest, ProcessPrintsThatProcesssLinesAlone) {
  CommandResult r = RunShell(kBin + " triage --process 'Worker pid=7506' " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string heading, line;
  std::getline(lines, heading);
  EXPECT_EQ(heading, "  " + kSeed);
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    EXPECT_NE(line.find("(Worker pid=7506) "), std::string::npos) << line;
  }
  EXPECT_EQ(n, 16);  // every line of it: grep -c 'Worker pid=7506'
  size_t root = r.out.find("\n      41  (Worker pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:800] ");
  ASSERT_NE(root, std::string::npos) << r.out;
  EXPECT_LT(r.out.find("AssertionError: DP adjusted local rank 3 is out of bounds.", root), r.out.find('\n', root + 1))
      << "the root-cause line, whole";
  // A pid names the same process; a near miss is named back.
  EXPECT_EQ(RunShell(kBin + " triage --process 7506 " + ShellQuote(kSeed)).out, r.out);
  CommandResult miss = RunShell(kBin + " triage --process 'Worker pid=7507' " + ShellQuote(kSeed));
  EXPECT_EQ(miss.exit_code, 2);
  EXPECT_EQ(miss.err.rfind("faultline: triage: no line of process 'Worker pid=7507'; did you mean 'Worker pid=750", 0),
            0u)
      << miss.err;
  EXPECT_EQ(miss.err.find('\n'), miss.err.size() - 1);
}

// The same log as docker compose prints it (each line prefixed "vllm-1  | ",
// a pure transformation): the wrapper is peeled from what --process prints.
TEST_F(TriageE2eTest, ProcessPeelsTheWrappers) {
  std::ifstream in(kSeed);
  std::string wrapped, line;
  while (std::getline(in, line)) wrapped += "vllm-1  | " + line + "\n";
  Write("compose.log", wrapped);
  CommandResult plain = RunShell(kBin + " triage --process 'Worker pid=7506' " + ShellQuote(kSeed));
  CommandResult r = Triage("--process 'Worker pid=7506' compose.log");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(r.out.find('\n')), plain.out.substr(plain.out.find('\n'))) << r.out;
  EXPECT_EQ(r.out.find("vllm-1  |"), std::string::npos);
}

TEST_F(TriageE2eTest, AroundShowsTheInterleavedNeighbourhood) {
  CommandResult r = RunShell(kBin + " triage --around 41 --context 3 " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 8u) << r.out;  // the heading, then lines 38..44
  EXPECT_EQ(got[0], "  " + kSeed);
  EXPECT_EQ(got[4].rfind("      41: Worker pid=7506 ", 0), 0u) << got[4];
  // Tags padded to one column, then " | " and the line as printed.
  size_t bar = got[1].find(" | ");
  for (size_t i = 1; i < got.size(); ++i) EXPECT_EQ(got[i].find(" | "), bar) << got[i];
  EXPECT_EQ(Triage("--around nope.log:3 " + ShellQuote(kSeed)).exit_code, 2);
  EXPECT_EQ(Triage("--around 99999 " + ShellQuote(kSeed)).exit_code, 2);
}

TEST_F(TriageE2eTest, ReadsStdinGzipAndZstdAlike) {
  CommandResult plain = RunShell(kBin + " triage --json - < " + ShellQuote(kSeed));
  ASSERT_EQ(plain.exit_code, 1) << plain.err;
  RunShell("gzip -c " + ShellQuote(kSeed) + " > seed.log.gz && zstd -q -c " + ShellQuote(kSeed) + " > seed.log.zst",
           dir_.string());
  CommandResult gz = Triage("--json seed.log.gz");
  CommandResult zst = Triage("--json seed.log.zst");
  ASSERT_EQ(gz.exit_code, 1) << gz.err;
  ASSERT_EQ(zst.exit_code, 1) << zst.err;
  for (const auto* r : {&plain, &gz, &zst}) {
    json j = json::parse(r->out);
    EXPECT_EQ(j["root_cause"]["line"], 41);
  }
  EXPECT_EQ(json::parse(gz.out)["inputs"][0]["format"], "gzip");
  EXPECT_EQ(json::parse(zst.out)["inputs"][0]["format"], "zstd");
}

TEST_F(TriageE2eTest, AHeaderThatAnnouncesAListKeepsEveryItem) {
  // tests/real/torchrun-gpu-ddp-state-dict-reloaded-into-bare-model-module-prefix-keys: the second item
  // says the keys carry the DDP wrapper's prefix; advice after the items is left out.
  Write("train.log",
        "Traceback (most recent call last):\n"
        "  File \"t.py\", line 21, in <module>\n"
        "RuntimeError: Error(s) in loading state_dict for Net:\n"
        "\tMissing key(s) in state_dict: \"encoder.weight\". \n"
        "\tUnexpected key(s) in state_dict: \"module.encoder.weight\". \n");
  CommandResult r = Triage("--json train.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  const std::string m = j["root_cause"]["message"];
  EXPECT_NE(m.find("Missing key(s) in state_dict: \"encoder.weight\""), std::string::npos) << m;
  EXPECT_NE(m.find("Unexpected key(s) in state_dict: \"module.encoder.weight\""), std::string::npos) << m;
  EXPECT_EQ(j["root_cause"]["line"], 4);
}

TEST_F(TriageE2eTest, AMessageCutMidPhraseGoesOnOnTheNextLine) {
  // tests/real/trtllm-bench-autodeploy-dsv3-lite-mla-mixed-batch-illegal-memory-access-wrapped-message: the
  // paste wraps TensorRT-LLM's one-line error after "CUDA runtime error in"; the message is the whole sentence,
  // and the root cause stays at the exception's line.
  Write("trtllm.log",
        "RuntimeError: [TensorRT-LLM][ERROR] CUDA runtime error in\n"
        "cudaStreamIsCapturing(stream, &status): an illegal memory access was encountered\n"
        "(../include/tensorrt_llm/common/cudaUtils.h:157)\n");
  CommandResult r = Triage("--json trtllm.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  const std::string m = j["root_cause"]["message"];
  EXPECT_NE(m.find("CUDA runtime error in cudaStreamIsCapturing(stream, &status): an illegal memory access"),
            std::string::npos)
      << m;
  EXPECT_EQ(j["root_cause"]["line"], 1);
}

TEST_F(TriageE2eTest, VllmsWarningThatItsCExtensionFailedToImportExplainsTheMissingOp) {
  // tests/real/vllm-cpu-macos-nightly-wheel-torch-abi-c-extension-dlopen-warning-then-opnamespace-attributeerror:
  // vLLM records pasted without their time; the import failure is only a WARNING, the AttributeError of the
  // op it did not register is its consequence.
  Write("vllm.log",
        "WARNING [cpu.py:459] Failed to import from vllm._C: ImportError(\n"
        "  'dlopen(.../site-packages/vllm/_C.abi3.so, 0x0002): Symbol not found:\n"
        "   __ZN3c104impl3cow23materialize_cow_storageERNS_11StorageImplE\n"
        "   Referenced from: .../site-packages/vllm/_C.abi3.so\n"
        "   Expected in:     .../site-packages/torch/lib/libc10.dylib')\n"
        "\n"
        "ERROR [multiproc_executor.py:912] WorkerProc failed to start.\n"
        "ERROR [multiproc_executor.py:912]   File \".../vllm/v1/worker/cpu_worker.py\", line 71, in __init__\n"
        "ERROR [multiproc_executor.py:912]     torch.ops._C.init_cpu_memory_env([memory_node])\n"
        "ERROR [multiproc_executor.py:912] AttributeError: '_OpNamespace' '_C' object has no attribute "
        "'init_cpu_memory_env'\n"
        "\n"
        "RuntimeError: Engine core initialization failed. See root cause above.\n"
        "  Failed core proc(s): {'EngineCore': 1}\n");
  CommandResult r = Triage("--json vllm.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 1) << r.out;
}

TEST_F(TriageE2eTest, TensorRtsCudaRuntimeErrorBeatsTheTracebackCutAfterIt) {
  // tests/real/trtllm-kserve-caii-llama-33-70b-tp2-l40s-engine-build-trt-cuda-runtime-out-of-memory: TensorRT's
  // first "Error Code 1: Cuda Runtime (out of memory)" is the root cause, not the traceback the paste cut after
  // its first line (rules/cuda.yaml cuda.tensorrt-cuda-runtime-error).
  Write("trtllm-build.log",
        "INFO 2025-11-07 17:37:10.695 build_utils.py:239] Total time of reading and converting rank0 checkpoint: "
        "32.43 s\n"
        "[11/07/2025-17:42:27] [TRT] [E] [resizingAllocator.cpp::allocate::78] Error Code 1: Cuda Runtime (out of "
        "memory)\n"
        "[11/07/2025-17:42:32] [TRT] [E] [myelinResourceManager.cpp::allocate::196] Error Code 2: OutOfMemory "
        "(Requested size was 71603093760 bytes.)\n"
        "Traceback (most recent call last):\n");
  CommandResult r = Triage("--json trtllm-build.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["root_cause"]["line"], 2) << r.out;
  const std::string m = j["root_cause"]["message"];
  EXPECT_NE(m.find("Error Code 1: Cuda Runtime (out of memory)"), std::string::npos) << m;
}

TEST_F(TriageE2eTest, AGoCliUnknownFlagUnderSystemdIsTheRootCauseOfTheServicesExit) {
  // tests/real/ollama-journald-systemd-unit-serve-unknown-flag-host-restart-loop (real journald lines): cobra's
  // "Error: unknown flag: --host" is the error; systemd's "Main process exited" is its summary.
  Write("journal.log",
        "Jan 06 17:40:00 ubuntu-server systemd[1]: Started ollama.service - Ollama Service.\n"
        "Jan 06 17:40:00 ubuntu-server ollama[269589]: Error: unknown flag: --host\n"
        "Jan 06 17:40:00 ubuntu-server systemd[1]: ollama.service: Main process exited, code=exited, "
        "status=1/FAILURE\n"
        "Jan 06 17:40:00 ubuntu-server systemd[1]: ollama.service: Failed with result 'exit-code'.\n");
  CommandResult r = Triage("--json journal.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 2) << r.out;
}

TEST_F(TriageE2eTest, DirectoryOfPerRankLogsIsMergedByTimestamp) {
  // rank1.log sorts after rank0.log but its error happened first.
  Write("rank0.log",
        "2025-05-09 15:14:50,000 - train - INFO - step 1\n"
        "2025-05-09 15:15:30,000 - train - ERROR - peer gone\n"
        "Traceback (most recent call last):\n"
        "  File \"t.py\", line 1, in <module>\n"
        "RuntimeError: Connection closed by peer\n");
  Write("rank1.log",
        "2025-05-09 15:14:50,000 - train - INFO - step 1\n"
        "2025-05-09 15:15:10,000 - train - INFO - loading batch\n"
        "Traceback (most recent call last):\n"
        "  File \"t.py\", line 9, in <module>\n"
        "ZeroDivisionError: division by zero\n");
  CommandResult r = Triage("--json .");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["root_cause"]["message"], "ZeroDivisionError: division by zero");
  EXPECT_EQ(j["root_cause"]["file"], "./rank1.log");
  EXPECT_EQ(j["inputs"].size(), 2u);
}

TEST_F(TriageE2eTest, TemplatesGiveReportedLinesTheirTemplateAndSummarizeTheLog) {
  CommandResult r = Triage("--json --templates " + ShellQuote(kSeed));
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  // Ranks 3 and 2 raise the same assertion: one template, seen twice.
  EXPECT_EQ(j["root_cause"]["template"]["count"], 2);
  EXPECT_GT(j["templates"]["total"].get<int>(), 10);
  EXPECT_FALSE(j["templates"]["rarest"].empty());
  CommandResult text = Triage("--templates " + ShellQuote(kSeed));
  EXPECT_NE(text.out.find("what this log is made of"), std::string::npos);
  EXPECT_FALSE(json::parse(Triage("--json " + ShellQuote(kSeed)).out).contains("templates"));
}

TEST_F(TriageE2eTest, MissingFileIsAUsageErrorWithNothingOnStdout) {
  CommandResult r = Triage("no-such.log");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("no-such.log"), std::string::npos);
}

TEST_F(TriageE2eTest, EmptyFileAndEmptyDirectoryAreInputErrors) {
  Write("empty.log", "");
  CommandResult r = Triage("empty.log");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("empty"), std::string::npos);
  fs::create_directories(dir_ / "nologs");
  CommandResult d = Triage("nologs");
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.err.find("no log files"), std::string::npos);
}

TEST_F(TriageE2eTest, BinaryFileIsRejected) {
  RunShell("cp " + ShellQuote(kBin) + " program", dir_.string());
  CommandResult r = Triage("program");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("binary"), std::string::npos);
}

TEST_F(TriageE2eTest, TruncatedGzipGivesAPartialResultWithAWarning) {
  RunShell("gzip -c " + ShellQuote(kSeed) + " | head -c 3000 > cut.log.gz", dir_.string());
  CommandResult r = Triage("--json cut.log.gz");
  ASSERT_NE(r.exit_code, 2) << r.err;
  json j = json::parse(r.out);
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_NE(j["warnings"][0].get<std::string>().find("truncated gzip"), std::string::npos);
  EXPECT_GT(j["total_lines"].get<int>(), 0);
}

TEST_F(TriageE2eTest, HugeLineIsCutNotLoadedWhole) {
  // A 50 MB line with no newline, between two ordinary lines: cut at 256 KiB and read on (past
  // 64 MiB without a line end the input is refused as not a log: HostileInputTest).
  RunShell("{ echo 'INFO start'; head -c 50000000 /dev/zero | tr '\\0' x; echo; "
           "echo 'Traceback (most recent call last):'; echo '  File \"a.py\", line 1, in <module>'; "
           "echo 'KeyError: missing'; } > huge.log",
           dir_.string());
  CommandResult r = Triage("--json huge.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["root_cause"]["message"], "KeyError: missing");
  EXPECT_EQ(j["root_cause"]["line"], 5);
  EXPECT_FALSE(j["warnings"].empty());
}

TEST_F(TriageE2eTest, CarriageReturnsAnsiAndNulBytesAreCleaned) {
  static const char kMessy[] =
        "\x1b[1;36m(Worker pid=12)\x1b[0;0m INFO 05-09 15:14:59 [loader.py:1] Loading\r\n"
        "progress 10%\rprogress 50%\rprogress 100%\r\n"
        "\x1b[1;36m(Worker pid=12)\x1b[0;0m ERROR 05-09 15:15:00 [core.py:2] Traceback (most recent call last):\r\n"
        "\x1b[1;36m(Worker pid=12)\x1b[0;0m ERROR 05-09 15:15:00 [core.py:2]   File \"x.py\", line 3, in f\r\n"
        "\x1b[1;36m(Worker pid=12)\x1b[0;0m ERROR 05-09 15:15:00 [core.py:2] ValueError: bad\0\0 value \xff\r\n";
  Write("messy.log", std::string(kMessy, sizeof(kMessy) - 1));  // keeps the NUL bytes
  CommandResult r = Triage("--json messy.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["root_cause"]["line"], 5);
  EXPECT_EQ(j["root_cause"]["process"]["tag"], "Worker pid=12");
  std::string msg = j["root_cause"]["message"];
  EXPECT_EQ(msg.rfind("ValueError: bad value", 0), 0u) << msg;
}

TEST_F(TriageE2eTest, SecretsAreRedactedInReports) {
  Write("secret.log",
        "INFO launching with HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 --api-key sk-proj-abcdefghijklmnopqrstuvwx\n"
        "Traceback (most recent call last):\n"
        "  File \"a.py\", line 1, in <module>\n"
        "PermissionError: token hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 rejected\n");
  CommandResult r = Triage("--json secret.log");
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.find("hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"), std::string::npos) << r.out;
  EXPECT_NE(json::parse(r.out)["root_cause"]["message"].get<std::string>().find("PermissionError"), std::string::npos);
}

TEST_F(TriageE2eTest, LogThatStopsMidStartupIsStalled) {
  Write("stall.log",
        "(EngineCore_DP0 pid=5) INFO 05-09 15:14:59 [core.py:1] Waiting for init message from front-end.\n"
        "(Worker pid=7) INFO 05-09 15:15:02 [parallel_state.py:1] world_size=2 rank=0 local_rank=0 "
        "distributed_init_method=tcp://127.0.0.1:1234 backend=nccl\n");
  CommandResult r = Triage("--json stall.log");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_TRUE(j["root_cause"].is_null());
  EXPECT_EQ(j["last_line"]["line"], 2);
}

// The phase model's mechanisms, driven by a rule file of their own (the
// built-in rules are off, so the test says which rule does what).
constexpr const char* kPhaseRules = R"(rules:
  - id: t.start
    kind: phase
    phase: process-start
    pattern: 'job starting'
    samples: {match: ['job starting']}
  - id: t.counter
    kind: phase
    phase: training
    progress: true
    pattern: 'work (?P<step>\d+)/(?P<total>\d+)'
    samples: {match: ['work 3/10']}
  - id: t.step
    kind: phase
    phase: training
    pattern: 'train step (?P<step>\d+)'
    samples: {match: ['train step 4']}
  - id: t.done
    kind: phase
    phase: training
    completes: true
    pattern: 'all work done'
    samples: {match: ['all work done']}
  - id: t.report
    kind: phase
    phase: training
    completes: true
    final: true
    pattern: 'test accuracy \d+%'
    samples: {match: ['test accuracy 97%']}
  - id: t.run-counter
    kind: phase
    phase: training
    progress: true
    ends_at_total: true
    pattern: 'run step (?P<step>\d+)/(?P<total>\d+)'
    samples: {match: ['run step 3/40']}
  - id: t.ctrl-c
    kind: stop
    pattern: '^KeyboardInterrupt$'
    reason: the user pressed Ctrl-C
    samples: {match: ['KeyboardInterrupt']}
)";

TEST_F(TriageE2eTest, GenericProgressCountsOnlyWhenItsCounterRises) {
  Write("phases.yaml", kPhaseRules);
  Write("once.log", "job starting\nwork 3/10\n");
  json once = json::parse(Triage("--json --no-builtin-rules --rules phases.yaml once.log").out);
  EXPECT_EQ(once["verdict"], "stalled");
  EXPECT_EQ(once["last_phase"], "process-start");
  Write("rising.log", "job starting\nwork 3/10\nwork 4/10\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml rising.log");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "stalled") << "training that ends without a completion marker is a stall";
  EXPECT_EQ(j["last_phase"], "training");
  ASSERT_FALSE(j["stall_hints"].empty());
  EXPECT_NE(j["stall_hints"][0].get<std::string>().find("at step 4/10"), std::string::npos) << j["stall_hints"];
}

TEST_F(TriageE2eTest, EveryGenericShapeOnALineKeepsItsOwnCounter) {
  // The epoch stays at 1 while the bracketed counter rises: the bracket is the progress (builtin rules).
  Write("epoch.log", "Epoch 1 [  20/500] loss: 0.02849 lr: 1.0e-03\nEpoch 1 [  40/500] loss: 0.02883 lr: 1.0e-03\n");
  json j = json::parse(Triage("--json epoch.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
  ASSERT_FALSE(j["stall_hints"].empty());
  EXPECT_NE(j["stall_hints"][0].get<std::string>().find("at step 40/500"), std::string::npos) << j["stall_hints"];
  // A build's step counter is not training.
  Write("ninja.log", "[1/3] c++ -c cpu_adam.cpp -o cpu_adam.o\n[2/3] c++ -c cpu_adam_impl.cpp -o cpu_adam_impl.o\n");
  EXPECT_EQ(json::parse(Triage("--json ninja.log").out)["last_phase"], "process-start");
}

TEST_F(TriageE2eTest, SessionElevenPhaseMarksNameWhereAStalledJobWas) {
  auto phase = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    json j = json::parse(Triage("--json " + name).out);
    EXPECT_EQ(j["verdict"], "stalled") << name;
    return j["last_phase"].get<std::string>();
  };
  // A watchdog line a paste wrapped after "timeout:": the work on the next line is the stop and, at a high
  // sequence number, a training collective.
  EXPECT_EQ(phase("wrapped.log",
                  "[rank3] Watchdog caught collective operation timeout:\n"
                  "WorkNCCL(SeqNum=64214, OpType=ALLGATHER, NumelIn=1, NumelOut=32, Timeout(ms)=600000)\n"),
            "training");
  // Megatron's model-parallel groups are up: distributed init (what it builds next comes before the model).
  EXPECT_EQ(phase("megatron.log",
                  "> initialized tensor model parallel with size 2\n"
                  "> initialized pipeline model parallel with size 4\n"
                  "> setting random seeds to 1234 ...\n"
                  "> compiling and loading fused kernels ...\n"),
            "distributed-init");
  // Lightning's plain model summary, cut above its "Total estimated model params size" line: fit started.
  EXPECT_EQ(phase("lightning.log",
                  "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2\n"
                  "  | Name     | Type     | Params\n"
                  "0 | layer_1  | Linear   | 25.1 K\n"
                  "27.9 K    Trainable params\n"
                  "0         Non-trainable params\n"
                  "27.9 K    Total params\n"),
            "training");
  // Ray 1.x starting its local instance: the driver's cluster is up, the workers are being placed.
  EXPECT_EQ(phase("ray.log",
                  "2022-03-22 11:11:17,420\tINFO services.py:1412 -- View the Ray dashboard at http://127.0.0.1:8265\n"
                  "2022-03-22 11:11:18,857\tINFO trainer.py:199 -- Trainer logs will be logged in: /tmp/r\n"),
            "distributed-init");
  // py-spy of a process inside deepspeed.initialize: its model was loaded, its training not begun.
  EXPECT_EQ(phase("pyspy.txt",
                  "Thread 46930 (idle): \"MainThread\"\n"
                  "    wait (torch/utils/file_baton.py:42)\n"
                  "    _jit_compile (torch/utils/cpp_extension.py:1522)\n"
                  "    __init__ (deepspeed/runtime/engine.py:377)\n"
                  "    initialize (deepspeed/__init__.py:156)\n"
                  "    main (main.py:273)\n"),
            "weight-loading");
  // py-spy of a vLLM engine core in compile_or_warm_up_model (after the KV cache): graph capture / warm-up.
  EXPECT_EQ(phase("vllm-pyspy.txt",
                  "Thread 2403 (active)\n"
                  "    warmup_kernels (vllm/v1/worker/gpu/warmup.py:348)\n"
                  "    compile_or_warm_up_model (vllm/v1/worker/gpu_worker.py:866)\n"
                  "    _initialize_kv_caches (vllm/v1/engine/core.py:345)\n"),
            "cuda-graph-capture");
  // ... and in its memory profiling: kv-cache-profiling.
  EXPECT_EQ(phase("vllm-profile.txt",
                  "Thread 2403 (active)\n"
                  "    profile_run (vllm/v1/worker/gpu_model_runner.py:2100)\n"
                  "    determine_available_memory (vllm/v1/worker/gpu_worker.py:241)\n"),
            "kv-cache-profiling");
  // Ray Serve's controller: a replica still waiting to be scheduled (placement, before any model load).
  EXPECT_EQ(phase("serve.log",
                  "WARNING 2025-03-04 01:04:33,560 controller 306 -- Deployment 'demo' in application 'app' has 1 "
                  "replicas that have taken more than 30s to be scheduled. This may be due to waiting for the cluster "
                  "to auto-scale or for a runtime environment to be installed.\n"),
            "distributed-init");
  // OpenRLHF's experience bar after the rollout engine's "Processed prompts: 100%" (one step of the RL loop,
  // not the job's end), then a task paused waiting for a debugger: stalled in training, the wait the stop.
  Write("rloo.log",
        "Processed prompts: 100%|##########| 64/64 [07:11<00:00,  6.74s/it, est. speed input: 14.93 toks/s]\n"
        "make_experience: 0it [00:00, ?it/s]\n"
        "(remote_rm_fn_ray pid=213237) Ray debugger is listening on 10.140.0.166:37883\n"
        "(remote_rm_fn_ray pid=213237) Waiting for debugger to attach...\n");
  json rloo = json::parse(Triage("--json rloo.log").out);
  EXPECT_EQ(rloo["verdict"], "stalled");
  EXPECT_EQ(rloo["last_phase"], "training");
  ASSERT_FALSE(rloo["stall_hints"].empty());
  EXPECT_NE(rloo["stall_hints"][0].get<std::string>().find("waiting for a debugger to attach"), std::string::npos)
      << rloo["stall_hints"];
}

TEST_F(TriageE2eTest, StackDumpThreadIsWhereItsInnermostMarkedFrameIs) {
  auto phase = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    json j = json::parse(Triage("--json " + name).out);
    EXPECT_EQ(j["verdict"], "stalled") << name;
    return j["last_phase"].get<std::string>();
  };
  // HF Trainer's _inner_training_loop calls deepspeed.initialize before it loops: a thread parked in the
  // engine's parameter broadcast is in distributed set-up, whatever outer frame is a training loop's
  // (py-spy frames of huggingface/transformers#22363).
  EXPECT_EQ(phase("broadcast.txt",
                  "Thread 27321 (active): \"MainThread\"\n"
                  "    broadcast (torch/distributed/distributed_c10d.py:1555)\n"
                  "    _broadcast_model (deepspeed/runtime/engine.py:1105)\n"
                  "    _configure_distributed_model (deepspeed/runtime/engine.py:1182)\n"
                  "    __init__ (deepspeed/runtime/engine.py:297)\n"
                  "    initialize (deepspeed/__init__.py:125)\n"
                  "    deepspeed_init (transformers/deepspeed.py:378)\n"
                  "    _inner_training_loop (transformers/trainer.py:1702)\n"
                  "    train (transformers/trainer.py:1633)\n"),
            "distributed-init");
  // ... and one in the engine's JIT op build under the same loop function: the engine is being built.
  EXPECT_EQ(phase("jit.txt",
                  "Thread 46930 (idle): \"MainThread\"\n"
                  "    wait (torch/utils/file_baton.py:42)\n"
                  "    __init__ (deepspeed/runtime/engine.py:377)\n"
                  "    initialize (deepspeed/__init__.py:156)\n"
                  "    _inner_training_loop (transformers/trainer.py:1891)\n"),
            "weight-loading");
  // torch.compile compiles on the training step's first call: a compile frame under a training frame is
  // training (the corpus labels it so).
  EXPECT_EQ(phase("compile.txt",
                  "Thread 4939 (idle): \"MainThread\"\n"
                  "    compile_fx_inner (torch/_inductor/compile_fx.py:675)\n"
                  "    train_step (megatron/training.py:436)\n"),
            "training");
  // Each thread is its own stack: another thread (another rank's dump) inside the training loop trains.
  EXPECT_EQ(phase("two.txt",
                  "Thread 46930 (idle): \"MainThread\"\n"
                  "    __init__ (deepspeed/runtime/engine.py:377)\n"
                  "    _inner_training_loop (transformers/trainer.py:1891)\n"
                  "Thread 835995 (active): \"MainThread\"\n"
                  "    broadcast (torch/distributed/distributed_c10d.py:1191)\n"
                  "    train_step (megatron/training.py:436)\n"),
            "training");
  // A dataset that torch.load()s its samples, called through the DataLoader from the loop: training.
  EXPECT_EQ(phase("dataset.txt",
                  "Thread 0x00007f1c245b4140 (most recent call first):\n"
                  "  File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/serialization.py\", line 1530 in load\n"
                  "  File \"/work/main/build-dev-phases/hang_scenarios.py\", line 25 in __getitem__\n"
                  "  File \"/opt/torch/.venv/lib/python3.12/site-packages/torch/utils/data/_utils/fetch.py\", line 52 in "
                  "fetch\n"
                  "  File \"/work/main/build-dev-phases/hang_scenarios.py\", line 39 in train_step\n"),
            "training");
  // Frames of a paste that cut the thread's header are one thread too.
  EXPECT_EQ(phase("headless.txt",
                  "Python v3.11.2 (/home/qi/anaconda3/envs/deepspeed/bin/python3.11)\n"
                  "    __init__ (deepspeed/runtime/engine.py:377)\n"
                  "    _inner_training_loop (transformers/trainer.py:1891)\n"),
            "weight-loading");
}

TEST_F(TriageE2eTest, SessionTwelveHangsTrainingCountersWeightBarsAndRedrawnWrappers) {
  auto triage = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    return json::parse(Triage("--json " + name).out);
  };
  // A script's own per-batch line with a loss ("ep: 0, batch: 260, ... loss: 8.39") counts the run's batches.
  json batch = triage("batch.log",
                      "ep: 0, batch: 20, time: 9.17, ntokens: 485.20/513, loss: 10.984375\n"
                      "ep: 0, batch: 40, time: 8.38, ntokens: 431.70/513, loss: 10.976562\n");
  EXPECT_EQ(batch["verdict"], "stalled");
  EXPECT_EQ(batch["last_phase"], "training");
  // A bracketed N/M counter with more fields inside the brackets ("[7008/7010 Srno: 2 (100%)]") and a loss.
  json bracket = triage("bracket.log",
                        "Train Epoch: 0 [7007/7010 Srno: 1 (100%)]\tLoss: 0.207433\n"
                        "Train Epoch: 0 [7008/7010 Srno: 0 (100%)]\tLoss: 0.298333\n"
                        "Train Error: Avg loss: 0.232530 \n");
  EXPECT_EQ(bracket["verdict"], "stalled");
  EXPECT_EQ(bracket["last_phase"], "training");
  // Bars named after the tensor being loaded are weight loading; their "name: " is no pdsh host prefix.
  std::string bars;
  for (int i = 0; i < 8; ++i)
    bars += "mlp1." + std::to_string(i) + ".weight:  " + std::to_string(10 * i) + "%|#   | " + std::to_string(i) +
            "/12 [00:00<00:00, 1929.30w/s, dev=1]\n";
  json weights = triage("weights.log", bars);
  EXPECT_EQ(weights["verdict"], "stalled");
  EXPECT_EQ(weights["last_phase"], "weight-loading");
  EXPECT_EQ(weights["inputs"][0].value("wrappers", ""), "");
  // A wrapper's prefix starts the raw line; a bar's '\r' redraws after it hide it in the cleaned line. The
  // wrapper is still read from the raw lines, so the traceback below is peeled and read as one.
  std::string wrapped;
  for (int i = 0; i < 10; ++i)
    wrapped += "worker-1  |  " + std::to_string(i) + "%|#   | " + std::to_string(i) + "/100 [00:01<00:10]\r " +
               std::to_string(i) + "%|#   | " + std::to_string(i) + "/100 [00:01<00:10]\n";
  wrapped += "worker-1  | {'loss': 0.5082, 'grad_norm': 1.73, 'learning_rate': 6.99e-05, 'epoch': 0.05}\n"
             "worker-1  | Traceback (most recent call last):\n"
             "worker-1  |   File \"train.py\", line 745, in <module>\n"
             "worker-1  |     trainer.train()\n"
             "worker-1  | KeyboardInterrupt\n";
  json redrawn = triage("redrawn.log", wrapped);
  EXPECT_EQ(redrawn["inputs"][0].value("wrappers", ""), "docker-compose");
  EXPECT_EQ(redrawn["verdict"], "stalled");
  EXPECT_EQ(redrawn["last_phase"], "training");
}

TEST_F(TriageE2eTest, SessionThirteenServerHangsTrtllmPhasesFitParamsAndTpBroadcastQueue) {
  auto triage = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    return json::parse(Triage("--json " + name).out);
  };
  // TensorRT-LLM (PyTorch backend) start-up lines name their phase: MPI workers, weights, KV cache, CUDA graphs.
  json mpi = triage("mpi.log",
                    "[TensorRT-LLM] TensorRT-LLM version: 1.2.0rc2\n"
                    "[11/20/2025-23:56:51] [TRT-LLM] [I] start MpiSession with 4 workers\n");
  EXPECT_EQ(mpi["verdict"], "stalled");
  EXPECT_EQ(mpi["last_phase"], "distributed-init");
  json weights = triage("trt_weights.log",
                        "[TensorRT-LLM][INFO] Refreshed the MPI local session\n"
                        "[12/20/2025-04:20:21] [TRT-LLM] [I] Use 63.32 GB for model weights.\n"
                        "Loading safetensors weights in parallel: 100%|##########| 15/15 [00:00<00:00, 81.92it/s]\n");
  EXPECT_EQ(weights["last_phase"], "weight-loading");
  // The NVFP4 fused-MoE loader's per-expert scale warning is printed while the weights load.
  json moe = triage("moe.log",
                    "[2025-09-15 02:22:37] WARNING quantization.py:1680: w1_weight_scale_2 != w3_weight_scale_2 "
                    "(8.973621879704297e-05 != 9.591239358996972e-05), selecting the larger value. Accuracy may be "
                    "affected.\n");
  EXPECT_EQ(moe["verdict"], "stalled");
  EXPECT_EQ(moe["last_phase"], "weight-loading");
  json kv = triage("trt_kv.log",
                   "[12/20/2025-04:20:21] [TRT-LLM] [I] Use 63.32 GB for model weights.\n"
                   "[12/20/2025-04:21:51] [TRT-LLM] [I] Estimated max memory in KV cache : 5.95 GiB\n"
                   "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 5.95 GiB for max tokens in paged KV cache "
                   "(86720).\n");
  EXPECT_EQ(kv["last_phase"], "kv-cache-profiling");
  json graphs = triage("trt_graphs.log",
                       "[TensorRT-LLM][INFO] [MemUsageChange] Allocated 5.95 GiB for max tokens in paged KV cache "
                       "(86720).\n"
                       "[12/20/2025-04:21:53] [TRT-LLM] [I] Creating CUDA graph instances for 11 batch sizes.\n"
                       "[12/20/2025-04:21:53] [TRT-LLM] [I] Run generation only CUDA graph warmup for batch size=64, "
                       "draft_len=0\n");
  EXPECT_EQ(graphs["verdict"], "stalled");
  EXPECT_EQ(graphs["last_phase"], "cuda-graph-capture");
  // llama.cpp fits its parameters to the free device memory inside the model load, before the tensors.
  json fit = triage("fit.log",
                    "I common_init_result: fitting params to device memory ...\n"
                    "I common_params_fit_impl: getting device memory data for initial parameters:\n");
  EXPECT_EQ(fit["verdict"], "stalled");
  EXPECT_EQ(fit["last_phase"], "weight-loading");
  // SGLang's TP ranks join the TP group's broadcast queue while the group is built (distributed init); a bare
  // "Connecting to tcp://" line of another program names no phase.
  json tp = triage("tp.log",
                   "[2025-06-23 15:07:01 TP6] Connecting to tcp://127.0.0.1:57063\n"
                   "[2025-06-23 15:07:01 TP3] Connecting to tcp://127.0.0.1:57063\n");
  EXPECT_EQ(tp["verdict"], "stalled");
  EXPECT_EQ(tp["last_phase"], "distributed-init");
  json bare = triage("bare_connect.log", "Connecting to tcp://127.0.0.1:57063\n");
  EXPECT_NE(bare["last_phase"], "distributed-init");
}

TEST_F(TriageE2eTest, SessionThirteenVllmV0StartupPhasesAndTgiZeroShardLines) {
  auto triage = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    return json::parse(Triage("--json " + name).out);
  };
  // vLLM V0's engine start, weights, profiling and block counts name their phases; a script's prompt bar at its
  // total before them is no completion of the job.
  json v0 = triage("v0.log",
                   "100%|####| 54584/54584 [00:06<00:00, 8619.58it/s]\n"
                   "INFO 08-29 20:48:52 llm_engine.py:70] Initializing an LLM engine with config: model='m', "
                   "tokenizer='m', tokenizer_mode=auto\n"
                   "INFO 08-29 20:49:14 llm_engine.py:196] # GPU blocks: 1981, # CPU blocks: 512\n");
  EXPECT_EQ(v0["verdict"], "stalled");
  EXPECT_EQ(v0["last_phase"], "kv-cache-profiling");
  json weights = triage("v0_weights.log",
                        "INFO 05-18 22:55:28 llm_engine.py:103] Initializing an LLM engine (v0.4.2) with config: "
                        "model='facebook/opt-125m'\n"
                        "INFO 05-18 22:55:31 model_runner.py:145] Loading model weights took 0.2389 GB\n");
  EXPECT_EQ(weights["last_phase"], "weight-loading");
  json prof = triage("v0_prof.log", "INFO 01-09 07:32:55 worker.py:241] Memory profiling takes 6.84 seconds\n");
  EXPECT_EQ(prof["last_phase"], "kv-cache-profiling");
  // TGI 0.x launcher: "Starting shard 0", "Waiting for shard 0 to be ready..." (weights loading in the shard).
  json tgi = triage("tgi0.log",
                    "2023-02-20T16:45:14.079644Z  INFO text_generation_launcher: Starting shard 0\n"
                    "2023-02-20T16:45:24.091665Z  INFO text_generation_launcher: Waiting for shard 0 to be ready...\n");
  EXPECT_EQ(tgi["verdict"], "stalled");
  EXPECT_EQ(tgi["last_phase"], "weight-loading");
}

TEST_F(TriageE2eTest, AVllmWorkersCollectiveTimeoutMillionsOfCollectivesInIsAServerHungWhileServing) {
  auto triage = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    return json::parse(Triage("--json " + name).out);
  };
  // A vLLM Ray worker's all-reduce timed out at sequence number 4,967,570: start-up never issues that many, so
  // the server was serving (ready), not training.
  json serving = triage("serving.log",
                        "(RayWorkerVllm pid=1394) [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective "
                        "operation timeout: WorkNCCL(SeqNum=4967570, OpType=ALLREDUCE, NumelIn=73728, "
                        "NumelOut=73728, Timeout(ms)=1800000) ran for 1800542 milliseconds before timing out.\n");
  EXPECT_EQ(serving["verdict"], "stalled");
  EXPECT_EQ(serving["last_phase"], "ready");
  // The same line without a vLLM worker's prefix stays a collective in a training loop.
  json bare = triage("bare.log",
                     "[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: "
                     "WorkNCCL(SeqNum=4967570, OpType=ALLREDUCE, NumelIn=73728, NumelOut=73728, "
                     "Timeout(ms)=1800000) ran for 1800542 milliseconds before timing out.\n");
  EXPECT_EQ(bare["verdict"], "stalled");
  EXPECT_EQ(bare["last_phase"], "training");
}

TEST_F(TriageE2eTest, AWatchdogTimeoutAfterTheServersShutdownIsAHangWhileServing) {
  // tests/real/vllm-tp2-rtx-pro-6000-dsv4-flash-mtp1-hang-under-load-...: a benchmark harness stops the hung
  // server (uvicorn's shutdown lines), and ten minutes after the decode step's all-gather was issued each
  // rank's watchdog reports it: the job hung while serving, before the shutdown.
  const std::string watchdog =
      "[rank0]:[E517 20:17:34.985814210 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1901719, OpType=_ALLGATHER_BASE, NumelIn=387840, NumelOut=775680, "
      "Timeout(ms)=600000) ran for 600068 milliseconds before timing out.\n";
  Write("served.log",
        "(APIServer pid=182240) INFO:     Application shutdown complete.\n"
        "(APIServer pid=182240) INFO:     Finished server process [182240]\n" + watchdog);
  json j = json::parse(Triage("--json served.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "ready");
  // Without a stop that says the job hung, a server's shutdown is its last phase: it served and stopped.
  Write("stopped.log",
        "(APIServer pid=182240) INFO:     Application startup complete.\n"
        "(APIServer pid=182240) INFO:     Application shutdown complete.\n"
        "(APIServer pid=182240) INFO:     Finished server process [182240]\n");
  json stopped = json::parse(Triage("--json stopped.log").out);
  EXPECT_EQ(stopped["verdict"], "healthy");
  EXPECT_EQ(stopped["last_phase"], "shutdown");
}

TEST_F(TriageE2eTest, AWhatlessTerminateRightAboveTheWatchdogsTimeoutIsTheWatchdogsOwnException) {
  // kohya_ss (torch 2.6 under accelerate): std::terminate's header reached the stream before the watchdog's
  // logged line that is its what(); the first step's all-reduce hung and the watchdog took the rank down.
  const std::string watchdog =
      "[rank0]:[E212 20:45:01.825869991 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process "
      "group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=25, OpType=ALLREDUCE, NumelIn=40960, NumelOut=40960, Timeout(ms)=600000) ran for 600066 "
      "milliseconds before timing out.\n"
      "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most "
      "recent call first):\n";
  Write("watchdog.log", "terminate called after throwing an instance of 'c10::DistBackendError'\n" + watchdog);
  json j = json::parse(Triage("--json watchdog.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
  // A terminate with its what() is an error of its own, before the timeout that follows it.
  Write("own.log",
        "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory access "
        "was encountered\n" + watchdog);
  json own = json::parse(Triage("--json own.log").out);
  EXPECT_EQ(own["verdict"], "failure");
}

TEST_F(TriageE2eTest, AnUnknownFrameworksOwnWordsSayWhereItHungWhenNoMarkerDoes) {
  // LLM-Shearing's pruning script (tests/real/composer-llm-shearing-...): its config dump, then its own print
  // before the trainer's fit; no rule knows the script, so no framework marker says where it was.
  const std::string tail =
      "device_train_batch_size: 8\ndevice_train_grad_accum: 4\nn_params: 6738773034\n\nStarting training...\n";
  Write("shearing.log", tail);
  json j = json::parse(Triage("--json shearing.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
  ASSERT_EQ(j["phases"].size(), 1u);
  EXPECT_EQ(j["phases"][0]["rule"], "words.phase.training");
  bool hinted = false;
  for (const auto& h : j["stall_hints"]) hinted |= h.get<std::string>().find("wording of line 5") != std::string::npos;
  EXPECT_TRUE(hinted) << j["stall_hints"].dump();
  // A framework's own marker says more than any words: Lightning's distributed init, then the same print
  // (a trainer call can still be initialising the process group).
  Write("lightning.log", "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/2\n" + tail);
  json l = json::parse(Triage("--json lightning.log").out);
  EXPECT_EQ(l["verdict"], "stalled");
  EXPECT_EQ(l["last_phase"], "distributed-init");
  for (const auto& ph : l["phases"]) EXPECT_NE(ph["rule"], "words.phase.training");
  // torchrun's banner says only that the launcher started some script: the script's words still count.
  Write("torchrun.log",
        "W1129 08:46:48.109000 585 torch/distributed/run.py:851] Setting OMP_NUM_THREADS environment variable for "
        "each process to be 1 in default, to avoid your system being overloaded, please further tune the variable "
        "for optimal performance in your application as needed. \n" + tail);
  json t = json::parse(Triage("--json torchrun.log").out);
  EXPECT_EQ(t["last_phase"], "training");
  // vLLM's own start means vLLM's marks say where it was: its registry's "Loading model instead." (a model
  // class inspected before any engine exists, tests/real/vllm-v015-compose-...) is no weight loading.
  Write("vllm.log",
        "(APIServer pid=1) INFO 05-06 20:58:12 [utils.py:299] vLLM API server version 0.20.1\n"
        "(APIServer pid=1) DEBUG 01-29 13:15:38 [model_executor/models/registry.py:731] Cache model info for class "
        "vllm.model_executor.models.gpt_oss.GptOssForCausalLM miss. Loading model instead.\n");
  json v = json::parse(Triage("--json vllm.log").out);
  EXPECT_EQ(v["verdict"], "stalled");
  EXPECT_EQ(v["last_phase"], "process-start");
}

TEST_F(TriageE2eTest, SessionElevenRoundTwoPhaseMarksNameWhereAStalledJobWas) {
  auto phase = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    json j = json::parse(Triage("--json " + name).out);
    EXPECT_EQ(j["verdict"], "stalled") << name;
    return j["last_phase"].get<std::string>();
  };
  // SGLang's CudaGraphRunner lists the sizes it is about to capture, and a mid-2025 capture bar has no "bs=" yet:
  // both are the capture (the scheduler never printed "Capture cuda graph begin" in this paste).
  EXPECT_EQ(phase("sglang-bs.log", "[2025-06-26 09:47:18 DP0 TP0] Capture cuda graph bs [2, 4, 8, 16]\n"),
            "cuda-graph-capture");
  EXPECT_EQ(phase("sglang-bar.log",
                  "Capturing batches (avail_mem=27.97 GB):   0%|          | 0/34 [00:00<?, ?it/s]\n"),
            "cuda-graph-capture");
  // verl's trainer building its colocated worker group: the workers are being placed, no model yet.
  EXPECT_EQ(phase("verl.log",
                  "(TaskRunner pid=934945) Total training steps: 11181\n"
                  "(TaskRunner pid=934945) colocated worker base class <class 'verl.single_controller.base.worker.Worker'>\n"),
            "distributed-init");
  // Without the worker-group line the trainer's own set-up names no phase.
  EXPECT_EQ(phase("verl-steps.log", "(TaskRunner pid=934945) Total training steps: 11181\n"), "process-start");
  // DDP rebuilds its reducer buckets in the first training iteration's backward; a Ctrl-C after it (the elastic
  // agent's "Received 2 death signal") stops a job that was training.
  EXPECT_EQ(phase("ddp.log",
                  "[2024-02-22 19:20:22,163][torch.nn.parallel.distributed][INFO] - Reducer buckets have been rebuilt "
                  "in this iteration.\n"
                  "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n"),
            "training");
  // Modal's start-up timeout ends a container that never got ready: like Slurm's time limit it is the failure,
  // with the phase the job had reached.
  Write("modal.log",
        "May 01  14:39:00.751 | INFO 05-01 12:39:00 backends.py:579] Using cache directory: /root/.cache/vllm/"
        "torch_compile_cache/71bb364cc9/rank_0 for vLLM's torch.compile\n"
        "Runner failed with exception: Runner has been initializing for too long: 300 seconds\n");
  json modal = json::parse(Triage("--json modal.log").out);
  EXPECT_EQ(modal["verdict"], "failure");
  EXPECT_EQ(modal["root_cause"]["line"], 2);
  EXPECT_EQ(modal["root_cause"]["rule"], "modal.runner-startup-timeout");
  EXPECT_EQ(modal["last_phase"], "torch-compile");
}

TEST_F(TriageE2eTest, OneProgressLineBelowItsTotalWithALossIsTheRunAtThatStep) {
  // counts_once (builtin progress.generic.step-of-total-with-metric): one line cannot rise, but a step of the
  // run's declared total with a loss on the line is training.
  Write("once.log", "job starting\n[progress] step 3475/4528 (76.7%) | loss=0.4942\n");
  json j = json::parse(Triage("--json once.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
  ASSERT_FALSE(j["stall_hints"].empty());
  EXPECT_NE(j["stall_hints"][0].get<std::string>().find("at step 3475/4528"), std::string::npos) << j["stall_hints"];
  Write("bracket.log", "Train Epoch: 1 [14912/60000 (25%)]\tLoss: 0.051500\n");
  EXPECT_EQ(json::parse(Triage("--json bracket.log").out)["last_phase"], "training");
  // Without a metric one "N/M" line could be anything (a build's "Step 3/10 : RUN ...").
  Write("docker.log", "job starting\nStep 3/10 : RUN pip install -r requirements.txt\n");
  EXPECT_EQ(json::parse(Triage("--json docker.log").out)["last_phase"], "process-start");
}

TEST_F(TriageE2eTest, AWatchdogCollectiveOnAServerThatWasReadyIsServingTraffic) {
  // traffic (builtin progress.phase.collective-in-training): a collective timed out at SeqNum >= 10 is training,
  // unless a server had reached ready (a vLLM engine's stats line with requests running).
  const std::string watchdog =
      "[rank4]:[E ProcessGroupNCCL.cpp:475] [Rank 4] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=20518, OpType=ALLREDUCE, NumelIn=106496, NumelOut=106496, Timeout(ms)=1800000) ran for "
      "1800270 milliseconds before timing out.\n";
  Write("alone.log", watchdog);
  json alone = json::parse(Triage("--json alone.log").out);
  EXPECT_EQ(alone["verdict"], "stalled");
  EXPECT_EQ(alone["last_phase"], "training");
  Write("served.log",
        "INFO 02-03 13:14:04 llm_engine.py:706] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
        "0.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs\n" +
            watchdog);
  json served = json::parse(Triage("--json served.log").out);
  EXPECT_EQ(served["verdict"], "stalled");
  EXPECT_EQ(served["last_phase"], "ready");
}

TEST_F(TriageE2eTest, RayServeAndTeiReadyLinesAreAServerThatReachedReady) {
  // builtin progress.phase.ray-serve-app-ready and tgi.phase.tei-ready: a Serve app deployed, a TEI router Ready,
  // with nothing after them, is a server that reached ready (before: stalled at distributed-init / unknown).
  Write("serve.log",
        "2024-10-23 21:42:24,973\tINFO worker.py:1777 -- Started a local Ray instance. View the dashboard at "
        "127.0.0.1:8265 \n"
        "INFO 2024-10-23 21:42:26,744 serve 32467 api.py:277 - Started Serve in namespace \"serve\".\n"
        "(ServeController pid=32489) INFO 2024-10-23 21:42:26,893 controller 32489 deployment_state.py:1844 - Adding 1 "
        "replica to Deployment(name='echo', app='default').\n"
        "INFO 2024-10-23 21:42:27,756 serve 32467 api.py:549 - Deployed app 'default' successfully.\n");
  json serve = json::parse(Triage("--json serve.log").out);
  EXPECT_EQ(serve["verdict"], "healthy");
  EXPECT_EQ(serve["last_phase"], "ready");
  Write("tei.log",
        "2025-01-04T20:38:31.539445Z  INFO text_embeddings_router: router/src/lib.rs:248: Warming up model\n"
        "2025-01-04T20:38:32.189069Z  INFO text_embeddings_router::http::server: router/src/http/server.rs:1812: "
        "Starting HTTP server: 0.0.0.0:8080\n"
        "2025-01-04T20:38:32.189098Z  INFO text_embeddings_router::http::server: router/src/http/server.rs:1813: "
        "Ready\n");
  json tei = json::parse(Triage("--json tei.log").out);
  EXPECT_EQ(tei["verdict"], "healthy");
  EXPECT_EQ(tei["last_phase"], "ready");
}

TEST_F(TriageE2eTest, AGradioAppRunningOnItsLocalUrlIsReady) {
  // builtin common.phase.gradio-ready: Gradio's launch line is an app that reached ready (before: stalled at
  // process-start), even after a library path that failed to load.
  Write("app.log",
        "Trying to load: /opt/app/aarch64/libdet.so\n"
        "   /opt/app/aarch64/libdet.so: cannot open shared object file: No such file or directory\n"
        "[I][               load_text_encoder][  44]: text feature len 512\n"
        "* Running on local URL:  http://0.0.0.0:7860\n"
        "* To create a public link, set `share=True` in `launch()`.\n");
  json j = json::parse(Triage("--json app.log").out);
  EXPECT_EQ(j["verdict"], "healthy");
  EXPECT_EQ(j["last_phase"], "ready");
}

TEST_F(TriageE2eTest, AMonitoredBarrierTimeoutIsAHangNotACrash) {
  Write("barrier.log",
        "[rank0] checkpoint loaded\n"
        "[rank0]: Traceback (most recent call last):\n"
        "[rank0]:   File \"/x/train.py\", line 69, in main\n"
        "[rank0]:     dist.monitored_barrier(timeout=datetime.timedelta(seconds=20))\n"
        "[rank0]: RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 20000 ms\n");
  json j = json::parse(Triage("--json barrier.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_TRUE(j["root_cause"].is_null());
  ASSERT_FALSE(j["stall_hints"].empty());
  EXPECT_NE(j["stall_hints"][0].get<std::string>().find("monitored_barrier"), std::string::npos) << j["stall_hints"];
}

TEST_F(TriageE2eTest, CompletionMarkerEndsTrainingUnlessProgressFollowsIt) {
  Write("phases.yaml", kPhaseRules);
  Write("done.log", "job starting\nwork 3/10\nwork 10/10\nall work done\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml done.log");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // A framework's own step line after the marker: the run went on (a generic counter would not say so).
  Write("more.log", "job starting\ntrain step 3\nall work done\ntrain step 4\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml more.log").out)["verdict"], "stalled");
}

TEST_F(TriageE2eTest, ARunLongCounterAtItsTotalEndsTheRun) {
  Write("phases.yaml", kPhaseRules);
  // The run's step counter reached its total and the script printed its own summary: done.
  Write("done.log", "job starting\nrun step 1/3\nrun step 2/3\nrun step 3/3\nfinished 3 steps in 2.0s\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml done.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // Short of its total: stalled at step 2/3.
  Write("short.log", "job starting\nrun step 1/3\nrun step 2/3\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml short.log").out)["verdict"], "stalled");
  // A counter without ends_at_total (a per-epoch bar) at its total is no end of the run.
  Write("bar.log", "job starting\nwork 9/10\nwork 10/10\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml bar.log").out)["verdict"], "stalled");
  // A framework's own step line after it: the run went on.
  Write("more.log", "job starting\nrun step 2/3\nrun step 3/3\ntrain step 4\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml more.log").out)["verdict"], "stalled");
}

TEST_F(TriageE2eTest, ACounterSeenOnceAtItsTotalEndsTheRunOnlyWhenNothingFollowsIt) {
  Write("phases.yaml", kPhaseRules);
  // One redraw of a run-long counter at its total (a bar's last state), then the script's own saves: done.
  Write("once.log", "run step 3/3\nsaved the adapter to /tmp/out\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml once.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // A phase mark after it (the job went on to start something): a loader's bar, not the run's end.
  Write("then.log", "run step 3/3\njob starting\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml then.log").out)["verdict"], "stalled");
  // A stop after it: the job was still running when it was stopped.
  Write("stop.log", "run step 3/3\nKeyboardInterrupt\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml stop.log").out)["verdict"], "stalled");
  // Short of its total, or a counter without ends_at_total: no end.
  Write("short.log", "run step 2/3\nsaved the adapter to /tmp/out\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml short.log").out)["verdict"], "stalled");
  Write("bar.log", "work 10/10\nsaved the adapter to /tmp/out\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml bar.log").out)["verdict"], "stalled");
}

TEST_F(TriageE2eTest, ABarRedrawnAtItsTotalAfterACompletionMarkerDoesNotContradictIt) {
  Write("phases.yaml", std::string(kPhaseRules) + R"(  - id: t.bar
    kind: phase
    phase: training
    pattern: 'Progress: (?P<step>\d+)/(?P<total>\d+)'
    samples: {match: ['Progress: 3/9']}
)");
  // A framework's bar closed at its total after the run's final summary: done.
  Write("closed.log", "job starting\nProgress: 8/9\nall work done\nProgress: 9/9\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml closed.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // Still short of its total after the marker: the run went on.
  Write("more.log", "job starting\nProgress: 7/9\nall work done\nProgress: 8/9\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml more.log").out)["verdict"], "stalled");
}

TEST_F(TriageE2eTest, AnEpochBarAtItsTotalEndsTheEpochAndARunBarEndsTheRun) {
  // Built-in rules: a bar whose description names its epoch (Lightning) counts one epoch; a bar without
  // one (torchtune's "epoch|step|Loss", HF Trainer's) counts the run.
  Write("epoch.log", "Epoch 0: 100%|##########| 163/163 [00:40<00:00,  3.99it/s, v_num=1]\n");
  EXPECT_EQ(json::parse(Triage("--json epoch.log").out)["verdict"], "stalled");
  Write("run.log",
        "1|25880|Loss: 0.848: 100%|##########| 25880/25880 [2:30:00<00:00,  2.88it/s]\n"
        "INFO:torchtune.utils.logging:Model checkpoint of size 16.06 GB saved to /tmp/meta_model_0.pt\n");
  CommandResult r = Triage("--json run.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
}

TEST_F(TriageE2eTest, TheEndOfTheDeclaredLastUnitEndsTheRunAndNoOtherUnitsEndDoes) {
  Write("phases.yaml", std::string(kPhaseRules) + R"(  - id: t.unit-end
    kind: phase
    phase: training
    completes: true
    final: true
    at_total: true
    pattern: 'end of round (?P<step>\d+)'
    samples: {match: ['end of round 3']}
)");
  // The counter declared 3 rounds and reached 3/3; round 3's end follows: done.
  Write("last.log", "job starting\nwork 1/3\nend of round 1\nwork 2/3\nend of round 2\nwork 3/3\nend of round 3\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml last.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // An earlier round's end is no end of the run.
  Write("mid.log", "job starting\nwork 1/3\nend of round 1\nwork 2/3\nend of round 2\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml mid.log").out)["verdict"], "stalled");
  // The last round began but did not end: stalled.
  Write("hang.log", "job starting\nwork 1/3\nend of round 1\nwork 2/3\nend of round 2\nwork 3/3\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml hang.log").out)["verdict"], "stalled");
}

TEST_F(TriageE2eTest, WrapperAndInterpreterErrorsOfLaunchedTrainingJobs) {
  // DCP's CheckpointException wraps each failed rank's own traceback: the rank's exception is the
  // root cause (lines from tests/real/fsdp2-gpu-dcp-resume-missing-checkpoint-metadata-is-none).
  Write("dcp.log",
        "[rank0]: Traceback (most recent call last):\n"
        "[rank0]:   File \"/w/cases2.py\", line 52, in <module>\n"
        "[rank0]:     dcp.load(state, checkpoint_id=ckpt)\n"
        "[rank0]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([0])\n"
        "[rank0]: Traceback (most recent call last): (RANK 0)\n"
        "[rank0]:   File \"/t/torch/distributed/checkpoint/utils.py\", line 193, in reduce_scatter\n"
        "[rank0]:     local_data = map_fun()\n"
        "[rank0]:     raise AssertionError(\"metadata is None\")\n"
        "[rank0]: AssertionError: metadata is None\n"
        "E1201 23:35:26.003000 455 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
        "local_rank: 0 (pid: 484) of binary: /opt/torch/.venv/bin/python\n");
  json dcp = json::parse(Triage("--json dcp.log").out);
  EXPECT_EQ(dcp["root_cause"]["line"], 9) << dcp["root_cause"];
  // CPython's "can't open file" for a launcher's script path: no process ran the job.
  Write("script.log",
        "/opt/torch/.venv/bin/python: can't open file '/w/train_gpt.py': [Errno 2] No such file or directory\n"
        "/opt/torch/.venv/bin/python: can't open file '/w/train_gpt.py': [Errno 2] No such file or directory\n"
        "E1201 23:35:15.561000 458 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 2) "
        "local_rank: 0 (pid: 479) of binary: /opt/torch/.venv/bin/python\n");
  json script = json::parse(Triage("--json script.log").out);
  EXPECT_EQ(script["root_cause"]["line"], 1) << script["root_cause"];
  EXPECT_EQ(script["root_cause"]["rule"], "python.script-not-found") << script["root_cause"];
}

TEST_F(TriageE2eTest, AFinalReportIsContradictedByAGenericCounterRisingAfterIt) {
  Write("phases.yaml", kPhaseRules);
  // The report after the last progress: the run is over.
  Write("final.log", "job starting\nwork 3/10\nwork 4/10\ntest accuracy 97%\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml final.log");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["verdict"], "healthy");
  // A report printed after every epoch, then the next epoch's counter rises: the run went on.
  Write("per-epoch.log", "job starting\nwork 3/10\nwork 4/10\ntest accuracy 97%\nwork 5/10\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml per-epoch.log").out)["verdict"],
            "stalled");
  // A marker that is not final ignores a generic counter after it (a trainer's closing bar).
  Write("closing-bar.log", "job starting\nwork 3/10\nwork 4/10\nall work done\nwork 5/10\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules phases.yaml closing-bar.log").out)["verdict"],
            "healthy");
}

TEST_F(TriageE2eTest, AnIndentedPasteOfBarsRedrawnFromTheirOwnCarriageReturnIsStillDedented) {
  // A real HF Trainer log stopped with Ctrl-C in a training step, indented as a whole (a Markdown code block);
  // most of its first lines are bars that start with their own '\r' ("    \r 10%|..."), whose cleaned text
  // starts at the bar: the blanks before the '\r' still count as the paste's indentation.
  std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) +
                   "/tests/real/hf-trainer-gemma2-lora-keyboardinterrupt-in-training-step-epoch-0.06/train.log",
                   std::ios::binary);
  std::string indented, line;
  while (std::getline(in, line)) indented += (line.empty() ? "" : "    ") + line + "\n";
  ASSERT_GT(indented.size(), 100000u);
  Write("indented.log", indented);
  json j = json::parse(Triage("--json indented.log").out);
  EXPECT_EQ(j["inputs"][0].value("wrappers", ""), "indented 4");
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
}

TEST_F(TriageE2eTest, AHardWrappedPasteReadsAsTheLinesTheJobPrinted) {
  // A real vLLM V1 start-up failure (coloured EngineCore prefixes, a long ValueError) cut into rows of 120
  // columns, as `fold` or a terminal copy cuts it: the same root cause, its whole message, and the row of the
  // folded file where its line begins.
  std::ifstream in(std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/vllm-free-memory-below-utilization/nohup.out",
                   std::ios::binary);
  std::string original, folded, line;
  std::vector<int64_t> first_row;  // original line -> its row in the folded file
  int64_t rows = 0;
  while (std::getline(in, line)) {
    original += line + "\n";
    first_row.push_back(rows + 1);
    size_t at = 0;
    do {
      folded += line.substr(at, 120) + "\n";
      ++rows;
      at += 120;
    } while (at < line.size());
  }
  Write("vllm.log", original);
  Write("folded.log", folded);
  json whole = json::parse(Triage("--json vllm.log").out);
  json cut = json::parse(Triage("--json folded.log").out);
  ASSERT_TRUE(whole["root_cause"].is_object());
  ASSERT_TRUE(cut["root_cause"].is_object()) << cut;
  EXPECT_EQ(cut["inputs"][0].value("wrappers", ""), "folded 120");
  EXPECT_EQ(cut["inputs"][0]["lines"], rows);
  EXPECT_EQ(cut["root_cause"]["message"], whole["root_cause"]["message"]);
  EXPECT_NE(cut["root_cause"]["message"].get<std::string>().find("less than desired GPU memory utilization"),
            std::string::npos);
  EXPECT_EQ(cut["root_cause"]["rule"], whole["root_cause"]["rule"]);
  const int64_t line_number = whole["root_cause"]["line"].get<int64_t>();
  EXPECT_EQ(cut["root_cause"]["line"], first_row[static_cast<size_t>(line_number - 1)]);
  EXPECT_EQ(cut["verdict"], whole["verdict"]);
}

TEST_F(TriageE2eTest, ALineSayingTheProcessExitedEndsTheJobButNeverExcusesACrashBeforeIt) {
  const std::string real = std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/";
  // PALS's "Application ... resources:", `time`'s "real 42.30s" and W&B's footer after the run's last
  // lines: the job ran to its end.
  CommandResult ok =
      Triage("--json " + ShellQuote(real + "ezpz-polaris-test-dist-wandb-pals-application-resources-time-healthy/"
                                           "launch-output.txt"));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(json::parse(ok.out)["verdict"], "healthy");
  // The same W&B footer after a traceback: the ImportError stays the root cause, and LSF's
  // "Exited with exit code 1." is only its summary.
  json crash = json::parse(
      Triage("--json " + ShellQuote(real + "lsf-dtu-paligemma-importerror-wandb-footer-exited-1/lsf.out")).out);
  EXPECT_EQ(crash["verdict"], "failure");
  EXPECT_EQ(crash["root_cause"]["line"], 44) << crash["root_cause"];
  // A scheduler's report appended after the job's output names what killed it, with the job script
  // echoed between the shell's "Killed" and LSF's TERM_MEMLIMIT.
  json killed = json::parse(Triage("--json " + ShellQuote(real + "lsf-myretuen-term-memlimit-killed-137/lsf.out")).out);
  EXPECT_EQ(killed["root_cause"]["rule"], "lsf.memory-limit") << killed["root_cause"];
}

TEST_F(TriageE2eTest, AStopThatSaysTheJobHungStallsAServerThatWasReady) {
  Write("serve.yaml", R"(
rules:
  - id: t.ready
    kind: phase
    phase: ready
    pattern: 'Application startup complete'
    samples: {match: ['INFO: Application startup complete.']}
  - id: t.sigterm
    kind: stop
    pattern: 'SIGTERM received'
    reason: the operator stopped the server
    samples: {match: ['SIGTERM received. shutting down']}
  - id: t.watchdog
    kind: stop
    hang: true
    pattern: 'Watchdog timeout'
    reason: the watchdog found a stuck batch
    samples: {match: ['[TP0] Watchdog timeout (self.watchdog_timeout=300)']}
)");
  Write("stopped.log", "server starting\nINFO: Application startup complete.\nSIGTERM received. shutting down\n");
  EXPECT_EQ(json::parse(Triage("--json --no-builtin-rules --rules serve.yaml stopped.log").out)["verdict"], "healthy");
  Write("hung.log",
        "server starting\nINFO: Application startup complete.\n[TP0] Prefill batch. #new-seq: 1\n"
        "[TP0] Watchdog timeout (self.watchdog_timeout=300)\nKilled\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules serve.yaml hung.log");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "ready");
}

TEST_F(TriageE2eTest, StoppedJobIsStalledAtThePhaseBeforeTheStop) {
  Write("phases.yaml", kPhaseRules);
  Write("stopped.log",
        "job starting\nwork 3/10\nwork 4/10\nTraceback (most recent call last):\n"
        "  File \"train.py\", line 9, in <module>\nKeyboardInterrupt\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules phases.yaml stopped.log");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_TRUE(j["root_cause"].is_null());
  EXPECT_EQ(j["last_phase"], "training");
  ASSERT_FALSE(j["stall_hints"].empty());
  EXPECT_NE(j["stall_hints"][0].get<std::string>().find("stopped from outside at line 6"), std::string::npos)
      << j["stall_hints"];
}

TEST_F(TriageE2eTest, AStackDumpAfterAWatchdogStopSaysWhereTheProcessWasParked) {
  Write("dump.yaml", R"(rules:
  - id: t.start
    kind: phase
    phase: process-start
    pattern: 'job starting'
    samples: {match: ['job starting']}
  - id: t.timeout
    kind: stop
    hang: true
    pattern: '^Timeout \(\d+:\d\d:\d\d\)!$'
    reason: the hang watchdog fired
    samples: {match: ['Timeout (0:00:08)!']}
  - id: t.compile-frame
    kind: phase
    phase: torch-compile
    stack: true
    pattern: '^\s+File "[^"]*torch/_dynamo/[^"]*", line \d+ in \S+$'
    samples: {match: ['  File "/x/torch/_dynamo/eval_frame.py", line 1488 in optimize']}
  - id: t.compile-frame-plain
    kind: phase
    phase: weight-loading
    pattern: '^\s+File "[^"]*torch/serialization\.py", line \d+ in load$'
    samples: {match: ['  File "/x/torch/serialization.py", line 1530 in load']}
)");
  const std::string head = "job starting\nTimeout (0:00:08)!\nThread 0x00007fc164eed140 (most recent call first):\n";
  Write("compile.log", head +
                           "  File \"/x/torch/_dynamo/eval_frame.py\", line 1488 in optimize\n"
                           "  File \"/x/train.py\", line 69 in main\n");
  CommandResult r = Triage("--json --no-builtin-rules --rules dump.yaml compile.log");
  EXPECT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "torch-compile") << "a stack frame's phase counts after the stop that dumped it";
  // The same frame shape without `stack: true` is a line printed after the stop: it says nothing.
  Write("load.log", head + "  File \"/x/torch/serialization.py\", line 1530 in load\n");
  json k = json::parse(Triage("--json --no-builtin-rules --rules dump.yaml load.log").out);
  EXPECT_EQ(k["verdict"], "stalled");
  EXPECT_EQ(k["last_phase"], "process-start");
  // Only a phase reads stack frames.
  Write("bad.yaml",
        "rules:\n  - id: t.bad\n    kind: stop\n    stack: true\n    pattern: 'x'\n    reason: r\n"
        "    samples: {match: ['x']}\n");
  CommandResult bad = Triage("--json --rules bad.yaml load.log");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("only a phase reads stack frames"), std::string::npos) << bad.err;
}

TEST_F(TriageE2eTest, AStopsTracebackFramesSayWhereTheStoppedProcessWas) {
  Write("frames.yaml", R"(rules:
  - id: t.start
    kind: phase
    phase: process-start
    pattern: 'job starting'
    samples: {match: ['job starting']}
  - id: t.ctrl-c
    kind: stop
    hang: true
    pattern: '^KeyboardInterrupt$'
    reason: Ctrl-C
    samples: {match: ['KeyboardInterrupt']}
  - id: t.load-frame
    kind: phase
    phase: weight-loading
    interrupted: true
    pattern: 'File "[^"]*torch/serialization\.py", line \d+, in load\b'
    samples: {match: ['  File "/x/torch/serialization.py", line 1530, in load']}
)");
  const std::string frames =
      "job starting\nTraceback (most recent call last):\n  File \"/x/train.py\", line 3, in <module>\n"
      "  File \"/x/torch/serialization.py\", line 1530, in load\n";
  Write("stopped.log", frames + "KeyboardInterrupt\n");
  json j = json::parse(Triage("--json --no-builtin-rules --rules frames.yaml stopped.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "weight-loading") << "the Ctrl-C traceback's frame names the phase it interrupted";
  // A long traceback keeps only its head and newest frames as context: a frame between them still counts.
  std::string deep = frames;
  for (int i = 0; i < 120; ++i)
    deep += "  File \"/x/lib.py\", line " + std::to_string(i + 1) + ", in f" + std::to_string(i) + "\n";
  Write("deep.log", deep + "KeyboardInterrupt\n");
  json d = json::parse(Triage("--json --no-builtin-rules --rules frames.yaml deep.log").out);
  EXPECT_EQ(d["last_phase"], "weight-loading");
  // The same frames under a crash are where the error was raised: they say nothing of the phase.
  Write("crash.log", frames + "RuntimeError: boom\n");
  json c = json::parse(Triage("--json --no-builtin-rules --rules frames.yaml crash.log").out);
  EXPECT_EQ(c["verdict"], "failure");
  EXPECT_EQ(c["last_phase"], "process-start");
  // Only a phase marker reads a stop's traceback.
  Write("bad.yaml",
        "rules:\n  - id: t.bad\n    kind: phase\n    phase: training\n    progress: true\n    interrupted: true\n"
        "    pattern: 'step (?P<step>\\d+)'\n    samples: {match: ['step 1']}\n");
  CommandResult bad = Triage("--json --rules bad.yaml stopped.log");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("reads interrupted frames"), std::string::npos) << bad.err;
}

TEST_F(TriageE2eTest, SlurmstepdsExecveFailureIsTheRootNotSrunsExitSummary) {
  // slurmstepd could not exec the task's command (src/slurmd/slurmstepd/mgr.c: error("execve(): %s: %m")):
  // that is why the task "exited with code 2"; srun's summary after it is a consequence
  // (tests/real/slurm-srun-torchrun-mahti-module-execve-torchrun-no-such-file-exit-code-2).
  Write("slurm.out",
        "The following have been reloaded with a version change:\n"
        "  1) gcc/11.2.0 => gcc/9.4.0\n"
        "\n"
        "slurmstepd: error: execve(): torchrun: No such file or directory\n"
        "srun: error: g1301: task 0: Exited with exit code 2\n"
        "srun: launch/slurm: _step_signal: Terminating StepId=3022331.0\n");
  json j = json::parse(Triage("--json slurm.out").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 4);
  EXPECT_EQ(j["root_cause"]["rule"], "slurm.task-execve-failed");
}

TEST_F(TriageE2eTest, RayJobsExitCodeStatusMessageIsNotTheRootOfTheLogTailUnderIt) {
  // Ray's job manager: "Job entrypoint command failed with exit code 1, last available logs ..." then the
  // tail of the driver's log, whose traceback says why
  // (tests/real/openrlhf-ray-job-submit-actor-fit-no-module-named-vllm).
  Write("job.log",
        "Job 'raysubmit_zrfUMAQcYUsi133j' failed\n"
        "\n"
        "Status message: Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 "
        "chars):\n"
        "  File \"/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py\", line 861, in get_objects\n"
        "    raise value.as_instanceof_cause()\n"
        "ray.exceptions.RayTaskError(ModuleNotFoundError): ray::ActorModelRayActor.fit() (pid=59379, ip=0.0.0.0)\n"
        "  File \"/usr/local/lib/python3.10/dist-packages/openrlhf/trainer/ray/ppo_actor.py\", line 85, in __init__\n"
        "    import vllm\n"
        "ModuleNotFoundError: No module named 'vllm'\n");
  json j = json::parse(Triage("--json job.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 9);
}

TEST_F(TriageE2eTest, PythonDashMOfAMissingModuleIsTheRootNotMpirunsExitBox) {
  // runpy's "<python>: No module named run" (python -m of a module not on the path) on both ranks, then Open
  // MPI's exit boxes (tests/real/mpirun-python-m-run-no-module-named-run-two-ranks).
  Write("mpirun.log",
        "/usr/bin/python3: No module named run\n"
        "/usr/bin/python3: No module named run\n"
        "--------------------------------------------------------------------------\n"
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "--------------------------------------------------------------------------\n"
        "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        "the job to be terminated. The first process to do so was:\n"
        "\n"
        "  Process name: [[47051,1],1]\n"
        "  Exit code:    1\n");
  json j = json::parse(Triage("--json mpirun.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 1);
  EXPECT_EQ(j["root_cause"]["rule"], "python.run-module-not-found");
}

TEST_F(TriageE2eTest, TunesTrialsDidNotCompleteRulesOutRecoveryByItsTotalRunTime) {
  // Ray Tune logs a failed trial's traceback, goes on with the other trials, then prints "Trials did not
  // complete: [...]" and "Total run time: ..." (a completion marker): the trial's error was not recovered from
  // (tests/real/ray-tune-notebook-trial-cifar10-download-remote-disconnected).
  Write("tune.log",
        "2025-10-01 18:03:28,535\tERROR tune_controller.py:1331 -- Trial task failed for trial train_cifar_86dca_00014\n"
        "Traceback (most recent call last):\n"
        "  File \"/home/ray/anaconda3/lib/python3.12/http/client.py\", line 300, in _read_status\n"
        "    raise RemoteDisconnected(\"Remote end closed connection without\"\n"
        "http.client.RemoteDisconnected: Remote end closed connection without response\n"
        "2025-10-01 18:03:29,107\tERROR tune.py:1037 -- Trials did not complete: [train_cifar_86dca_00014]\n"
        "2025-10-01 18:03:29,107\tINFO tune.py:1041 -- Total run time: 1752.87 seconds (1752.17 seconds for the "
        "tuning loop).\n");
  json j = json::parse(Triage("--json tune.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 5);
}

TEST_F(TriageE2eTest, AWatchdogThatFoundACudaErrorIsTheRootNotAFollowUp) {
  // The NCCL watchdog polled its work and found the device fault (C10_CUDA_CHECK in
  // WorkNCCL::finishedGPUExecutionInternal): the first report of the error on the rank, not bookkeeping after
  // a timeout (tests/real/torchrun-docker-protenix-rank0-watchdog-illegal-memory-access-cpp-frames).
  Write("watchdog.log",
        "[rank0]:[E1212 11:37:23.484910490 ProcessGroupNCCL.cpp:1899] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process "
        "group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n");
  json j = json::parse(Triage("--json watchdog.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 1);
  EXPECT_EQ(j["root_cause"]["rule"], "cuda.illegal-memory-access");
  // Its timeout form is still the watchdog's follow-up of a hang: stalled, not a failure of its own.
  Write("timeout.log",
        "[rank1]:[E724 20:42:34.306947846 ProcessGroupNCCL.cpp:2119] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process "
        "group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=2415, OpType=ALLREDUCE, NumelIn=8192, NumelOut=8192, Timeout(ms)=1800000) ran for 1800058 "
        "milliseconds before timing out.\n");
  json t = json::parse(Triage("--json timeout.log").out);
  EXPECT_EQ(t["verdict"], "stalled");
  EXPECT_TRUE(t["root_cause"].is_null());
}

TEST_F(TriageE2eTest, NcclsCallSiteWarnBeatsCudachecksRepeatOfItsError) {
  // RCCL's transport/p2p.cc names the failed call ("hipIpcGetMemHandle failed : invalid argument"), then
  // CUDACHECK repeats the error alone ("Cuda failure 'invalid argument'"): the call site is the root
  // (tests/real/torchrun-rocm-mi100-rccl-p2p-hipipcgetmemhandle-invalid-argument-ddp-init-distbackenderror).
  Write("p2p.log",
        "UVOSLinux:19403:19416 [1] NCCL INFO P2P Chunksize set to 131072\n"
        "\n"
        "UVOSLinux:19403:19417 [1] /usr/src/debug/rccl/build/hipify/src/transport/p2p.cc:235 NCCL WARN "
        "hipIpcGetMemHandle failed : invalid argument\n"
        "\n"
        "UVOSLinux:19403:19417 [1] /usr/src/debug/rccl/build/hipify/src/transport/p2p.cc:237 NCCL WARN Cuda failure "
        "'invalid argument'\n"
        "UVOSLinux:19403:19417 [1] NCCL INFO /usr/src/debug/rccl/build/hipify/src/transport/p2p.cc:646 -> 1\n");
  json j = json::parse(Triage("--json p2p.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 3);
  // A WARN with another error string before it is not its call site: the repeat stays the root.
  Write("other.log",
        "UVOSLinux:19402:19402 [0] /usr/src/debug/rccl/build/hipify/src/init.cc:136 NCCL WARN Missing \"iommu=pt\" "
        "from kernel command line which can lead to system instablity or hang!\n"
        "UVOSLinux:19402:19402 [0] enqueue.cc:1528 NCCL WARN Cuda failure 'invalid argument'\n");
  json o = json::parse(Triage("--json other.log").out);
  EXPECT_EQ(o["root_cause"]["line"], 2);
}

TEST_F(TriageE2eTest, AGpuHangBeforeTheWatchdogStopIsTheRootNotRecoveredByTheStopsOwnLine) {
  // The ROCm runtime reports the hang once per agent and aborts; the shell's prompt then glues to a rank's
  // watchdog timeout (a stop, and a training mark by its sequence number) in the same unprefixed stream
  // (tests/real/accelerate-axolotl-mi300x-8-ranks-hw-exception-gpu-hang-step-366-then-reduce-scatter-watchdog).
  // The stop's own line is no progress after the hang, and the run's first report is the root.
  Write("hang.log",
        "{'loss': 0.4589, 'grad_norm': 1.0493940198290594, 'learning_rate': 5.284132841328413e-06, 'epoch': 1.22}\n"
        "HW Exception by GPU node-9 (Agent handle: 0x631351bb5a20) reason :GPU Hang\n"
        "HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang\n"
        "HW Exception by GPU node-9 (Agent handle: 0x565d634d8610) reason :GPU Hang\n"
        "Aborted (core dumped)\n"
        "(axolotl) 134 hotaisle@ENC1-CLS01-SVR14:~/shisa-v2/train/ablations$ [rank2]:[E1109 16:13:20.222288244 "
        "ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=500045, "
        "OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, NumelOut=8388608, Timeout(ms)=600000) ran for 600038 "
        "milliseconds before timing out.\n"
        "[rank7]:[E1109 16:13:20.230357202 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=500045, OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, NumelOut=8388608, "
        "Timeout(ms)=600000) ran for 600046 milliseconds before timing out.\n");
  json j = json::parse(Triage("--json hang.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 2);
  EXPECT_EQ(j["root_cause"]["rule"], "rocm.hw-exception");
}

TEST_F(TriageE2eTest, DeepSpeedLaunchersSigintIsAStopNotItsKillingSubprocessSummary) {
  // deepspeed/launcher/launch.py sigkill_handler logs "Main process received SIGINT, exiting" only when no rank
  // had failed: the launcher itself was interrupted; its "Killing subprocess" lines are the cleanup
  // (tests/real/deepspeed-rocm-2-ranks-zero3-ctrl-c-sigint-at-step-12-of-100).
  Write("zero_3_amd.log",
        "[2025-08-15 08:42:06,564] [INFO] [logging.py:107:log_dist] [Rank 0] step=13, skipped=2, lr=[1e-05], "
        "mom=[(0.9, 0.999)]\n"
        "[Step 12/100] Loss: 4.9149 | Tokens/s: 137.19 | GPU Mem (GB): 26.79 | Peak Mem: 43.96\n"
        "[2025-08-15 08:42:10,745] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 3668201\n"
        "[2025-08-15 08:42:11,153] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 3668202\n"
        "[2025-08-15 08:42:11,420] [INFO] [launch.py:328:sigkill_handler] Main process received SIGINT, exiting\n");
  json j = json::parse(Triage("--json zero_3_amd.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
}

TEST_F(TriageE2eTest, ASlurmTimeLimitAfterTheLaunchersSigtermIsTheRootNotAStopFromOutside) {
  // Slurm signals the job at --time; the DeepSpeed launcher's "Main process received SIGTERM" comes before
  // slurmstepd's "CANCELLED ... DUE TO TIME LIMIT", which says why
  // (tests/real/slurm-megatron-gpt2-n64-pp64-time-limit-during-training).
  Write("meg.out",
        " iteration       60/    1000 | consumed samples:          240 | elapsed time per iteration (ms): 6703.7 | "
        "learning rate: 1.494E-04 | global batch size:     4 | lm loss: 1.696940E+01 | loss scale: 16384.0 |\n"
        "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.\n"
        "Killing subprocess 43950\n"
        "Main process received SIGTERM, exiting\n"
        "slurmstepd: error: *** STEP 1809655.0 ON r6i4n3 CANCELLED AT 2021-05-24T09:50:34 DUE TO TIME LIMIT ***\n");
  json j = json::parse(Triage("--json meg.out").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 5);
  EXPECT_EQ(j["root_cause"]["rule"], "slurm.time-limit");
}

TEST_F(TriageE2eTest, ASlurmMemoryKillBeforeItsCancelIsTheRootNotAStopFromOutside) {
  // slurmstepd's accounting kill, then its cancel of the job: the cancel is how the kill ends the job
  // (tests/real/slurm-jobacct-job-exceeded-memory-limit-being-killed-cancel-line-before-exceeded).
  Write("slurm-1182107.out",
        "slurmstepd: error: Job 1182107 exceeded memory limit (7795348 > 4067328), being killed\n"
        "slurmstepd: error: *** JOB 1182107 ON c05 CANCELLED AT 2023-12-04T01:12:55 ***\n"
        "slurmstepd: error: Exceeded job memory limit\n");
  json j = json::parse(Triage("--json slurm-1182107.out").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 1);
  EXPECT_EQ(j["root_cause"]["rule"], "slurm.memory-limit-kill");
}

TEST_F(TriageE2eTest, ATracebackInsideAWarningRecordIsHandledAndTheShardsKillIsTheRoot) {
  // TGI's launcher relays the shard's loguru warning with its exception info (opt(exception=True).warning):
  // the traceback is the WARN record's message, closed by the record's " rank=0" field; the shard went on
  // and was killed later (tests/real/tgi-09-compose-cpu-starcoder-flash-import-warning-then-shard-signal-9).
  Write("tgi.log",
        "2023-07-05T19:53:46.962826Z  INFO text_generation_launcher: Starting shard 0\n"
        "2023-07-05T19:53:48.448329Z  WARN shard-manager: text_generation_launcher: Could not import Flash "
        "Attention enabled models\n"
        "Traceback (most recent call last):\n"
        "  File \"/opt/conda/bin/text-generation-server\", line 8, in <module>\n"
        "    sys.exit(app())\n"
        "> File \"/opt/conda/lib/python3.9/site-packages/text_generation_server/models/__init__.py\", line 56, in "
        "<module>\n"
        "    raise ImportError(\"CUDA is not available\")\n"
        "ImportError: CUDA is not available\n"
        " rank=0\n"
        "2023-07-05T19:53:56.977961Z  INFO text_generation_launcher: Waiting for shard 0 to be ready...\n"
        "2023-07-05T19:55:21.347050Z ERROR text_generation_launcher: Shard process was signaled to shutdown with "
        "signal 9\n"
        "2023-07-05T19:55:21.362497Z ERROR text_generation_launcher: Shard 0 failed to start\n"
        "Error: ShardCannotStart\n");
  json j = json::parse(Triage("--json tgi.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 11);
  EXPECT_EQ(j["root_cause"]["rule"], "tgi.child-signaled");
}

TEST_F(TriageE2eTest, ACrashRightUnderAnUnrelatedWarningStaysTheRoot) {
  // A WARNING line right above an uncaught exception's traceback (sglang's server_args warning, then the
  // assertion that ends the process; tests/real/sglang-pbs-mpirun-multinode-dp-without-dp-attention-assert):
  // no record field closes the traceback, so it is no part of the warning.
  Write("srv.log",
        "WARNING:sglang.srt.server_args:Pipeline parallelism is incompatible with overlap schedule.\n"
        "Traceback (most recent call last):\n"
        "  File \"/opt/sglang/python/sglang/launch_server.py\", line 11, in <module>\n"
        "    server_args = prepare_server_args(sys.argv[1:])\n"
        "AssertionError: multi-node data parallel is not supported unless dp attention!\n");
  json j = json::parse(Triage("--json srv.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 5);
}

TEST_F(TriageE2eTest, UnknownErrorIsStillFoundByStructure) {
  Write("novel.log",
        "INFO all good\n"
        "Traceback (most recent call last):\n"
        "  File \"a.py\", line 1, in <module>\n"
        "FrobnicatorMeltdownError: the widget spun backwards\n");
  CommandResult r = Triage("--json --no-builtin-rules novel.log");
  ASSERT_EQ(r.exit_code, 1);
  json j = json::parse(r.out);
  EXPECT_EQ(j["root_cause"]["message"], "FrobnicatorMeltdownError: the widget spun backwards");
  EXPECT_TRUE(j["root_cause"]["rule"].is_null());
}

TEST_F(TriageE2eTest, BadRuleFileIsReportedWithFileAndLine) {
  Write("bad.yaml", "rules:\n  - id: x\n    pattern: '(oops'\n    kind: benign\n    samples: {match: [x]}\n");
  Write("a.log", "INFO hello\n");
  CommandResult r = Triage("--rules bad.yaml a.log");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.yaml:2"), std::string::npos) << r.err;
  CommandResult check = RunShell(kBin + " rules check", dir_.string());
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

// `run --dashboard` serves the run while it runs (the page itself is tested
// in a browser by tests/web).
TEST_F(TriageE2eTest, RunWithDashboardServesTheRunWhileItRuns) {
  const std::string script = R"SH(
set -u
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cd "$SRC" && SEED_MODE=stall "$BIN" run --no-gpu --stall-after 6s --status-every 1s --runs-dir "$DIR/runs" \
  --dashboard 127.0.0.1:$port -f examples/seed-pipeline/pipeline.yaml > "$DIR/run.out" 2> "$DIR/run.err" &
run=$!
python3 - "$port" <<'PY'
import json, sys, time, urllib.request
for _ in range(100):
    try:
        r = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/run" % sys.argv[1], timeout=2))
        if r.get("services"):
            print("name=%s services=%d" % (r["name"], len(r["services"])))
            break
    except Exception:
        pass
    time.sleep(0.1)
PY
wait $run
echo "run exit=$?"
)SH";
  CommandResult r = RunShell("SRC=" + ShellQuote(FAULTLINE_SOURCE_DIR) + " BIN=" + ShellQuote(kBin) + " DIR=" +
                             ShellQuote(dir_.string()) + " bash -c " + ShellQuote(script));
  EXPECT_NE(r.out.find("name=seed-pipeline services="), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("run exit=1"), std::string::npos) << r.out;
  EXPECT_NE(ReadFile((dir_ / "run.err").string()).find("faultline: dashboard of "), std::string::npos);
}

TEST_F(TriageE2eTest, SessionFourteenStackListingsWithNoHeaderOrExceptionAreNoFailure) {
  auto triage = [&](const std::string& name, const std::string& text) {
    Write(name, text);
    return json::parse(Triage("--json " + name).out);
  };
  // pystack's frames of a live process (no "Traceback" header, no exception line): where it was, not a crash.
  json pystack = triage(
      "pystack.txt",
      "File \"/opt/conda/lib/python3.8/site-packages/pytorch_lightning/loops/base.py\", line 151, in run\n"
      "    output = self.on_run_end()\n"
      "  File \"/opt/conda/lib/python3.8/site-packages/pytorch_lightning/loops/epoch/training_epoch_loop.py\", "
      "line 298, in on_run_end\n"
      "    self.trainer.call_hook(\"on_train_epoch_end\")\n"
      "  File \"/opt/conda/lib/python3.8/site-packages/pytorch_lightning/callbacks/model_checkpoint.py\", line 390, "
      "in save_checkpoint\n"
      "    self._save_none_monitor_checkpoint(trainer, monitor_candidates)\n");
  EXPECT_EQ(pystack["verdict"], "stalled");
  EXPECT_EQ(pystack["last_phase"], "training");
  // A stack printer's per-thread dump: the plain line that closes the first thread's frames is no exception.
  json printer = triage(
      "printer.txt",
      "File \"/usr/lib/python3.9/site-packages/transformers/trainer.py\", line 3410, in _pad_across_processes\n"
      "sizes = self._nested_gather(size).cpu()\n"
      "\n"
      "Printing stack\n"
      "-- Thread ID: 139870071547712 ---\n"
      "File \"/data/train.py\", line 281, in <module>\n"
      "trainer.train()\n"
      "File \"/usr/lib/python3.9/site-packages/transformers/trainer.py\", line 2020, in _inner_training_loop\n"
      "self._maybe_log_save_evaluate(tr_loss, model, trial, epoch, ignore_keys_for_eval)\n");
  EXPECT_EQ(printer["verdict"], "stalled");
  EXPECT_EQ(printer["last_phase"], "training");
  // A headerless traceback that does end in an exception is still the failure.
  json crash = triage("crash.txt",
                      "  File \"/data/train.py\", line 281, in <module>\n"
                      "    trainer.train()\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(crash["verdict"], "failure");
  // So is one a logger wrote at ERROR level, cut before its exception line (the last source line is the clue).
  json logged = triage("logged.txt",
                       "(Worker_TP2 pid=479523) ERROR 02-13 00:28:06 [multiproc_executor.py:863]   File "
                       "\"/mnt/vllm/utils/flashinfer.py\", line 102, in wrapper\n"
                       "(Worker_TP2 pid=479523) ERROR 02-13 00:28:06 [multiproc_executor.py:863]     return "
                       "impl(*args, **kwargs)\n");
  EXPECT_EQ(logged["verdict"], "failure");
  // TORCH_DISTRIBUTED_DEBUG=DETAIL's ProcessGroupWrapper logs each collective: deep in the run, training.
  json wrapper = triage(
      "wrapper.log",
      "[I ProcessGroupWrapper.cpp:562] [Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=152516, "
      "OpType=BROADCAST, TensorShape=[4], TensorDtypes=Byte, TensorDeviceTypes=TensorOptions(dtype=float "
      "(default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false "
      "(default), memory_format=(nullopt)))\n");
  EXPECT_EQ(wrapper["verdict"], "stalled");
  EXPECT_EQ(wrapper["last_phase"], "training");
}

TEST_F(TriageE2eTest, SessionFourteenOneStepLineWithItsLossIsTheRunAtThatStep) {
  // A step counter with no total and the step's loss on the line (counts_once): one line is the run at that step,
  // so a job stopped from outside after it was training.
  Write("step.log",
        "Epoch 0, Step 200, loss 0.5679625272750854, mean loss 0.5662090854346752, encoder_lr 2.88e-05\n"
        "Main process received SIGINT, exiting\n");
  json j = json::parse(Triage("--json step.log").out);
  EXPECT_EQ(j["verdict"], "stalled");
  EXPECT_EQ(j["last_phase"], "training");
}

TEST_F(TriageE2eTest, SessionFifteenTclErrorTraceNamesTheMessageAboveWhileExecuting) {
  // Tcl's errorInfo (Swift/T's turbine under mpiexec): the message is the line above "    while executing";
  // mpiexec's summary after it is its consequence.
  Write("tcl.log",
        "can't find package turbine 1.2.3\n"
        "    while executing\n"
        "\"package require turbine 1.2.3\"\n"
        "    (file \"./swift-t-b.eZd.tic\" line 70)\n"
        "--------------------------------------------------------------------------\n"
        "mpiexec detected that one or more processes exited with non-zero status, thus causing\n"
        "the job to be terminated. The first process to do so was:\n"
        "\n"
        "  Process name: [[41364,1],4]\n"
        "  Exit code:    1\n");
  json j = json::parse(Triage("--json tcl.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["message"], "can't find package turbine 1.2.3");
  EXPECT_EQ(j["root_cause"]["line"], 1);
  // A line "while executing" with nothing of its process right above it is no error.
  Write("plain.log", "step 1 done\n\n    while executing\n");
  EXPECT_NE(json::parse(Triage("--json plain.log").out)["verdict"], "failure");
}

TEST_F(TriageE2eTest, SessionFifteenLoggedInfoLineExplainsAWeakNcclWarnRoot) {
  // No fatal error: the root is NCCL's "Cuda failure 1 'invalid argument'" WARN; NCCL's earlier INFO
  // "ncclMaxSharedMem N exceeds device/fn maxSharedMem M" (a signature with explains) says why.
  Write("nccl.log",
        "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856\n"
        "GENOA-06:4766:4780 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n"
        "\n"
        "GENOA-06:4766:4766 [1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'\n"
        "GENOA-06:4766:4766 [1] NCCL INFO group.cc:242 -> 1\n");
  json j = json::parse(Triage("--json nccl.log").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 1);
  EXPECT_EQ(j["root_cause"]["rule"], "nccl.max-shared-mem-exceeds-device");
  // Before the weak root could be explained, the WARN itself was the root.
  EXPECT_EQ(j["root_cause"]["message"], "ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856");
}

TEST_F(TriageE2eTest, SessionFifteenTwoLsfJobReportsInOneFileTheLastJobDecides) {
  // Two submissions appended to one LSF output file: the first job's report (TERM_MEMLIMIT, "Exited with exit
  // code 137.") ends an earlier job; the last job's TERM_RUNLIMIT is how the file ends.
  Write("lsf.out",
        "/zhome/.lsbatch/1604335277.8253410.shell: line 14: 94460 Killed                  python main.py\n"
        "\n"
        "Subject: Job 8253410: <Discount_0.70_0> in cluster <dcc> Exited\n"
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\n"
        "Exited with exit code 137.\n"
        "\n"
        "The output (if any) is above this job summary.\n"
        "\n"
        "User defined signal 2\n"
        "\n"
        "Subject: Job 8253415: <Discount_0.70_0> in cluster <dcc> Exited\n"
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n"
        "Exited with exit code 140.\n"
        "\n"
        "The output (if any) is above this job summary.\n");
  json j = json::parse(Triage("--json lsf.out").out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_EQ(j["root_cause"]["line"], 12);
  ASSERT_FALSE(j["warnings"].empty());
  // One job's report alone is one run.
  Write("one.out",
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\n"
        "Exited with exit code 137.\n");
  json one = json::parse(Triage("--json one.out").out);
  EXPECT_EQ(one["root_cause"]["line"], 1);
  EXPECT_TRUE(one["warnings"].empty());
}

TEST_F(TriageE2eTest, SessionFifteenRayWorkersThatCannotBePlacedAndATuneRunThatEnds) {
  // Ray's autoscaler: the workers' resource request cannot be scheduled - stuck placing them (distributed-init).
  Write("pending.log",
        "(autoscaler +9m40s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0, "
        "'GPU': 1.0}. This is likely due to all cluster resources being claimed by actors. Consider creating fewer "
        "actors or adding more nodes to this Ray cluster.\n");
  json pending = json::parse(Triage("--json pending.log").out);
  EXPECT_EQ(pending["verdict"], "stalled");
  EXPECT_EQ(pending["last_phase"], "distributed-init");
  // Ray Tune's status with every trial TERMINATED is the experiment's end.
  Write("tune.log",
        "2026-07-18 15:38:24,565 INFO worker.py:2015 -- Started a local Ray instance. View the dashboard at "
        "http://127.0.0.1:8266 \n"
        "Trial status: 1 PENDING\n"
        "Trial status: 1 RUNNING\n"
        "Trial status: 1 TERMINATED\n"
        "Best config: {'C': 1.0, 'max_iter': 100}\n");
  EXPECT_EQ(json::parse(Triage("--json tune.log").out)["verdict"], "healthy");
  // One still running at the end is not.
  Write("running.log", "Trial status: 1 PENDING\nTrial status: 1 RUNNING\n");
  EXPECT_EQ(json::parse(Triage("--json running.log").out)["verdict"], "stalled");
}

// A server log cut to its tail (`docker logs --tail 100`, a paste of the end) has no ready line: the
// serving loop's own lines say the server was up. llama-server's slot lines, not its HTTP threads'
// request lines, which go on after the loop aborted (the GGML_ASSERT case stays a failure).
TEST_F(TriageE2eTest, ALlamaServerLogCutToItsTailStillReadsAsServing) {
  const std::string served = std::string(FAULTLINE_SOURCE_DIR) +
                             "/tests/real/llamacpp-server-metal-gemma-preset-head-404-served-chat-completions-healthy/"
                             "llama-server.log";
  CommandResult tail = RunShell("tail -n 100 " + ShellQuote(served) + " | " + kBin + " triage --json");
  json j = json::parse(tail.out);
  EXPECT_EQ(j["verdict"], "healthy") << tail.out;
  EXPECT_EQ(j["last_phase"], "ready") << tail.out;
  const std::string aborted =
      std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/llamacpp-server-embeddings-mean-pooling-ggml-assert/llama-server.log";
  CommandResult died = RunShell(kBin + " triage --json " + ShellQuote(aborted));
  json d = json::parse(died.out);
  EXPECT_EQ(d["verdict"], "failure") << died.out;
  EXPECT_NE(d["root_cause"]["message"].get<std::string>().find("GGML_ASSERT(seq_id < n_tokens"), std::string::npos);
}

}  // namespace
}  // namespace faultline::testing
