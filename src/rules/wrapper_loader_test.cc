#include "rules/wrapper_loader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace faultline::rules {
namespace {

std::unique_ptr<parse::WrapperSet> Builtin() {
  auto set = LoadWrappers({});
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? std::move(*set) : nullptr;
}

parse::WrapperStack DetectOn(const parse::WrapperSet& set, const std::vector<std::string>& lines) {
  std::vector<std::string_view> views(lines.begin(), lines.end());
  return set.Detect(views);
}

// Lines of the seed incident's log (tests/golden/vllm-seed-dp-rank).
const std::vector<std::string> kSeed = {
    "INFO 05-09 15:14:59 [api_server.py:1043] vLLM API server version 0.9.1",
    "(Worker pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:800] "
    "Traceback (most recent call last):",
    "(Worker pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:800]   File "
    "\"x.py\", line 1, in f",
    "(Worker pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:800] "
    "AssertionError: DP adjusted local rank 3 "
    "is out of bounds.",
};

TEST(WrapperLoaderTest, BuiltinWrappersLoadAndPassTheirSamples) {
  auto set = Builtin();
  ASSERT_TRUE(set);
  EXPECT_GE(set->specs().size(), 8u);
  EXPECT_TRUE(parse::CheckWrapperSamples(*set).empty());
}

TEST(WrapperLoaderTest, UnwrappedLogsWearNoWrapper) {
  auto set = Builtin();
  EXPECT_TRUE(DetectOn(*set, kSeed).empty());
  EXPECT_TRUE(DetectOn(*set, {"[rank0]: Traceback (most recent call last):", "[rank0]:   File \"t.py\", line 3",
                              "[rank0]: RuntimeError: boom"})
                  .empty());
  EXPECT_TRUE(DetectOn(*set, {"2025-05-09 15:14:59,123 - root - INFO - step 10",
                              "[2025-05-09 15:14:59,123] [INFO] "
                              "[launch.py:256:main] process 1234 spawned"})
                  .empty());
}

TEST(WrapperLoaderTest, DockerComposePrefixIsPeeledAndNamesTheService) {
  auto set = Builtin();
  std::vector<std::string> lines;
  for (const auto& l : kSeed) lines.push_back("qwen-server  | " + l);
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "docker-compose");
  std::string scratch;
  parse::PeeledLine p = stack.Peel(lines[3], &scratch);
  EXPECT_EQ(p.inner, kSeed[3]);
  EXPECT_EQ(p.identity, "qwen-server");
}

TEST(WrapperLoaderTest, StackedWrappersPeelLayerByLayer) {
  auto set = Builtin();
  std::vector<std::string> lines;
  for (const auto& l : kSeed) lines.push_back("2025-05-09T15:15:10.123456789Z  3: " + l);
  lines[0] = "2025-05-09T15:15:10.123456789Z 12: " + kSeed[0];
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "rfc3339-timestamp+srun-label");
  std::string scratch;
  parse::PeeledLine p = stack.Peel(lines[3], &scratch);
  EXPECT_EQ(p.inner, kSeed[3]);
  EXPECT_EQ(p.identity, "task 3");
  EXPECT_EQ(p.rank, 3);
}

TEST(WrapperLoaderTest, JsonRecordsAreDecoded) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      R"({"log":"Traceback (most recent call last):\n","stream":"stderr","time":"2025-05-09T15:15:10Z"})",
      R"({"log":"  File \"t.py\", line 3, in \u003cmodule\u003e\n","stream":"stderr","time":"2025-05-09T15:15:10Z"})",
      R"({"log":"RuntimeError: boom\n","stream":"stderr","time":"2025-05-09T15:15:10Z"})"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "docker-json-file");
  std::string scratch;
  EXPECT_EQ(stack.Peel(lines[1], &scratch).inner, "  File \"t.py\", line 3, in <module>");
  EXPECT_EQ(stack.Peel("not json", &scratch).inner,
            "not json");  // a stray line is left as it is
}

// Rust tracing-subscriber JSON events (TGI --json-output; these lines are from a real TGI 1.2 log under
// `oc logs`): the line is rebuilt in tracing's text layout, nested "fields.message" or flattened
// "message", with the span name, the file:line the router names and no part left dangling when absent.
TEST(WrapperLoaderTest, RustTracingJsonEventsReadAsTracingsTextLayout) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      R"({"timestamp":"2024-02-21T05:09:46.815155Z","level":"INFO","fields":{"message":"Starting download process."},"target":"text_generation_launcher","span":{"name":"download"},"spans":[{"name":"download"}]})",
      R"({"timestamp":"2024-02-21T05:09:51.984862Z","level":"INFO","fields":{"message":"Download: [1/1] -- ETA: 0\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:56.424576Z","level":"WARN","fields":{"message":"Could not import Mistral model: GPU with CUDA capability 7 0 is not supported\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:10:01.304586Z","level":"INFO","message":"Connected","target":"text_generation_router","filename":"router/src/main.rs","line_number":247})"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe().rfind("rust-tracing-json", 0), 0u) << stack.Describe();
  std::string scratch;
  EXPECT_EQ(std::string(stack.Peel(lines[3], &scratch).inner),
            "INFO text_generation_router: router/src/main.rs:247: Connected");
  EXPECT_EQ(std::string(stack.Peel(lines[0], &scratch).inner),
            "INFO download: text_generation_launcher: Starting download process.");
  EXPECT_EQ(std::string(stack.Peel(lines[2], &scratch).inner),
            "WARN text_generation_launcher: Could not import Mistral model: GPU with CUDA capability 7 0 is not "
            "supported");
  // Not every JSON object is a tracing event.
  EXPECT_TRUE(DetectOn(*set, {R"({"loss": 2.31, "step": 10})", R"({"loss": 2.29, "step": 11})"}).empty());
}

// The same log as a terminal copied it (tests/real/tgi-openshift-json-output-flan-t5-connected-hard-wrapped): records
// longer than 204 columns are hard-wrapped, so only 11 of its 39 lines are whole records. A record is
// unmistakable, so the wrapper is still detected; the fragments are left as they are.
TEST(WrapperLoaderTest, RustTracingJsonIsDetectedWhenATerminalHardWrappedTheLongRecords) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      R"({"timestamp":"2024-02-21T05:09:46.814956Z","level":"INFO","fields":{"message":"Args { model_id: \"google/flan-t5-small\", revision: None, validation_workers: 2, sharded: None, num_shard: None, quantize: S)",
      R"(ome(Bitsandbytes), dtype: None, trust_remote_code: false, max_concurrent_requests: 128, max_best_of: 2, max_stop_sequences: 4, max_top_n_tokens: 5, max_input_length: 1024, max_total_tokens: 2048, waiting_)",
      R"(served_ratio: 1.2, max_batch_prefill_tokens: 4096, max_batch_total_tokens: None, max_waiting_tokens: 20, hostname: \"hf-text-generation-inference-server-5df6759cd6-48zxb\", port: 3000, shard_uds_path: \"/)",
      R"(tmp/text-generation-server\", master_addr: \"localhost\", master_port: 29500, huggingface_hub_cache: Some(\"/models-cache\"), weights_cache_override: None, disable_custom_kernels: false, cuda_memory_fract)",
      R"(ion: 1.0, rope_scaling: None, rope_factor: None, json_output: true, otlp_endpoint: None, cors_allow_origin: [], watermark_gamma: None, watermark_delta: None, ngrok: false, ngrok_authtoken: None, ngrok_edg)",
      R"(e: None, env: false }"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:46.815155Z","level":"INFO","fields":{"message":"Starting download process."},"target":"text_generation_launcher","span":{"name":"download"},"spans":[{"name":"download"}]})",
      R"({"timestamp":"2024-02-21T05:09:51.008236Z","level":"INFO","fields":{"message":"Download file: model.safetensors\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:51.984734Z","level":"INFO","fields":{"message":"Downloaded /models-cache/models--google--flan-t5-small/snapshots/0fc9ddf78a1e988dac52e2dac162b0ede4fd74ab/model.safetensors i)",
      R"(n 0:00:00.\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:51.984862Z","level":"INFO","fields":{"message":"Download: [1/1] -- ETA: 0\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:52.420748Z","level":"INFO","fields":{"message":"Successfully downloaded weights."},"target":"text_generation_launcher","span":{"name":"download"},"spans":[{"name":"download")",
      R"(}]})",
      R"({"timestamp":"2024-02-21T05:09:52.421039Z","level":"INFO","fields":{"message":"Starting shard"},"target":"text_generation_launcher","span":{"rank":0,"name":"shard-manager"},"spans":[{"rank":0,"name":"shar)",
      R"(d-manager"}]})",
      R"({"timestamp":"2024-02-21T05:09:56.421772Z","level":"WARN","fields":{"message":"Could not import Flash Attention enabled models: GPU with CUDA capability 7 0 is not supported\n"},"target":"text_generation_)",
      R"(launcher"})",
      R"({"timestamp":"2024-02-21T05:09:56.424576Z","level":"WARN","fields":{"message":"Could not import Mistral model: GPU with CUDA capability 7 0 is not supported\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:57.685776Z","level":"WARN","fields":{"message":"Bitsandbytes 8bit is deprecated, using `eetq` is a drop-in replacement, and has much better performnce\n"},"target":"text_gen)",
      R"(eration_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:57.948206Z","level":"INFO","fields":{"message":"Server started at unix:///tmp/text-generation-server-0\n"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:58.029562Z","level":"INFO","fields":{"message":"Shard ready in 5.607799614s"},"target":"text_generation_launcher","span":{"rank":0,"name":"shard-manager"},"spans":[{"rank":0)",
      R"(,"name":"shard-manager"}]})",
      R"({"timestamp":"2024-02-21T05:09:58.126308Z","level":"INFO","fields":{"message":"Starting Webserver"},"target":"text_generation_launcher"})",
      R"({"timestamp":"2024-02-21T05:09:58.167950Z","level":"WARN","message":"Could not find a fast tokenizer implementation for google/flan-t5-small","target":"text_generation_router","filename":"router/src/main.)",
      R"(rs","line_number":166})",
      R"({"timestamp":"2024-02-21T05:09:58.167999Z","level":"WARN","message":"Rust input length validation and truncation is disabled","target":"text_generation_router","filename":"router/src/main.rs","line_number)",
      R"(":169})",
      R"({"timestamp":"2024-02-21T05:09:58.168006Z","level":"WARN","message":"`--revision` is not set","target":"text_generation_router","filename":"router/src/main.rs","line_number":349})",
      R"({"timestamp":"2024-02-21T05:09:58.168012Z","level":"WARN","message":"We strongly advise to set it to a known supported commit.","target":"text_generation_router","filename":"router/src/main.rs","line_numb)",
      R"(er":350})",
      R"({"timestamp":"2024-02-21T05:09:58.306446Z","level":"INFO","message":"Serving revision 0fc9ddf78a1e988dac52e2dac162b0ede4fd74ab of model google/flan-t5-small","target":"text_generation_router","filename":")",
      R"(router/src/main.rs","line_number":371})",
      R"({"timestamp":"2024-02-21T05:09:58.311499Z","level":"INFO","message":"Warming up model","target":"text_generation_router","filename":"router/src/main.rs","line_number":213})",
      R"({"timestamp":"2024-02-21T05:10:01.304539Z","level":"WARN","message":"Model does not support automatic max batch total tokens","target":"text_generation_router","filename":"router/src/main.rs","line_number)",
      R"(":224})",
      R"({"timestamp":"2024-02-21T05:10:01.304575Z","level":"INFO","message":"Setting max batch total tokens to 16000","target":"text_generation_router","filename":"router/src/main.rs","line_number":246})",
      R"({"timestamp":"2024-02-21T05:10:01.304586Z","level":"INFO","message":"Connected","target":"text_generation_router","filename":"router/src/main.rs","line_number":247})",
      R"({"timestamp":"2024-02-21T05:10:01.304595Z","level":"WARN","message":"Invalid hostname, defaulting to 0.0.0.0","target":"text_generation_router","filename":"router/src/main.rs","line_number":252})"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe().rfind("rust-tracing-json", 0), 0u) << stack.Describe();
  std::string scratch;
  EXPECT_EQ(std::string(stack.Peel(lines[6], &scratch).inner),
            "2024-02-21T05:09:46.815155Z INFO download: text_generation_launcher: Starting download process.");
  EXPECT_EQ(std::string(stack.Peel(lines[1], &scratch).inner), lines[1]);  // a fragment
}

// A progress bar the job redrew with '\r' inside one record: the decoded text keeps its last state, and
// the bar's first state comes with it (the scanner reads it first, so that the counter rises).
TEST(WrapperLoaderTest, ARedrawnBarInsideAJsonRecordKeepsItsFirstState) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      R"({"log":"starting\n","stream":"stderr","time":"2025-05-09T15:15:10Z"})",
      R"({"log":"\rtrain:   0%| 0/1000 [00:00<?, ?it/s]\rtrain:  32%| 315/1000 [00:20<00:01]\n","stream":"stderr"})",
      R"({"log":"done\n","stream":"stderr","time":"2025-05-09T15:15:10Z"})"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "docker-json-file");
  std::string scratch;
  parse::PeeledLine p = stack.Peel(lines[1], &scratch);
  EXPECT_EQ(p.inner, "train:  32%| 315/1000 [00:20<00:01]");
  EXPECT_EQ(p.earlier, "train:   0%| 0/1000 [00:00<?, ?it/s]");
  EXPECT_EQ(stack.Peel(lines[0], &scratch).earlier, "");
}

// TGI colours its own time stamps; docker's json-file driver escapes the colour codes (\u001b): once a
// record is decoded its colours are removed, so the time stamp under it is seen as the next layer.
TEST(WrapperLoaderTest, ColoursInsideAJsonRecordAreRemovedBeforeTheNextLayer) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      R"({"log":"\u001b[2m2023-11-04T11:37:47.145284Z\u001b[0m \u001b[32m INFO\u001b[0m \u001b[1mdownload\u001b[0m: )"
      R"(\u001b[2mtext_generation_launcher\u001b[0m\u001b[2m:\u001b[0m Starting download process.\n","stream":"stderr"})",
      R"({"log":"\u001b[2m2023-11-04T11:37:49.734129Z\u001b[0m \u001b[32m INFO\u001b[0m \u001b[2mtext_generation_)"
      R"(launcher\u001b[0m\u001b[2m:\u001b[0m Download file: model-00001-of-00007.safetensors\n","stream":"stderr"})"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "docker-json-file+rfc3339-timestamp");
  std::string scratch;
  EXPECT_EQ(stack.Peel(lines[1], &scratch).inner,
            " INFO text_generation_launcher: Download file: model-00001-of-00007.safetensors");
}

TEST(WrapperLoaderTest, JournaldIdentityOmitsMissingParts) {
  auto set = Builtin();
  std::vector<std::string> lines = {
      "May 09 15:15:10 gpu-node-1 python3[7506]: Traceback (most recent call "
      "last):",
      "May 09 15:15:10 gpu-node-1 kernel: NVRM: Xid 79"};
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "journald-short");
  std::string scratch;
  EXPECT_EQ(stack.Peel(lines[0], &scratch).identity, "gpu-node-1/python3[7506]");
  EXPECT_EQ(stack.Peel(lines[1], &scratch).identity, "gpu-node-1/kernel");
}

// journalctl -o short-iso writes its zone as an offset: a time stamp in "Z" (kubectl --timestamps, docker
// logs -t) before "Word Word: " is a bare time stamp, not "TIME HOST IDENT: ". A one-line log gives the
// detector nothing else to tell them apart by (it lost "Training Progress:" to journald's host and ident).
TEST(WrapperLoaderTest, AZuluTimeIsNotJournaldShortIso) {
  auto set = Builtin();
  const std::vector<std::string> one = {
      "2025-05-09T15:15:10.123456789Z Training Progress:   0%|          | 0/125 [04:45<?, ?it/s]"};
  parse::WrapperStack stack = DetectOn(*set, one);
  ASSERT_EQ(stack.Describe(), "rfc3339-timestamp");
  std::string scratch;
  EXPECT_EQ(stack.Peel(one[0], &scratch).inner, "Training Progress:   0%|          | 0/125 [04:45<?, ?it/s]");
  const std::vector<std::string> journal = {"2025-05-09T15:15:10+0000 gpu-node-1 python3[7506]: Traceback (most recent call last):"};
  EXPECT_EQ(DetectOn(*set, journal).Describe(), "journald-short-iso");
}

// Open MPI's tag is on few of a file's first lines when mpirun --display-map's job map (or a batch
// system's banner) comes first; no other text wears "[1,0]<stderr>:", so a few lines are enough.
TEST(WrapperLoaderTest, MpirunTagsUnderALongJobMapAreStillDetected) {
  auto set = Builtin();
  std::vector<std::string> lines;
  for (int i = 0; i < 20; ++i) lines.push_back(fmt::format(" \tProcess OMPI jobid: [31268,1] App: 0 Process rank: {} Bound: N/A", i));
  lines.push_back("[1,0]<stderr>:ModuleNotFoundError: No module named 'sglang'");
  lines.push_back("[1,1]<stderr>:ModuleNotFoundError: No module named 'sglang'");
  lines.push_back("[1,1]<stderr>:real\t0m0.117s");
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "mpirun-tag-output");
  std::string scratch;
  parse::PeeledLine p = stack.Peel(lines[21], &scratch);
  EXPECT_EQ(p.inner, "ModuleNotFoundError: No module named 'sglang'");
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(stack.Peel(lines[0], &scratch).inner, lines[0]);
}

// stern's "POD CONTAINER " is two lower-case words, a shape prose can take: it must be on nearly every
// line (its min_share), not on half of them as a bracketed or piped prefix need be.
TEST(WrapperLoaderTest, SternIsDetectedOnlyWhenNearlyEveryLineWearsIt) {
  auto set = Builtin();
  std::vector<std::string> lines;
  for (const auto& l : kSeed) lines.push_back("vllm-7c9f8d6b5-x2k4p vllm " + l);
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "stern");
  std::string scratch;
  parse::PeeledLine p = stack.Peel(lines[3], &scratch);
  EXPECT_EQ(p.inner, kSeed[3]);
  EXPECT_EQ(p.identity, "vllm-7c9f8d6b5-x2k4p/vllm");
  // Prose whose lines open with a hyphenated, numbered word: half of them is not enough.
  EXPECT_TRUE(DetectOn(*set, {"llama-2-7b loaded in 3.2 s", "qwen-7b tokenizer ready", "starting the benchmark now",
                              "all requests done"})
                  .empty());
}

// A paste copied with its viewer's gutter: the line number, two or more blanks (widths vary as the numbers
// grow), and "..." lines where the user cut parts out (tests/real/slurm-srun-2-node-barrier-...-line-numbered-
// paste). A table whose rows open with a number and blanks on fewer lines than that is no gutter.
TEST(WrapperLoaderTest, ASpacedLineNumberGutterIsPeeledAroundElisions) {
  auto set = Builtin();
  std::vector<std::string> lines = {"...", "44  From Rank: 0, ==> Initializing Process Group..."};
  for (int i = 0; i < 8; ++i) lines.push_back(fmt::format(" {}  [rank1]:   File \"t.py\", line {}, in main", 111 + i, i));
  lines.push_back("...");
  lines.push_back(" 122  [rank1]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:77");
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "line-numbers-spaced");
  std::string scratch;
  EXPECT_EQ(stack.Peel(lines[1], &scratch).inner, "From Rank: 0, ==> Initializing Process Group...");
  EXPECT_EQ(stack.Peel(lines.back(), &scratch).inner,
            "[rank1]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:77");
  EXPECT_EQ(stack.Peel(lines[0], &scratch).inner, "...");
  // Half the lines a numbered table's rows (a DataFrame printed by the job): not a gutter.
  EXPECT_TRUE(DetectOn(*set, {"0  gsm8k  7473", "1  math  7500", "loading the datasets", "starting training"})
                  .empty());
}

TEST(WrapperLoaderTest, MinShareMustBeAShareOfLines) {
  for (const char* bad : {"0", "1.5", "half"}) {
    auto specs = ParseWrapperFile(fmt::format("wrappers:\n  - id: x\n    pattern: 'a'\n    min_share: {}\n    "
                                              "samples: {{match: [a]}}\n",
                                              bad),
                                  "w.yaml");
    EXPECT_FALSE(specs.ok()) << bad;
  }
  auto ok = ParseWrapperFile("wrappers:\n  - id: x\n    pattern: 'a'\n    min_share: 0.9\n    samples: {match: [a]}\n",
                             "w.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_DOUBLE_EQ((*ok)[0].min_share, 0.9);
}

TEST(WrapperLoaderTest, BadWrapperFilesAreRefusedWithFileAndLine) {
  auto specs = ParseWrapperFile("wrappers:\n  - id: x\n    pattern: 'a'\n    colour: red\n", "w.yaml");
  ASSERT_FALSE(specs.ok());
  EXPECT_NE(specs.status().message().find("w.yaml:4"), std::string::npos) << specs.status().message();
  auto both = ParseWrapperFile(
      "wrappers:\n  - id: x\n    pattern: 'a'\n    "
      "json_field: log\n    samples: {match: [a]}\n",
      "w.yaml");
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(parse::WrapperSet::Build(std::move(*both)).ok());
}

}  // namespace
// A host prefix repeats: pdsh's "HOST: " names the few nodes the lines come from. tqdm bars whose description is
// the tensor being loaded (lmdeploy's TurboMind export: "mlp1.0.bias:   8%|...", each line another tensor) match
// the same shape, but every line names another "host": no wrapper, the lines are the job's own.
TEST(WrapperLoaderTest, APrefixThatNamesAnotherSourceOnEveryLineIsNoWrapper) {
  auto set = Builtin();
  const std::vector<std::string> bars = {
      "mlp1.0.bias:   0%|          | 0/12 [00:00<?, ?w/s, dev=1]",
      "mlp1.0.weight:   8%|#         | 1/12 [00:00<00:00, 1929.30w/s, dev=1]",
      "mlp1.1.bias:  17%|#         | 2/12 [00:00<00:00, 2973.63w/s, dev=1]  ",
      "mlp1.1.weight:  25%|##        | 3/12 [00:00<00:00, 3777.52w/s, dev=1]",
      "mlp1.3.bias:  33%|###       | 4/12 [00:00<00:00, 152.38w/s, dev=1]   ",
      "mlp1.3.weight:  42%|####      | 5/12 [00:00<00:00, 187.57w/s, dev=1]",
      "language_model.model.layers.47.attention_norm.weight:  50%|#####     | 6/12 [00:00<00:00, 142.96w/s, dev=cpu]",
      "language_model.model.layers.47.ffn_norm.weight:  75%|#######   | 9/12 [00:00<00:00, 212.27w/s, dev=cpu]",
  };
  EXPECT_EQ(DetectOn(*set, bars).Describe(), "");
  // The same number of lines from two hosts stays a host prefix.
  std::vector<std::string> pdsh;
  for (int i = 0; i < 8; ++i)
    pdsh.push_back(fmt::format("gpu-node-{}: [2025-05-09 15:14:59,123] [INFO] [launch.py:256:main] process {} spawned",
                               i % 2, 1234 + i));
  EXPECT_EQ(DetectOn(*set, pdsh).Describe(), "host-prefix");
}

TEST(WrapperLoaderTest, AnIndentedPasteIsPeeledBeforeItsWrappers) {
  // docker logs -t quoted as a Markdown indented code block: the wrapper's
  // pattern is anchored at the start of the line, after the blanks.
  auto set = Builtin();
  std::vector<std::string> lines;
  for (const auto& l : kSeed) lines.push_back("    2025-05-09T15:15:10.123456789Z " + l);
  parse::WrapperStack stack = DetectOn(*set, lines);
  ASSERT_EQ(stack.Describe(), "indented 4+rfc3339-timestamp");
  std::string scratch;
  EXPECT_EQ(stack.Peel(lines[3], &scratch).inner, kSeed[3]);
  EXPECT_EQ(stack.Peel("    Aborted (core dumped)", &scratch).inner, "Aborted (core dumped)");
  EXPECT_EQ(stack.Peel("Loading shards: 40%", &scratch).inner, "Loading shards: 40%");
}

}  // namespace faultline::rules
