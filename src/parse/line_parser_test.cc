#include "parse/line_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace faultline::parse {
namespace {

TEST(LineParserTest, VllmWorkerPrefixAndHeader) {
  auto p = ParseLine(
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597] "
      "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_EQ(p.process, "Worker_TP1 pid=7506");
  EXPECT_EQ(p.role, "Worker_TP1");
  EXPECT_EQ(p.pid, 7506);
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.level, Level::kError);
  EXPECT_EQ(p.source, "multiproc_executor.py:597");
  EXPECT_EQ(p.message, "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_TRUE(p.time.valid);
  EXPECT_EQ(p.time.month, 5);
  EXPECT_EQ(p.time.second, 10);
}

TEST(LineParserTest, VllmHeaderWithoutItsTime) {
  // A vLLM record pasted with its "MM-DD HH:MM:SS " cut out (real lines, an LMCache CI write-up).
  auto p = ParseLine(
      "ERROR [multiproc_executor.py:912] AttributeError: '_OpNamespace' '_C' object has no attribute "
      "'init_cpu_memory_env'");
  EXPECT_EQ(p.level, Level::kError);
  EXPECT_EQ(p.source, "multiproc_executor.py:912");
  EXPECT_EQ(p.message, "AttributeError: '_OpNamespace' '_C' object has no attribute 'init_cpu_memory_env'");
  EXPECT_FALSE(p.time.valid);
  auto frame = ParseLine("ERROR [multiproc_executor.py:912]   File \".../vllm/v1/worker/cpu_worker.py\", line 71, in __init__");
  EXPECT_EQ(frame.message, "  File \".../vllm/v1/worker/cpu_worker.py\", line 71, in __init__");
  EXPECT_EQ(ParseLine("WARNING [cpu.py:459] Failed to import from vllm._C: ImportError(").level, Level::kWarning);
  // A bracket that is no "file.py:line" source is text.
  EXPECT_EQ(ParseLine("ERROR [the build] failed").level, Level::kUnknown);
  EXPECT_EQ(ParseLine("INFO [step 3] loss 0.1").level, Level::kUnknown);
}

TEST(LineParserTest, TracebackFrameKeepsIndentation) {
  auto p =
      ParseLine("(EngineCore_DP1 pid=6688) ERROR 05-09 15:15:10 [core.py:1136]   File \"/x/core.py\", line 5, in f");
  EXPECT_EQ(p.process, "EngineCore_DP1 pid=6688");
  EXPECT_EQ(p.message, "  File \"/x/core.py\", line 5, in f");
}

TEST(LineParserTest, TorchCompileIdBelongsToTheGlogHeader) {
  // torch._logging prints the compile being traced ("[1/0]") after the glog header; a traceback's frame
  // lines stay indented after it (tests/real/vllm-t4-flex-attention-llvm-unsupported-rounding-mode).
  const char* prefix =
      "(EngineCore_DP0 pid=116603) [rank0]:E0731 16:03:52.115000 116603 "
      "site-packages/torch/_inductor/runtime/triton_heuristics.py:539] [1/0]";
  const std::string start_line = std::string(prefix) + " Traceback (most recent call last):";
  auto start = ParseLine(start_line);  // ParsedLine views the line: keep it alive
  EXPECT_EQ(start.level, Level::kError);
  EXPECT_EQ(start.message, "Traceback (most recent call last):");
  const std::string frame_line = std::string(prefix) + "   File \"/x/compiler.py\", line 5, in compile";
  auto frame = ParseLine(frame_line);
  EXPECT_EQ(frame.message, "  File \"/x/compiler.py\", line 5, in compile");
  auto restart =
      ParseLine("[rank0]:W0731 16:03:52.115000 116603 torch/_dynamo/convert_frame.py:1] [0/2_1] recompiling");
  EXPECT_EQ(restart.message, "recompiling");
  // Text in brackets that is no compile id stays in the message.
  auto other = ParseLine("[rank0]:W0731 16:03:52.115000 116603 torch/x.py:1] [1/x] not an id");
  EXPECT_EQ(other.message, "[1/x] not an id");
}

TEST(LineParserTest, RayPrefixNestedInsideVllmPrefix) {
  auto p = ParseLine(
      "(EngineCore pid=89247) (RayWorkerWrapper pid=164889, ip=172.20.4.203) INFO 03-01 10:00:00 "
      "[worker.py:1] ready");
  EXPECT_EQ(p.process, "RayWorkerWrapper pid=164889");
  EXPECT_EQ(p.parent, "EngineCore pid=89247");
  EXPECT_EQ(p.pid, 164889);
  EXPECT_EQ(p.message, "ready");
}

TEST(LineParserTest, TorchrunRankPrefixWithC10Header) {
  auto p = ParseLine(
      "[rank1]:[W1129 08:41:10.596013815 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group "
      "has NOT been destroyed");
  EXPECT_EQ(p.process, "rank1");
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.level, Level::kWarning);
  EXPECT_EQ(p.source, "ProcessGroupNCCL.cpp:1250");
  EXPECT_EQ(p.time.micros, 596013);
  EXPECT_EQ(p.message.substr(0, 8), "Warning:");
}

TEST(LineParserTest, TorchelasticTeePrefix) {
  auto p = ParseLine("[default3]:Traceback (most recent call last):");
  EXPECT_EQ(p.process, "default3");
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.message, "Traceback (most recent call last):");
}

TEST(LineParserTest, SglangTags) {
  auto p = ParseLine("[2025-05-09 15:14:59 DP0 TP3] Load weight begin. avail mem=78.50 GB");
  EXPECT_EQ(p.process, "DP0 TP3");
  EXPECT_EQ(p.rank, 3);
  EXPECT_EQ(p.time.year, 2025);
  EXPECT_EQ(p.message, "Load weight begin. avail mem=78.50 GB");
  auto main = ParseLine("[2025-05-09 15:14:59] server_args=ServerArgs(...)");
  EXPECT_EQ(main.process, "");
  EXPECT_EQ(main.message, "server_args=ServerArgs(...)");
}

TEST(LineParserTest, NcclDebugLine) {
  auto p = ParseLine("gpu-node-1:7506:7612 [1] NCCL WARN Cuda failure 'out of memory'");
  EXPECT_EQ(p.pid, 7506);
  EXPECT_EQ(p.level, Level::kWarning);
  EXPECT_EQ(p.process, "gpu-node-1:7506");
  EXPECT_EQ(p.message, "Cuda failure 'out of memory'");
}

TEST(LineParserTest, Nccl228LineWithTimestampAndSource) {
  auto p = ParseLine(
      "[2026-11-29 08:47:09] vm:1045:1045 [0] init.cc:904 NCCL WARN Duplicate GPU detected : rank 1 and "
      "rank 0 both on CUDA device 60");
  EXPECT_EQ(p.pid, 1045);
  EXPECT_EQ(p.format, "nccl");
  EXPECT_EQ(p.source, "init.cc:904");
  EXPECT_EQ(p.level, Level::kWarning);
  EXPECT_EQ(p.time.year, 2026);
  EXPECT_EQ(p.message.substr(0, 22), "Duplicate GPU detected");
}

TEST(LineParserTest, ProcessPrefixesAloneAttributeLikeTheFullParse) {
  for (const char* line : {"(Worker_TP1 pid=7506) INFO 05-09 15:14:59 [a.py:1] x",
                           "[2026-11-29 08:47:09] vm:1045:1045 [0] init.cc:904 NCCL INFO Bootstrap",
                           "vm:1045:1045 [0] NCCL INFO cudaDriverVersion 13000", "[rank3]: boom",
                           "[2025-05-09 15:14:59 DP0 TP3] Load weight begin", "INFO 05-09 15:14:59 [a.py:1] y"}) {
    EXPECT_EQ(ParseProcessPrefixes(line).process, ParseLine(line).process) << line;
  }
}

TEST(LineParserTest, TorchExceptionHookPrefixSpaceIsNotIndentation) {
  EXPECT_EQ(ParseLine("[rank2]: ValueError: bad").message, "ValueError: bad");
  EXPECT_EQ(ParseLine("[rank2]:   File \"x.py\", line 1").message, "  File \"x.py\", line 1");
}

TEST(LineParserTest, GlogAndPythonLogging) {
  auto g = ParseLine("E1129 08:00:00.123456 12345 socket.cpp:12] connect failed");
  EXPECT_EQ(g.level, Level::kError);
  EXPECT_EQ(g.pid, 12345);
  EXPECT_EQ(g.message, "connect failed");
  auto py = ParseLine("2025-05-09 15:14:59,123 - trainer - ERROR - step failed");
  EXPECT_EQ(py.level, Level::kError);
  EXPECT_EQ(py.message, "step failed");
  auto basic = ParseLine("WARNING:torch.distributed.run:Setting OMP_NUM_THREADS");
  EXPECT_EQ(basic.level, Level::kWarning);
  EXPECT_EQ(basic.message, "Setting OMP_NUM_THREADS");
}

TEST(LineParserTest, PythonLoggingNameAndLevelWithoutTime) {
  // "%(name)s - %(levelname)s - %(message)s", or a paste that cut the asctime off the line's front.
  auto p = ParseLine("lmdeploy - ERROR - base.py:55 - AttributeError: 'Qwen3VLConfig' object has no attribute 'hidden_size'");
  EXPECT_EQ(p.level, Level::kError);
  EXPECT_EQ(p.format, "python");
  EXPECT_EQ(p.message, "base.py:55 - AttributeError: 'Qwen3VLConfig' object has no attribute 'hidden_size'");
  auto info = ParseLine("vllm.engine.metrics - INFO - Avg prompt throughput: 1.0 tokens/s");
  EXPECT_EQ(info.level, Level::kInfo);
  EXPECT_EQ(info.message, "Avg prompt throughput: 1.0 tokens/s");
  // Not a level between two " - " separators: plain text stays plain.
  EXPECT_EQ(ParseLine("step - ERRORS - none").level, Level::kUnknown);
  EXPECT_EQ(ParseLine("loss - 0.25 - ERROR").level, Level::kUnknown);
  EXPECT_EQ(ParseLine("error - ERROR").level, Level::kUnknown);
}

TEST(LineParserTest, PrintRedirectedIntoStdoutStderrLoggersKeepsThePrintedLine) {
  // FastChat / LLaVA worker loggers: sys.stderr redirected to a logger named "stderr" at level ERROR.
  auto up = ParseLine("2024-02-07 09:34:59 | ERROR | stderr | INFO:     Uvicorn running on http://0.0.0.0:21002 (Press CTRL+C to quit)");
  EXPECT_EQ(up.level, Level::kUnknown);  // the stream's level, not the line's
  EXPECT_EQ(up.message, "INFO:     Uvicorn running on http://0.0.0.0:21002 (Press CTRL+C to quit)");
  EXPECT_TRUE(up.time.valid);
  auto frame = ParseLine("2023-11-08 11:36:06 | ERROR | stderr |   File \"D:\\x\\model_worker.py\", line 77, in __init__");
  EXPECT_EQ(frame.message, "  File \"D:\\x\\model_worker.py\", line 77, in __init__");
  auto bare = ParseLine("2023-11-28 17:16:20 | ERROR | stderr |");
  EXPECT_EQ(bare.message, "");
  // The printed line's own header is read after the redirect.
  auto inner = ParseLine("2024-04-13 10:17:32 | INFO | stdout | INFO 04-13 10:17:31 pynccl.py:58] Loading nccl from library libnccl.so.2");
  EXPECT_EQ(inner.format, "vllm");
  EXPECT_EQ(inner.level, Level::kInfo);
  EXPECT_EQ(inner.message, "Loading nccl from library libnccl.so.2");
  // A server's own logger keeps its level.
  auto own = ParseLine("2023-11-28 17:17:45 | INFO | model_worker | Send heart beat.");
  EXPECT_EQ(own.level, Level::kInfo);
  EXPECT_EQ(own.message, "model_worker | Send heart beat.");
  auto err = ParseLine("2025-05-09 15:14:59,123 - trainer - ERROR - stderr was closed");
  EXPECT_EQ(err.level, Level::kError);  // "stderr" as the message's first word, no separator: not a redirect
}

TEST(LineParserTest, BracketedLoggerNameAndLevel) {
  auto trt = ParseLine("[TRT-LLM] [E] Failed to initialize executor on rank 0:");
  EXPECT_EQ(trt.level, Level::kError);
  EXPECT_EQ(trt.message, "Failed to initialize executor on rank 0:");
  auto cxx = ParseLine("[TensorRT-LLM][ERROR] Assertion failed: d == a + length");
  EXPECT_EQ(cxx.level, Level::kError);
  EXPECT_EQ(cxx.message, "Assertion failed: d == a + length");
  EXPECT_EQ(ParseLine("[TRT-LLM] [I] Compute capability: (12, 1)").level, Level::kInfo);
  // A bracketed word that is no level, or one bracket only, is text.
  EXPECT_EQ(ParseLine("[Gloo] Rank 0 is connected to 0 peer ranks.").level, Level::kUnknown);
  EXPECT_EQ(ParseLine("[aiter] [LoadKernel] hsaco").level, Level::kUnknown);
}

TEST(LineParserTest, TorchLoggingNameAndBracketedLevel) {
  // torch._logging (torch 2.0-2.2) on every line of a record: "[time] logger.name: [LEVEL] msg".
  auto p = ParseLine(
      "[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] Traceback (most recent call last):");
  EXPECT_EQ(p.level, Level::kWarning);
  EXPECT_EQ(p.format, "python");
  EXPECT_TRUE(p.time.valid);
  EXPECT_EQ(p.message, "Traceback (most recent call last):");
  auto e = ParseLine("[2024-01-05 10:00:00,001] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1)");
  EXPECT_EQ(e.level, Level::kError);
  EXPECT_EQ(e.message, "failed (exitcode: 1)");
  // A message that only has a word and a colon after the time stays the message.
  auto plain = ParseLine("[2023-11-29 11:04:57,788] note: [see below] something");
  EXPECT_EQ(plain.level, Level::kUnknown);
  EXPECT_EQ(plain.message, "note: [see below] something");
}

TEST(LineParserTest, DeepSpeedLauncher) {
  auto p = ParseLine("[2025-05-09 15:14:59,123] [INFO] [launch.py:256:main] process 123 spawned");
  EXPECT_EQ(p.level, Level::kInfo);
  EXPECT_EQ(p.source, "launch.py:256:main");
  EXPECT_EQ(p.message, "process 123 spawned");
}

TEST(LineParserTest, PlainExceptionLineIsUntouched) {
  auto p = ParseLine("ValueError: boom");
  EXPECT_EQ(p.process, "");
  EXPECT_EQ(p.level, Level::kUnknown);
  EXPECT_EQ(p.message, "ValueError: boom");
}

TEST(LineParserTest, GlogHeaderCarriesTheAgentsPid) {
  // torchrun's elastic agent (tests/real torchrun-gpu-relaunch-*): the pid after the clock is the agent's,
  // what tells one agent's relaunches apart from another node's agent (diagnosis/runs.cc).
  auto p = ParseLine(
      "E1202 02:56:20.446000 496 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
      "local_rank: 1 (pid: 549) of binary: /bin/python");
  EXPECT_EQ(p.format, "glog");
  EXPECT_EQ(p.pid, 496);
  EXPECT_EQ(p.level, Level::kError);
  EXPECT_EQ(p.source, "torch/distributed/elastic/multiprocessing/api.py:986");
  // A rank prefix outside it keeps the header's pid; a line without one has none.
  EXPECT_EQ(ParseLine("[rank1]: W1202 02:57:33.506000 12 torch/x.py:7] y").pid, 12);
  EXPECT_EQ(ParseLine("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)").pid, -1);
}

TEST(LineParserTest, TslHeaderOfXlaAndJax) {
  // TensorFlow/XLA's C++ logging, as JAX prints it (tests/real/jax-grain-k8s-task-restarted-different-incarnation).
  const std::string line =
      "2025-04-05 18:39:10.837611: E external/xla/xla/tsl/distributed_runtime/coordination/"
      "coordination_service.cc:962] /job:jax_worker/replica:0/task:1 unexpectedly tried to connect";
  auto p = ParseLine(line);
  EXPECT_EQ(p.level, Level::kError);
  EXPECT_EQ(p.format, "glog");
  EXPECT_EQ(p.message, "/job:jax_worker/replica:0/task:1 unexpectedly tried to connect");
  // Python logging with the same date shape is still Python logging.
  auto py = ParseLine("2025-04-05 18:39:10,837 - root - ERROR - boom");
  EXPECT_EQ(py.level, Level::kError);
  EXPECT_EQ(py.message, "boom");
}

}  // namespace
}  // namespace faultline::parse
