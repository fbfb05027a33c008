#include "events/event_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "events/structure.h"
#include "parse/line_parser.h"
#include "rules/pattern_matcher.h"

namespace faultline::events {
namespace {

// Feeds lines the way the scanner does, with structural hints computed by
// the real structural patterns.
class Harness {
 public:
  Harness() : builder_([this](Event&& e) { events.push_back(std::move(e)); }) {
    std::vector<std::pair<unsigned, std::string>> patterns;
    for (const auto& [bit, p] : StructuralPatterns()) patterns.emplace_back(bit, p);
    matcher_ = std::move(*rules::PatternMatcher::Compile(patterns));
  }
  // `benign`: 1-based lines a benign rule matched (the scanner sets LineView::benign).
  // `control_flow`: 1-based lines a control_flow signature matched (LineView::control_flow).
  // `known`: 1-based lines a signature rule matched (LineView::matches).
  void Feed(const std::vector<std::string>& lines, const std::vector<int64_t>& benign = {},
            const std::vector<int64_t>& control_flow = {}, const std::vector<int64_t>& known = {}) {
    int64_t n = 0;
    for (const auto& text : lines) {
      ++n;
      std::vector<rules::PatternHit> hits;
      matcher_->Scan(text, &hits);
      uint32_t bits = 0;
      for (auto& h : hits) bits |= h.id;
      parse::ParsedLine p = parse::ParseLine(text);
      const bool is_known = std::find(known.begin(), known.end(), n) != known.end();
      if (bits == 0 && !is_known && !builder_.NeedsEveryLine()) continue;
      LineView v;
      v.parsed = &p;
      v.line = n;
      v.structure = bits;
      v.benign = std::find(benign.begin(), benign.end(), n) != benign.end();
      v.control_flow = std::find(control_flow.begin(), control_flow.end(), n) != control_flow.end();
      std::vector<RuleMatch> matches;
      if (is_known) {
        matches.push_back(RuleMatch{0, {}, n});
        v.matches = &matches;
      }
      builder_.Add(v);
    }
    builder_.Finish();
  }
  std::vector<Event> events;

 private:
  EventBuilder builder_;
  std::unique_ptr<rules::PatternMatcher> matcher_;
};

TEST(EventBuilderTest, InterleavedPrefixedTracebacksAreAssembledPerProcess) {
  Harness h;
  h.Feed({
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597] "
      "WorkerProc failed to start.",
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597] "
      "Traceback (most recent call last):",
      "(Worker_TP0 pid=7505) INFO 05-09 15:15:10 [parallel_state.py:1] rank 0 "
      "in world size 2",
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597]  "
      " File \"/v/gpu_worker.py\", line 9, in init_device",
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597]  "
      "   assert self.local_rank < torch.cuda.device_count()",
      "(Worker_TP1 pid=7506) ERROR 05-09 15:15:10 [multiproc_executor.py:597] "
      "AssertionError: DP adjusted local rank 3 is out of bounds.",
      "(EngineCore_DP1 pid=6688) INFO 05-09 15:15:11 [core.py:1] shutting down",
  });
  ASSERT_EQ(h.events.size(), 1u);
  const Event& e = h.events[0];
  EXPECT_EQ(e.kind, EventKind::kPythonTraceback);
  EXPECT_EQ(e.message, "AssertionError: DP adjusted local rank 3 is out of bounds.");
  EXPECT_EQ(e.exception, "AssertionError");
  EXPECT_EQ(e.where.line, 6);
  EXPECT_EQ(e.process.key, "Worker_TP1 pid=7506");
  EXPECT_EQ(e.process.pid, 7506);
  // The introducing ERROR line is part of the traceback's context, not an
  // event.
  EXPECT_EQ(e.context.front().line, 1);
  EXPECT_EQ(e.context.size(), 5u);
}

TEST(EventBuilderTest, ChainedTracebackKeepsTheFirstException) {
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"a.py\", line 1, in <module>",
      "KeyError: 'model.layers.0.weight'",
      "",
      "The above exception was the direct cause of the following exception:",
      "",
      "Traceback (most recent call last):",
      "  File \"b.py\", line 2, in load",
      "RuntimeError: failed to load checkpoint",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].message, "KeyError: 'model.layers.0.weight'");
  ASSERT_EQ(h.events[0].chain.size(), 2u);
  EXPECT_EQ(h.events[0].chain[1], "RuntimeError: failed to load checkpoint");
}

TEST(EventBuilderTest, ALineOnlyASignatureKnowsThatEndsInAColonTakesTheLinesBelow) {
  // hydra's compact report of an InstantiationException (tests/real/hydra-dsrl-robomimic-...): no traceback,
  // the header a signature knows, the caught exception's repr on the next line.
  const std::vector<std::string> report = {
      "Error executing job with overrides: []",
      "Error in call to target 'model.diffusion.diffusion_eval.DiffusionEval':",
      "FileNotFoundError(2, 'No such file or directory')",
      "full_key: model",
      "",
      "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
  };
  Harness h;
  h.Feed(report, {}, {}, {2});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 2);
  ASSERT_GE(h.events[0].continuation.size(), 1u);
  EXPECT_EQ(h.events[0].continuation[0].text, "FileNotFoundError(2, 'No such file or directory')");
  // Under such a header, text that names no exception is not its continuation (Triton's "ERROR: Failed to
  // create instance: model 'm', tensor 'logits':" over its own wrapped sentence stays one line, as before).
  Harness text;
  text.Feed({"ERROR: Failed to create instance: model 'm', tensor 'logits':", "the model expects 3 dimensions"}, {},
            {}, {1});
  ASSERT_EQ(text.events.size(), 1u);
  EXPECT_TRUE(text.events[0].continuation.empty());
  // A known line that does not announce more stays one line.
  Harness one;
  one.Feed({"Error in call to target 'x.Y' failed", "FileNotFoundError(2, 'No such file or directory')"}, {}, {}, {1});
  ASSERT_EQ(one.events.size(), 1u);
  EXPECT_TRUE(one.events[0].continuation.empty());
}

TEST(EventBuilderTest, AChainThatStartsWithAControlFlowExceptionTakesTheOneRaisedWhileHandlingIt) {
  // sglang's assert_pkg_version (tests/real): importlib's next() raises a bare StopIteration, its
  // except clause PackageNotFoundError, which names the missing package.
  const std::vector<std::string> chain = {
      "Traceback (most recent call last):",
      "  File \"/opt/conda/lib/python3.11/importlib/metadata/__init__.py\", line 563, in from_name",
      "    return next(cls.discover(name=name))",
      "StopIteration",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"/opt/conda/lib/python3.11/importlib/metadata/__init__.py\", line 565, in from_name",
      "    raise PackageNotFoundError(name)",
      "importlib.metadata.PackageNotFoundError: No package metadata was found for flashinfer_python",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"/sgl/utils.py\", line 691, in assert_pkg_version",
      "Exception: flashinfer_python with minimum required version 0.2.5 is not installed.",
  };
  Harness h;
  h.Feed(chain, {}, {4});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].message, "importlib.metadata.PackageNotFoundError: No package metadata was found for flashinfer_python");
  EXPECT_EQ(h.events[0].exception, "importlib.metadata.PackageNotFoundError");
  EXPECT_EQ(h.events[0].where.line, 11);
  EXPECT_EQ(h.events[0].chain.size(), 3u);
  // Without the control_flow signature the first exception stays the message.
  Harness plain;
  plain.Feed(chain);
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_EQ(plain.events[0].message, "StopIteration");
  // Alone, a control-flow exception is the message (an empty iterator in the job's own code).
  Harness alone;
  alone.Feed({"Traceback (most recent call last):", "  File \"train.py\", line 9, in <module>",
              "    batch = next(it)", "StopIteration"},
             {}, {4});
  ASSERT_EQ(alone.events.size(), 1u);
  EXPECT_EQ(alone.events[0].message, "StopIteration");
}

TEST(EventBuilderTest, TerminateWithWhat) {
  Harness h;
  h.Feed({
      "terminate called after throwing an instance of 'c10::DistBackendError'",
      "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group "
      "watchdog thread terminated",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kCxxTerminate);
  EXPECT_EQ(h.events[0].exception, "c10::DistBackendError");
  EXPECT_EQ(h.events[0].message.rfind("c10::DistBackendError: [PG ID 0", 0), 0u);
  EXPECT_EQ(h.events[0].where.line, 2);
}

// A paste (or an interleaved stream) that starts at a terminate's "  what():" line, without the "terminate
// called after throwing an instance of 'T'" header: the same uncaught C++ exception, its type lost. It is a
// fatal terminate event whose message is the what() text; the CUDA hints and c10's frames under it are its
// context, no events of their own.
TEST(EventBuilderTest, AWhatLineWithoutItsTerminateHeaderIsStillATerminate) {
  Harness h;
  h.Feed({
      "  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: CUDA "
      "error: an illegal memory access was encountered",
      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
      "might be incorrect.",
      "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
      "",
      "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most "
      "recent call first):",
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f8416d6c1b6 in "
      "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kCxxTerminate);
  EXPECT_EQ(h.events[0].where.line, 1);
  EXPECT_EQ(h.events[0].message.rfind("[PG ID 2 PG GUID 3 Rank 1] Process group watchdog", 0), 0u);
  // With its header the what() line still completes that terminate, as before.
  Harness full;
  full.Feed({"terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated"});
  ASSERT_EQ(full.events.size(), 1u);
  EXPECT_EQ(full.events[0].exception, "c10::DistBackendError");
  // An empty what() says nothing; prose that quotes what() mid-line is no terminate.
  Harness prose;
  prose.Feed({"  what():", "the what() of the exception was logged"});
  EXPECT_TRUE(prose.events.empty());
}

// CPython's site.py reports a sitecustomize module that failed to import and starts the interpreter anyway
// (a Vertex AI training container whose sitecustomize imports a package the image lacks, job succeeded):
// the exception line under the report is no failure.
TEST(EventBuilderTest, AnExceptionReportedBySiteForSitecustomizeIsIgnored) {
  Harness h;
  h.Feed({
      "Error in sitecustomize; set PYTHONVERBOSE for traceback:",
      "ModuleNotFoundError: No module named 'pythonjsonlogger'",
      "Running command: pip3 install --user --upgrade --force-reinstall --no-deps tfm_trainer-2.2.0.tar.gz",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_TRUE(h.events[0].ignored);
  // The same exception line with no such report before it still counts.
  Harness plain;
  plain.Feed({"Running command: python -m trainer.task", "ModuleNotFoundError: No module named 'pythonjsonlogger'"});
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_FALSE(plain.events[0].ignored);
}

// Windows PowerShell prints a native command's first stderr line as an error record: "python : " before it
// and the record's position block under it, before the traceback's first frame (a real console copy,
// tests/real/powershell-python-c-unicodeencodeerror-gbk-nativecommanderror).
TEST(EventBuilderTest, AnIPythonTracebacksUnquotedFramesAndArrowLinesAreNoExceptionLine) {
  // IPython 8 (Jupyter): "Cell In[N], line L" and "File PATH:L, in f(...)" frames, "---->" source lines.
  Harness h;
  h.Feed({
      "---------------------------------------------------------------------------",
      "OutOfMemoryError                          Traceback (most recent call last)",
      "Cell In[71], line 3",
      "      1 # --- Execute ---",
      "----> 3 embeddings_df = generate_and_upload_embeddings(",
      "      4     checkpoint_path=CHECKPOINT_PATH,",
      "",
      "File /opt/conda/lib/python3.10/concurrent/futures/_base.py:451, in Future.result(self, timeout)",
      "    449     raise CancelledError()",
      "--> 451     return self.__get_result()",
      "",
      "File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1776, in Module._wrapped_call_impl(self)",
      "-> 1776     return self._call_impl(*args, **kwargs)",
      "",
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 750.00 MiB.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].where.line, 15);
  EXPECT_EQ(h.events[0].exception, "OutOfMemoryError");
  // IPython 7 (Kaggle, older Colab): "PATH in f(...)" and "<ipython-input-...> in <module>" frames.
  Harness old;
  old.Feed({
      "OutOfMemoryError                          Traceback (most recent call last)",
      "/tmp/ipykernel_55/3693596461.py in <cell line: 0>()",
      "---> 29                     correct, loss = train_step(",
      "<ipython-input-11-8c0a3d421ca2> in <module>",
      "----> 6 pets1.summary(path/\"images\")",
      "/usr/local/lib/python3.11/dist-packages/torch/nn/modules/module.py in _call_impl(self, *args, **kwargs)",
      "-> 1750             return forward_call(*args, **kwargs)",
      "> 23324         buf728 = empty_strided_cuda((256, 672, 28, 28), (526848, 784, 28, 1), torch.float16)",
      "",
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 258.00 MiB.",
  });
  ASSERT_EQ(old.events.size(), 1u);
  EXPECT_EQ(old.events[0].where.line, 10);
  // Colab's web view copied: linked frames, "4 frames", source lines that lost their indent.
  Harness colab;
  colab.Feed({
      "RuntimeError                              Traceback (most recent call last)",
      "[/tmp/ipykernel_6631/3323691070.py](https://localhost:8080/#) in <cell line: 0>()",
      "22 model_cpu = model.cpu().eval()",
      "---> 23 scripted  = torch.jit.script(model_cpu)",
      "",
      "4 frames",
      "[/usr/local/lib/python3.12/dist-packages/torch/jit/_recursive.py](https://localhost:8080/#) in create(a)",
      "462     property_rcbs = [p.resolution_callback for p in property_stubs]",
      "--> 464     concrete_type._create_methods_and_properties(",
      "",
      "RuntimeError: Can't redefine method: forward on class: __torch__.train",
  });
  ASSERT_EQ(colab.events.size(), 1u);
  EXPECT_EQ(colab.events[0].where.line, 11);
  EXPECT_EQ(colab.events[0].exception, "RuntimeError");
  // A plain Python traceback is no IPython one: a line starting with a number ends it as before.
  Harness plain;
  plain.Feed({"Traceback (most recent call last):", "  File \"a.py\", line 1, in <module>", "    f()",
              "ValueError: bad"});
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_EQ(plain.events[0].where.line, 4);
}

TEST(EventBuilderTest, PytestsEColumnExceptionLineIsAnException) {
  Harness h;
  h.Feed({
      "vllm_ascend/attention/attention.py:78: in initialize_from_len",
      "    return cls(generate_attn_mask(max_seq_len, dtype, mask_value))",
      "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ",
      ">       attn_mask = torch.masked_fill(torch.zeros(size=(max_seq_len, max_seq_len)),",
      "                                      mask_flag, mask_value).to(dtype)",
      "E       RuntimeError: value cannot be converted to type at::Half without overflow",
      "",
      "vllm_ascend/attention/attention.py:61: RuntimeError",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kExceptionLine);
  EXPECT_EQ(h.events[0].where.line, 6);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
  EXPECT_EQ(h.events[0].message, "RuntimeError: value cannot be converted to type at::Half without overflow");
  // pytest's short test summary: the exception after the test id.
  Harness summary;
  summary.Feed({
      "=========================== short test summary info ============================",
      "FAILED compile/test_basic_correctness.py::test_compile_correctness[test_setting0] - RuntimeError: Server exited "
      "unexpectedly.",
  });
  ASSERT_EQ(summary.events.size(), 1u);
  EXPECT_EQ(summary.events[0].where.line, 2);
  EXPECT_EQ(summary.events[0].message, "RuntimeError: Server exited unexpectedly.");
  // A word "E" with one blank is no pytest column.
  Harness one;
  one.Feed({"E ValueError: x"});
  EXPECT_TRUE(one.events.empty());
}

TEST(EventBuilderTest, PowerShellsErrorRecordUnderATracebackHeaderIsNoExceptionLine) {
  Harness h;
  h.Feed({
      "python : Traceback (most recent call last):",
      "\u6240\u5728\u4f4d\u7f6e \u884c:1 \u5b57\u7b26: 72",
      "+ ... ng=[Console]::OutputEncoding=[System.Text.Encoding]::UTF8;python -c \"",
      "+                                                               ~~~~~~~~~~~",
      "    + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException",
      "    + FullyQualifiedErrorId : NativeCommandError",
      " ",
      "  File \"<string>\", line 7, in <module>",
      "    print(f'ECHARTS_SRC = {js_escaped}')",
      "UnicodeEncodeError: 'gbk' codec can't encode character '\\u25b6' in position 584520: illegal multibyte "
      "sequence",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].where.line, 10);
  EXPECT_EQ(h.events[0].exception, "UnicodeEncodeError");
  // The English position line, and a record folded at the console width, the same.
  Harness en;
  en.Feed({
      "python : Traceback (most recent call last):",
      "At line:1 char:1",
      "+ python train.py 2>&1 | Out-String | Set-Content out.txt",
      "+ ~~~~~~~~~~~~~~~~~~~~~",
      "    + CategoryInfo          : NotSpecified: (Traceback (most recent call last) ",
      "   ::String) [], RemoteException",
      "    + FullyQualifiedErrorId : NativeCommandError",
      " ",
      "  File \"train.py\", line 3, in <module>",
      "    import torch",
      "ModuleNotFoundError: No module named 'torch'",
  });
  ASSERT_EQ(en.events.size(), 1u);
  EXPECT_EQ(en.events[0].where.line, 11);
  // Without the "NAME : " header the line under a traceback header is still its exception line.
  Harness plain;
  plain.Feed({"Traceback (most recent call last):", "At line:1 char:1"});
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_EQ(plain.events[0].where.line, 2);
}

// A what() string that starts with a newline (PLUMED's ExceptionError): std::terminate prints "what():" with
// nothing after it and the text on the lines below, a source location first. The message is the first line of
// that text that says what failed, not where (nor a banner or a bare label); the signal report ends the text.
TEST(EventBuilderTest, AnEmptyWhatLineTakesItsMessageFromTheLinesBelow) {
  Harness h;
  h.Feed({
      "terminate called after throwing an instance of 'PLMD::Plumed::ExceptionError'",
      "what():",
      "(core/Action.cpp:240) void PLMD::Action::error(const string&) const",
      "ERROR in input to action DISTANCE with label @0 : Number of specified atoms should be 2",
      "[fv-az1113-981:44122] *** Process received signal ***",
      "[fv-az1113-981:44122] Signal: Aborted (6)",
  });
  ASSERT_FALSE(h.events.empty());
  EXPECT_EQ(h.events[0].kind, EventKind::kCxxTerminate);
  EXPECT_EQ(h.events[0].where.line, 4);
  EXPECT_EQ(h.events[0].message,
            "PLMD::Plumed::ExceptionError: ERROR in input to action DISTANCE with label @0 : Number of specified "
            "atoms should be 2");
  // PLUMED's banner form: "+++" lines and the bare "ERROR" label are framing.
  Harness banner;
  banner.Feed({
      "terminate called after throwing an instance of 'PLMD::Plumed::ExceptionError'",
      "  what():  ",
      "+++ PLUMED error",
      "+++ at PlumedMain.cpp:706, function void PLMD::PlumedMain::readInputWords(const std::vector<std::string>&)",
      "+++ message follows +++",
      "ERROR",
      "I cannot understand line: ECV_MULTITHERMAL_MULTIBARIC LABEL=ecv ARG=energy,vol",
      "Maybe a missing space or a typo?",
      "[fv-az95-172:47005] *** Process received signal ***",
  });
  ASSERT_FALSE(banner.events.empty());
  EXPECT_EQ(banner.events[0].where.line, 7);
  EXPECT_EQ(banner.events[0].message.find("PLMD::Plumed::ExceptionError: I cannot understand line:"), 0u);
  // A what() with its text on its own line is unchanged.
  Harness one;
  one.Feed({"terminate called after throwing an instance of 'std::runtime_error'", "  what():  boom", "Aborted"});
  ASSERT_FALSE(one.events.empty());
  EXPECT_EQ(one.events[0].message, "std::runtime_error: boom");
  EXPECT_EQ(one.events[0].where.line, 2);
}

// A Rust panic (TGI's router and launcher, tokenizers): std's default hook prints "thread 'NAME' panicked at
// FILE:LINE:COL:" and the message on the lines under it (Rust 1.73+), or "panicked at 'MESSAGE', FILE" on one
// line before; either is the program's uncaught error, a fatal exception event whose message goes on below.
TEST(EventBuilderTest, ARustPanicIsAFatalExceptionWithItsMessageBelow) {
  Harness h;
  h.Feed({
      "thread 'tokio-runtime-worker' panicked at /usr/src/router/src/server.rs:180:45:",
      "byte index 1000 is not a char boundary; it is inside '你' (bytes 999..1002) of `abc`",
      "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kExceptionLine);
  EXPECT_EQ(h.events[0].where.line, 1);
  ASSERT_FALSE(h.events[0].continuation.empty());
  EXPECT_EQ(h.events[0].continuation[0].line, 2);
  Harness old;
  old.Feed({"thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 2 }', "
            "launcher/src/main.rs:1042:62"});
  ASSERT_EQ(old.events.size(), 1u);
  EXPECT_EQ(old.events[0].kind, EventKind::kExceptionLine);
  EXPECT_NE(old.events[0].message.find("called `Result::unwrap()`"), std::string::npos);
  // Prose that mentions a panic is no event.
  Harness prose;
  prose.Feed({"the worker thread 'w1' panicked at startup last week"});
  EXPECT_TRUE(prose.events.empty());
}

TEST(EventBuilderTest, RepeatedKernelAssertionsFoldIntoOne) {
  Harness h;
  h.Feed({
      "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: "
      "indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion "
      "`srcIndex < srcSelectDimSize` failed.",
      "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: "
      "indexSelectLargeIndex: block: [0,0,0], thread: [1,0,0] Assertion "
      "`srcIndex < srcSelectDimSize` failed.",
      "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1553: "
      "indexSelectLargeIndex: block: [0,0,0], thread: [2,0,0] Assertion "
      "`srcIndex < srcSelectDimSize` failed.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kCudaKernelAssert);
  EXPECT_EQ(h.events[0].repeats, 2);
}

TEST(EventBuilderTest, DeviceAssertWithFileAndLineIsAKernelAssertion) {
  // deep_gemm's DG_DEVICE_ASSERT: "Assertion failed: FILE:LINE, condition: EXPR"; TRT-LLM's
  // "Assertion failed: <message>" (no FILE:LINE) is no kernel assertion.
  Harness h;
  h.Feed({
      "Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0",
      "",
      "[TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled",
  });
  ASSERT_GE(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kCudaKernelAssert);
  for (size_t i = 1; i < h.events.size(); ++i) EXPECT_NE(h.events[i].kind, EventKind::kCudaKernelAssert);
}

TEST(EventBuilderTest, AnErrorLineGoesOnUnderItsColonOrIndentedLines) {
  // An ERROR line whose message ends in ':' continues on the plain lines below it; one whose detail is
  // indented under it (pydantic's "  Value error, ...") too. A plain line under any other ERROR line
  // is not part of it.
  Harness h;
  h.Feed({
      "[TRT-LLM] [E] Failed to initialize executor on rank 0:",
      "The checkpoint you are trying to load has model type `qwen3_5` but",
      "Transformers does not recognize this architecture.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kErrorLog);
  EXPECT_EQ(h.events[0].continuation.size(), 2u);
  Harness h2;
  h2.Feed({
      "2025-05-09 15:14:59,123 - app - ERROR - step failed",
      "plain text after it",
  });
  ASSERT_GE(h2.events.size(), 1u);
  EXPECT_TRUE(h2.events[0].continuation.empty());
}

TEST(EventBuilderTest, SignalsExitCodesAndPlainErrors) {
  Harness h;
  h.Feed({
      "INFO starting",
      "Fatal Python error: Segmentation fault",
      "torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
      "(exitcode: -9) local_rank: 0 (pid: 1) of binary: python",
      "bash: line 1: 4242 Killed                  python train.py",
      "WARNING something odd about errors",
  });
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.events[0].kind, EventKind::kSignal);
  EXPECT_EQ(h.events[1].kind, EventKind::kExitStatus);
  EXPECT_EQ(h.events[2].kind, EventKind::kSignal);
}

TEST(EventBuilderTest, ExceptionShapeNeedsTypeAtStart) {
  std::string_view type, text;
  EXPECT_TRUE(ParseExceptionLine("torch.OutOfMemoryError: CUDA out of memory.", &type, &text));
  EXPECT_EQ(type, "torch.OutOfMemoryError");
  EXPECT_EQ(text, "CUDA out of memory.");
  EXPECT_TRUE(ParseExceptionLine("KeyboardInterrupt", &type, &text));
  EXPECT_FALSE(ParseExceptionLine("UserWarning: deprecated", &type, &text));
  EXPECT_FALSE(ParseExceptionLine("the ValueError: was handled", &type, &text));
}

TEST(EventBuilderTest, AMultiLineMessageKeepsItsContinuationLines) {
  Harness h;
  h.Feed({
      "[rank1]: Traceback (most recent call last):",
      "[rank1]:   File \"/w/train.py\", line 9, in main",
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: "
      "NCCLUtils.cpp:93, invalid usage, NCCL version 2.28.3",
      "[rank1]: ncclInvalidUsage: This usually reflects invalid usage of NCCL "
      "library.",
      "[rank1]: Last error:",
      "[rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device "
      "60",
  });
  ASSERT_EQ(h.events.size(), 1u);
  const Event& e = h.events[0];
  EXPECT_EQ(e.where.line, 3);
  ASSERT_EQ(e.continuation.size(), 3u);
  EXPECT_EQ(e.continuation[2].line, 6);
}

TEST(EventBuilderTest, UnprefixedFramesBelowAPrefixedTracebackStartJoinIt) {
  Harness h;
  h.Feed({
      "[2025-10-21 14:03:12 TP2] Scheduler hit an exception: Traceback (most "
      "recent call last):",
      "  File \"/s/scheduler.py\", line 3, in run",
      "    self.capture()",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 "
      "MiB.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].process.key, "TP2");
  EXPECT_EQ(h.events[0].where.line, 4);
  EXPECT_FALSE(h.events[0].cut_off);
}

TEST(EventBuilderTest, ATracebackWhoseIndentWasTrimmedStillEndsInItsException) {
  // Cloud Logging trims every entry: the frames and their source lines lose
  // their indent (lines from tests/real/sglang-gke-cloud-logging-newest-first-
  // dev-shm-nccl, wrapper peeled, in the job's order). The exception's message
  // goes on unprefixed, as its frames did.
  Harness h;
  h.Feed({
      "[2025-04-05 00:01:19 TP0] Scheduler hit an exception: Traceback (most recent call last):",
      "File \"/sgl-workspace/sglang/python/sglang/srt/utils.py\", line 315, in get_available_gpu_memory",
      "torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MIN)",
      "File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 2501, in "
      "all_reduce",
      "work = group.allreduce([tensor], opts)",
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
      "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
      "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
      "Last error:",
      "Error while creating shared memory segment /dev/shm/nccl-lNPZ0f (size 7340384)",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].process.key, "TP0");
  EXPECT_EQ(h.events[0].exception, "torch.distributed.DistBackendError");
  EXPECT_EQ(h.events[0].where.line, 6);
  ASSERT_EQ(h.events[0].continuation.size(), 3u);
  EXPECT_EQ(h.events[0].continuation.back().line, 9);
}

TEST(EventBuilderTest, APasteThatStartsInsideATracebackStillEndsInItsException) {
  Harness h;
  h.Feed({
      "    return forward_call(*args, **kwargs)",
      "  File \"/w/model.py\", line 44, in forward",
      "    x = self.proj(x)",
      "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x8 and 16x4)",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].where.line, 4);
}

TEST(EventBuilderTest, ALoggedPasteThatStartsInsideATracebackEndsInItsException) {
  // vLLM's header on every line of the record; the paste starts at a caret line, then a source line, so
  // its first frame comes after two lines that are the same traceback's debris, not errors of their own.
  const std::string h = "(RayWorkerWrapper pid=67451, ip=10.1.0.7) ERROR 06-25 15:28:30 worker_base.py:148] ";
  Harness w;
  w.Feed({h + "           ^^^^^^^^^^^^^^^^^^^^^", h + "    self.model_runner.profile_run()",
          h + "  File \"/v/model_runner.py\", line 844, in profile_run", h + "    self.execute_model(seqs)",
          h + "           ^^^^^^^^^^^^^^^^^^^^^", h + "RuntimeError: NCCL Error 2: unhandled system error"});
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(w.events[0].where.line, 6);
  // The same when the paste starts at a source line and its caret line follows.
  Harness source_first;
  source_first.Feed({h + "    return GroupCoordinator(", h + "           ^^^^^^^^^^^^^^^^^",
                     h + "  File \"/v/parallel_state.py\", line 207, in __init__", h + "    self.comm = init()",
                     h + "RuntimeError: NCCL error: unhandled system error"});
  ASSERT_EQ(source_first.events.size(), 1u);
  EXPECT_EQ(source_first.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(source_first.events[0].where.line, 5);
  // A lone indented ERROR line with no frame under it stays an error line.
  Harness lone;
  lone.Feed({h + "    bad config value", "INFO 06-25 15:28:31 worker.py:1] going on"});
  ASSERT_EQ(lone.events.size(), 1u);
  EXPECT_EQ(lone.events[0].kind, EventKind::kErrorLog);
}

TEST(EventBuilderTest, AnExceptionLineAloneUnderAWarningHeaderWasHandled) {
  // A paste that starts inside dynamo's WARNING-logged traceback: its exception line alone is no fatal error.
  const std::string h = "[2023-11-29 11:05:15,440] torch._dynamo.convert_frame: [WARNING] ";
  Harness w;
  w.Feed({h + "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'", h + "Set TORCH_LOGS=\"+dynamo\""});
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0].kind, EventKind::kErrorLog);
  Harness e;
  e.Feed({"FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'"});
  ASSERT_EQ(e.events.size(), 1u);
  EXPECT_EQ(e.events[0].kind, EventKind::kExceptionLine);
}

TEST(EventBuilderTest, AStatusLineInterleavedInATracebackDoesNotCloseIt) {
  // Two unprefixed DeepSpeed ranks (tests/real/deepspeed-lmflow-bf16-optimizer-flatten-oom): the other
  // rank's "Loading extension module utils..." lands between a frame and its code line.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/py/deepspeed/runtime/engine.py\", line 1311, in _configure_optimizer",
      "Loading extension module utils...",
      "    self.optimizer = self._configure_bf16_optimizer(basic_optimizer)",
      "  File \"/py/deepspeed/runtime/bf16_optimizer.py\", line 258, in _flatten_dense_tensors_aligned",
      "    return self.flatten(align_dense_tensors(tensor_list, alignment))",
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.55 GiB (GPU 1; 23.69 GiB total "
      "capacity)",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 7);
  EXPECT_EQ(h.events[0].exception, "torch.cuda.OutOfMemoryError");
}

TEST(EventBuilderTest, SeveralPlainLinesPastedIntoATracebackDoNotCloseIt) {
  // tests/real/vllm-025-dspark-draft-weight-size-assert-pip-list-and-pager-lines-mixed-in: two rows of a
  // `pip list` the user copied land between the engine core's frame and its source line. Neither is an
  // exception line; the traceback goes on under the second of them to its own exception.
  Harness h;
  h.Feed({
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231] Traceback (most recent call last):",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231]   File \"/v/otel.py\", line 178, in sync_wrapper",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231]     return func(*args, **kwargs)",
      "python-json-logger                       4.0.0",
      "python-multipart                         0.0.22",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231]     return func(*args, **kwargs)          [353/1599]",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231]   File \"/v/linear.py\", line 369, in weight_loader",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231]     assert param.size() == loaded_weight.size(), (",
      "(EngineCore pid=391334) ERROR 07-23 21:03:03 [core.py:1231] AssertionError: Tried to load weights of size "
      "torch.Size([2048, 10240])to a parameter of size torch.Size([2048, 4096])",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].where.line, 9);
  EXPECT_EQ(h.events[0].exception, "AssertionError");
}

TEST(EventBuilderTest, AnInfoRecordOfAnotherProcessInsideATracebackDoesNotEndIt) {
  // tests/real/torchrun-2-nodes-c10d-localhost-endpoint-rendezvous-timeout-commented-paste: two nodes'
  // torchrun agents write one file; node B's logging.basicConfig records ("INFO:name:msg", a ": " in the
  // message) land under node A's first frames. They are no exception line: the traceback goes on to its
  // own exception (the second "Traceback" header is the other copy's, a new segment of the same one).
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/opt/conda/bin/torchrun\", line 33, in <module>",
      "    sys.exit(load_entry_point('torch==1.13.0a0+d0d6b1f', 'console_scripts', 'torchrun')())",
      "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:log directory set to: /tmp/torchelastic_x",
      "INFO:torch.distributed.elastic.agent.server.api:[default] starting workers for entrypoint: python",
      "Traceback (most recent call last):",
      "  File \"/opt/conda/lib/python3.8/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py\", "
      "line 638, in run",
      "    raise RendezvousTimeoutError()",
      "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 9);
  EXPECT_EQ(h.events[0].exception, "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError");
}

TEST(EventBuilderTest, AnExceptionLineUnderAnInfoHeaderStillEndsATraceback) {
  // The records skipped above are those without an exception's shape: a traceback a logger prints at INFO
  // level, its exception line under the same header, still ends there.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"train.py\", line 3, in <module>",
      "    main()",
      "INFO:root:ValueError: bad config",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 4);
}

TEST(EventBuilderTest, AFrameLineThatAPasteWrappedDoesNotCloseItsTraceback) {
  // tests/real/vllm-ray-lws-2node-deepseek-r1-cuda-unspecified-launch-failure: the paste wrapped frame
  // lines, so a function name's tail ("cution_loop", "forward") stands alone, once with a blank line after
  // it; a lower-case word is no exception class. A bare class name still closes a traceback.
  Harness h;
  h.Feed({
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581] Traceback (most recent call last):",
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581]   File \"/py/vllm/worker/worker_base.py\", line 91, "
      "in start_worker_exe",
      "cution_loop",
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581]     output = self.execute_model(execute_model_req=None)",
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581]   File \"/py/vllm/model_executor/models/deepseek_v2.py\", "
      "line 677, in ",
      "forward",
      "",
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581]     hidden_states = self.model(input_ids)",
      "(W pid=570) ERROR 02-21 08:03:30 worker_base.py:581] RuntimeError: CUDA error: unspecified launch failure",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 9);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
  Harness bare;
  bare.Feed({
      "Traceback (most recent call last):",
      "  File \"/py/shm_broadcast.py\", line 427, in acquire_read",
      "    raise TimeoutError",
      "TimeoutError",
  });
  ASSERT_EQ(bare.events.size(), 1u);
  EXPECT_EQ(bare.events[0].where.line, 4);
  EXPECT_EQ(bare.events[0].exception, "TimeoutError");
}

TEST(EventBuilderTest, AnErrorLineWithAnUnknownTypeStillClosesATraceback) {
  // Ray's "RayTaskError(RuntimeError): ..." has no plain exception shape but is the raised error;
  // the remote traceback printed under it is its own.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/w/main_ppo.py\", line 46, in run_ppo",
      "    ray.get(runner.run.remote(config))",
      "ray.exceptions.RayTaskError(RuntimeError): ray::TaskRunner.run() (pid=1064331, ip=10.130.0.34)",
      "  File \"/w/main_ppo.py\", line 187, in run",
  });
  ASSERT_FALSE(h.events.empty());
  EXPECT_EQ(h.events[0].where.line, 4);
}

TEST(EventBuilderTest, RichBoxTracebacksEndInTheirExceptionLine) {
  Harness h;
  h.Feed({
      "\u256d\u2500\u2500\u2500 Traceback (most recent call last) "
      "\u2500\u2500\u2500\u256e",
      "\u2502 /w/run_benchmark.py:327 in main                        \u2502",
      "\u2570\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500"
      "\u256f",
      "UnboundLocalError: local variable 't_s3' referenced before assignment",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 4);
}

TEST(EventBuilderTest, ATracebackWithoutItsExceptionLineIsMarkedCutOff) {
  Harness h;
  h.Feed({"Traceback (most recent call last):", "  File \"/w/a.py\", line 1, in <module>"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_TRUE(h.events[0].cut_off);
}

TEST(EventBuilderTest, ACutOffTracebackNamesItsLastSourceLine) {
  // The paste ends after the failing check's source line: that line is the only clue, so the message
  // carries it; carets and frame lines are no source lines.
  Harness h;
  h.Feed({"Traceback (most recent call last):", "  File \"/w/a.py\", line 1, in <module>", "    check(x)",
          "  File \"/w/b.cu\", line 776, in check_routing", "    TVM_FFI_ICHECK(n != 0) << \"n should not be zero\";",
          "    ^^^^^^^^^^^^^^"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_TRUE(h.events[0].cut_off);
  EXPECT_NE(h.events[0].message.find("last source line: TVM_FFI_ICHECK(n != 0) << \"n should not be zero\";"),
            std::string::npos);
}

TEST(EventBuilderTest, ATracebackUnderExceptionIgnoredInIsMarkedIgnored) {
  // Python's unraisable hook (a destructor at interpreter exit) swallowed the exception: the event is
  // kept, marked ignored; a traceback later in the same process is an ordinary one.
  Harness h;
  h.Feed({
      "Exception ignored in: <function Pool.__del__ at 0x7ffb16c40e00>",
      "Traceback (most recent call last):",
      "  File \"/usr/local/lib/python3.11/multiprocessing/pool.py\", line 271, in __del__",
      "    self._change_notifier.put(None)",
      "OSError: [Errno 9] Bad file descriptor",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: bad",
  });
  ASSERT_EQ(h.events.size(), 2u);
  EXPECT_EQ(h.events[0].where.line, 5);
  EXPECT_TRUE(h.events[0].ignored);
  EXPECT_EQ(h.events[1].where.line, 8);
  EXPECT_FALSE(h.events[1].ignored);

  Harness bare;  // no traceback object: Python prints the exception line alone
  bare.Feed({
      "Exception ignored in: <function Foo.__del__ at 0x7f00>",
      "AttributeError: 'NoneType' object has no attribute 'close'",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: later",
  });
  ASSERT_EQ(bare.events.size(), 2u);
  EXPECT_TRUE(bare.events[0].ignored);
  EXPECT_FALSE(bare.events[1].ignored);
}

TEST(EventBuilderTest, AsyncioExceptionInCallbackReportIsMarkedIgnored) {
  // asyncio's default exception handler logged a callback that raised (ART's backend done-callback closing a
  // proxy whose task was cancelled, at shutdown): the ERROR record, "handle: <Handle ...>", and the chained
  // tracebacks. The loop went on: every event of the report is swallowed; a traceback later is ordinary.
  Harness h;
  h.Feed({
      "[2025-09-18 09:25:53] ERROR base_events.py:1758: Exception in callback LocalBackend._prepare_backend_for_training.<locals>.done_callback(<Task cancell...ckend.py:287>>) at /workspace/verl/ART/src/art/local/backend.py:278",
      "handle: <Handle LocalBackend._prepare_backend_for_training.<locals>.done_callback(<Task cancell...ckend.py:287>>) at /workspace/verl/ART/src/art/local/backend.py:278>",
      "Traceback (most recent call last):",
      "  File \"/usr/lib/python3.10/asyncio/tasks.py\", line 234, in __step",
      "    result = coro.throw(exc)",
      "asyncio.exceptions.CancelledError",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"/usr/lib/python3.10/asyncio/events.py\", line 80, in _run",
      "    self._context.run(self._callback, *self._args)",
      "asyncio.exceptions.CancelledError",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: later",
  });
  ASSERT_GE(h.events.size(), 2u);
  for (size_t i = 0; i + 1 < h.events.size(); ++i) {
    EXPECT_TRUE(h.events[i].ignored) << "event " << i << " at line " << h.events[i].where.line << ": "
                                     << h.events[i].message;
  }
  EXPECT_EQ(h.events.back().where.line, 16);
  EXPECT_FALSE(h.events.back().ignored);

  Harness prose;  // the words inside a message of its own are no report of the loop's handler
  prose.Feed({
      "ERROR: Exception in callbackless mode",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: bad",
  });
  ASSERT_FALSE(prose.events.empty());
  EXPECT_FALSE(prose.events.back().ignored);
}

TEST(EventBuilderTest, ATracebackUnderTaskExceptionNeverRetrievedIsMarkedReportedLate) {
  // asyncio reports a task that died unobserved when the task is collected (DistServe's engine loop after
  // a Ctrl-C): "Task exception was never retrieved", the future (wrapped by the terminal over lines), the
  // traceback, and a RayTaskError's remote traceback re-printed right under it. Both are the earlier
  // failure; a traceback further on is an ordinary one.
  Harness h;
  h.Feed({
      "Task exception was never retrieved",
      "future: <Task finished name='Task-19' coro=<LLMEngine.start_all_event_loops() done, defined at /w/engine.py:244> exception=RayTaskErr$",
      "r(RuntimeError)(RuntimeError('CUDA error: no kernel image is available for execution on the device\\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertion$",
      ".\\n'))>",
      "Traceback (most recent call last):",
      "  File \"/w/engine.py\", line 251, in start_all_event_loops",
      "    await asyncio.gather(",
      "ray.exceptions.RayTaskError(RuntimeError): ray::ParaWorker.step() (pid=50578, ip=172.17.0.3)",
      "  File \"/w/worker.py\", line 217, in step",
      "    generated_tokens_ids = self.model.forward(",
      "RuntimeError: CUDA error: no kernel image is available for execution on the device",
      "some other output",
      "more output",
      "more output",
      "more output",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: later",
  });
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_EQ(h.events[0].where.line, 8);
  EXPECT_TRUE(h.events[0].reported_late);
  EXPECT_EQ(h.events[1].where.line, 11);
  EXPECT_TRUE(h.events[1].reported_late) << "the remote traceback continues the same report";
  EXPECT_EQ(h.events[2].where.line, 18);
  EXPECT_FALSE(h.events[2].reported_late);
  EXPECT_FALSE(h.events[0].ignored) << "the exception was not swallowed: the task died of it";
}

TEST(EventBuilderTest, ALoggingErrorAndItsCallStackAreMarkedIgnored) {
  // CPython logging's Handler.handleError: a record the stream could not take (a cp1252 console and a
  // "✓") prints "--- Logging error ---", the traceback, "Call stack:" with the logging call's frames,
  // then "Message:" and "Arguments:"; the logging module swallowed it. A traceback later is an ordinary one.
  Harness h;
  h.Feed({
      "--- Logging error ---",
      "Traceback (most recent call last):",
      "  File \"C:\\Python313\\Lib\\logging\\__init__.py\", line 1153, in emit",
      "    stream.write(msg + self.terminator)",
      "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2713' in position 40",
      "Call stack:",
      "  File \"C:\\w\\train.py\", line 326, in <module>",
      "    main()",
      "  File \"C:\\w\\train.py\", line 166, in main",
      "    logging.info(f\"done\")",
      "Message: 'done'",
      "Arguments: ()",
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "ValueError: bad",
  });
  ASSERT_FALSE(h.events.empty());
  for (size_t i = 0; i + 1 < h.events.size(); ++i) {
    EXPECT_TRUE(h.events[i].ignored) << h.events[i].message;
  }
  EXPECT_EQ(h.events.back().where.line, 15);
  EXPECT_FALSE(h.events.back().ignored);

  Harness far;  // a "Call stack:" far from any logging error is no marker
  far.Feed({"Call stack:", "  File \"/w/train.py\", line 3, in <module>", "    main()", "ValueError: bad"});
  ASSERT_EQ(far.events.size(), 1u);
  EXPECT_FALSE(far.events[0].ignored);
}

TEST(EventBuilderTest, ATracebackThroughABenignFrameIsMarkedIgnored) {
  // multiprocessing's _run_finalizers catches each finalizer's exception and prints it (rules/python.yaml
  // marks that frame benign): the traceback was handled.
  Harness h;
  h.Feed({
             "Traceback (most recent call last):",
             "  File \"/usr/lib/python3.10/multiprocessing/util.py\", line 300, in _run_finalizers",
             "    finalizer()",
             "  File \"/usr/lib/python3.10/multiprocessing/synchronize.py\", line 87, in _cleanup",
             "    sem_unlink(name)",
             "FileNotFoundError: [Errno 2] No such file or directory",
         },
         {2});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_TRUE(h.events[0].ignored);
}

TEST(EventBuilderTest, ACompilerDiagnosticOnAWarningRecordIsNoEvent) {
  // vLLM 0.19 (tests/real vllm-v019-flashinfer-...-served-healthy): FlashInfer's all-reduce JIT build fails and
  // vLLM logs nvcc's output on WARNING records, then falls back and serves. The same diagnostic unprefixed, or on
  // an ERROR record, is still a compiler error.
  Harness h;
  h.Feed({
      "(Worker_TP0 pid=3438584) WARNING 04-20 00:18:19 [flashinfer_all_reduce.py:72] Failed to initialize FlashInfer "
      "All Reduce workspace: Ninja build failed. Ninja output:",
      "(Worker_TP0 pid=3438584) WARNING 04-20 00:18:19 [flashinfer_all_reduce.py:72] /f/trtllm_allreduce_fusion.cuh(446): "
      "error: namespace \"std\" has no member \"optional\"",
      "(Worker_TP0 pid=3438584) WARNING 04-20 00:18:19 [flashinfer_all_reduce.py:72] ninja: build stopped: subcommand "
      "failed.",
  });
  EXPECT_TRUE(h.events.empty()) << h.events.size() << " " << h.events[0].message;

  Harness plain;
  plain.Feed({"/f/trtllm_allreduce_fusion.cuh(446): error: namespace \"std\" has no member \"optional\""});
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_EQ(plain.events[0].kind, EventKind::kCompilerError);

  Harness error_record;
  error_record.Feed({"(Worker_TP0 pid=3438584) ERROR 04-20 00:18:19 [build.py:72] /f/x.cuh(446): error: namespace "
                     "\"std\" has no member \"optional\""});
  ASSERT_EQ(error_record.events.size(), 1u);
  EXPECT_FALSE(error_record.events[0].message.empty());
}

TEST(EventBuilderTest, ATracebackUnderAChainMarkerAfterBuildOutputIsChained) {
  // flashinfer's JIT (sglang GB10 log, tests/real): the RuntimeError's message
  // carries ninja's output, whose compiler error closes it; the chain goes on.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/usr/lib/python3.12/subprocess.py\", line 571, in run",
      "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
      "",
      "The above exception was the direct cause of the following exception:",
      "",
      "Traceback (most recent call last):",
      "  File \"/f/cpp_ext.py\", line 354, in run_ninja",
      "RuntimeError: Ninja build failed. Ninja output:",
      "/f/vec_dtypes.cuh(117): error: no suitable conversion function from \"const Params::DTypeKV\" to \"float\" "
      "exists",
      "ninja: build stopped: subcommand failed.",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      "  File \"/s/cuda_graph_runner.py\", line 716, in __init__",
      "Exception: Capture cuda graph failed: Ninja build failed. Ninja output:",
  });
  ASSERT_GE(h.events.size(), 3u);
  EXPECT_EQ(h.events.front().where.line, 3);
  EXPECT_FALSE(h.events.front().chained);
  EXPECT_EQ(h.events.front().chain.size(), 2u);  // the direct cause joins it
  EXPECT_EQ(h.events.back().where.line, 17);
  EXPECT_TRUE(h.events.back().chained);
}

TEST(EventBuilderTest, ATracebackWithoutAChainMarkerIsNotChained) {
  Harness h;
  h.Feed({"Traceback (most recent call last):", "  File \"/w/a.py\", line 1, in <module>", "ValueError: a",
          "ninja: build stopped: subcommand failed.", "",
          "Traceback (most recent call last):", "  File \"/w/b.py\", line 1, in <module>", "ValueError: b"});
  ASSERT_EQ(h.events.size(), 3u);
  EXPECT_FALSE(h.events.back().chained);
}

TEST(EventBuilderTest, IndentedTracebackEndsAtItsOwnIndent) {
  // pip re-prints a build's output indented by six spaces (tests/real/flash-attn-pip-build-requires-cuda-11-6):
  // the exception line sits at the Traceback line's indent, its frames deeper.
  Harness h;
  h.Feed({
      "      Traceback (most recent call last):",
      "        File \"<string>\", line 2, in <module>",
      "        File \"/tmp/pip-install-2m2j8ref/flash-attn/setup.py\", line 117, in <module>",
      "          raise RuntimeError(",
      "      RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.",
      "      ",
      "      [end of output]",
  });
  ASSERT_GE(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
  EXPECT_EQ(h.events[0].message, "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.");
  EXPECT_EQ(h.events[0].where.line, 5);
  EXPECT_FALSE(h.events[0].cut_off);
}

TEST(EventBuilderTest, FramesAWarningListsAreNoTraceback) {
  Harness h;
  h.Feed({
      "/venv/torch/autograd/graph.py:869: UserWarning: Error detected in SqrtBackward0. Traceback of forward call "
      "that caused the error:",
      "  File \"/work/ddp.py\", line 53, in <module>",
      "    main()",
      "  File \"/work/ddp.py\", line 37, in main",
      "    loss = loss + torch.sqrt(out - 100.0).sum()",
      " (Triggered internally at /pytorch/torch/csrc/autograd/python_anomaly_mode.cpp:122.)",
      "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
      "Traceback (most recent call last):",
      "  File \"/work/ddp.py\", line 39, in main",
      "    loss.backward()",
      "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].kind, EventKind::kPythonTraceback);
  EXPECT_EQ(h.events[0].message, "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.");
  // Without the warning line the same frames are a paste that starts inside a traceback.
  Harness g;
  g.Feed({
      "  File \"/work/ddp.py\", line 37, in main",
      "    loss = loss + torch.sqrt(out - 100.0).sum()",
      "ValueError: math domain error",
  });
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].message, "ValueError: math domain error");
}

TEST(EventBuilderTest, AnErrorHeaderWhoseTextWasWrappedOntoTheNextLineIsNoEvent) {
  Harness h;
  h.Feed({
      "E1118 16:11:24.326000 621 site-packages/torch/distributed/elastic/multiprocessing/api.py:882]",
      "failed (exitcode: -11) local_rank: 0 (pid: 655) of binary: /opt/conda/bin/python",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 2);
  EXPECT_NE(h.events[0].message.find("exitcode: -11"), std::string::npos);
}

TEST(EventBuilderTest, OfRepeatedCopiesTheOneWhoseLastErrorSaysWhatFailedIsKept) {
  const std::string head =
      "torch.distributed.DistBackendError: NCCL error in: ../ProcessGroupNCCL.cpp:1691, unhandled system error (run "
      "with NCCL_DEBUG=INFO for details), NCCL version 2.19.3";
  const std::string name = "ncclSystemError: System call (e.g. socket, malloc) or external library call failed. ";
  Harness h;
  h.Feed({head, name, "Last error:", "", head, name,
          "Last error:", "[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].repeats, 1);
  EXPECT_EQ(h.events[0].where.line, 5);
  ASSERT_FALSE(h.events[0].continuation.empty());
  EXPECT_NE(h.events[0].continuation.back().text.find("Proxy Service 2"), std::string::npos);
  // Copies that say as little keep the first printed one.
  Harness g;
  g.Feed({head, name, "Last error:", "", head, name, "Last error:", ""});
  ASSERT_EQ(g.events.size(), 1u);
  EXPECT_EQ(g.events[0].where.line, 1);
}

TEST(EventBuilderTest, AnElisionMarkInsideATracebackIsACutNotItsException) {
  // A paste that left frames out ("...", CJK "。。。") still ends in its exception line.
  for (const char* mark : {"...", "\u3002\u3002\u3002", "\u2026"}) {
    Harness h;
    h.Feed({"Traceback (most recent call last):", "  File \"/w/a.py\", line 1, in <module>", mark,
            "torch.distributed.DistStoreError: wait timeout after 1800000ms"});
    ASSERT_EQ(h.events.size(), 1u) << mark;
    EXPECT_EQ(h.events[0].where.line, 4) << mark;
    EXPECT_EQ(h.events[0].exception, "torch.distributed.DistStoreError") << mark;
  }
}

TEST(EventBuilderTest, AFlattenedTracebackEndsInItsExceptionNotItsFirstSourceLine) {
  // A log console that trims each message drops the traceback's indentation: frames, their source
  // lines and carets all start at column 0 (tests/real/vllm-ray-data-tp2-no-cuda-gpus-...).
  Harness h;
  h.Feed({"Traceback (most recent call last):", "File \"/w/vllm/worker/worker_base.py\", line 573, in execute_method",
          "return run_method(target, method, args, kwargs)", "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
          "File \"/w/torch/cuda/__init__.py\", line 319, in _lazy_init", "torch._C._cuda_init()",
          "RuntimeError: No CUDA GPUs are available"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 7);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
}

TEST(EventBuilderTest, AFlattenedTracebackWithABlankLineAfterEveryLineEndsInItsException) {
  // A paste that lost the indentation and has a blank line after every line
  // (tests/real/vllm-ascend-compose-w8a8-...-double-spaced-paste): the blank line between a frame and
  // its source line keeps the frame pending.
  Harness h;
  h.Feed({"Traceback (most recent call last):", "", "File \"/w/vllm/model_executor/models/qwen2.py\", line 496, in load_weights",
          "", "param = params_dict[name]", "", "~~~~~~~~~~~^^^^^^", "", "KeyError: 'layers.0.mlp.gate_up_proj.deq_scale'"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 9);
  EXPECT_EQ(h.events[0].exception, "KeyError");
}

TEST(EventBuilderTest, AFlattenedFrameWithoutSourceIsFollowedByItsException) {
  // A frame with no source line ("<frozen runpy>", "<string>") may be the last: the exception comes next.
  Harness h;
  h.Feed({"Traceback (most recent call last):", "File \"<string>\", line 1, in <module>",
          "NameError: name 'x' is not defined"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 3);
  EXPECT_EQ(h.events[0].exception, "NameError");
}

TEST(EventBuilderTest, ATracebackLoggedAtWarningLevelIsAnErrorLineNotAFatalOne) {
  // dynamo's "WON'T CONVERT ... due to:" record, torch._logging's header on every line: the exception was
  // handled (dynamo fell back to eager) and the process went on.
  const std::string h = "[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] ";
  Harness w;
  w.Feed({h + "Traceback (most recent call last):", h + "  File \"/a/_base.py\", line 403, in __get_result",
          h + "    raise self._exception", h + "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
          h + "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'", h, h + "Set TORCH_LOGS=\"+dynamo\""});
  ASSERT_EQ(w.events.size(), 1u);
  EXPECT_EQ(w.events[0].kind, EventKind::kErrorLog);
  EXPECT_NE(w.events[0].message.find("BackendCompilerFailed"), std::string::npos) << w.events[0].message;
  // The same traceback under an ERROR header is fatal.
  const std::string err = "[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [ERROR] ";
  Harness e;
  e.Feed({err + "Traceback (most recent call last):", err + "  File \"/a/x.py\", line 3, in f",
          err + "ValueError: boom"});
  ASSERT_EQ(e.events.size(), 1u);
  EXPECT_EQ(e.events[0].kind, EventKind::kPythonTraceback);
}

TEST(EventBuilderTest, ATracebackTypedFromAScreenshotEndsInItsException) {
  // tests/real/megatron-lm-070-rank13-nan-local-grad-norm-assertion: frames at column 0, "Line"
  // capitalised, a curly quote, frame lines wrapped mid-word before their source line.
  Harness h;
  h.Feed({"Traceback (most recent call last):", "File \"pretrain_gpt.py\", line 247, in <module>", "pretrain(",
          "File \"/m/training.py\", Line 274, in pretrain", "iteration = train(",
          "File \"/m/finalize model_grads.py\", Line 113, in finalize mode", "l grads", "model chunk.finish grad sync()",
          "File \u201c/m/param and grad buffer.py\", Line 114, in start_grad_s", "ync", "assert not norm.isnan( ), (",
          "AssertionError: Rank 13: found NaN in local grad norm"});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 12);
  EXPECT_EQ(h.events[0].exception, "AssertionError");
}

TEST(EventBuilderTest, AnUnprefixedLineAfterAPrefixedExceptionIsAnotherProcesssOutput) {
  // tests/real/slurm-deepspeed-2node-cpu-adam-jit-build-failed-rank0-importerror: rank 0's own print
  // under rank 1's exception line is no continuation of rank 1's message.
  Harness h;
  h.Feed({"[rank1]: Traceback (most recent call last):", "[rank1]:   File \"/a/x.py\", line 3, in f",
          "[rank1]: RuntimeError: Error building extension 'cpu_adam'", "Loading extension module cpu_adam..."});
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 3);
  EXPECT_TRUE(h.events[0].continuation.empty());
}

TEST(EventBuilderTest, AnotherRanksCaretRunAtALinesStartDoesNotEndATraceback) {
  // tests/real/torchrun-tacc-stampede3-4-ranks-yaml-config-path-is-a-directory-interleaved: four ranks'
  // tracebacks interleave; one rank's "^^^^" runs on into another's frame and exception lines. Those lines are
  // the traceback's, not its end: the clean exception line after them is.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3546, in <module>",
      "    params = YParams(os.path.abspath(args.yaml_config), args.config)",
      "^^^^^^^  File \"/w/utils/YParams.py\", line 16, in __init__",
      "^^^^^^^^^^^^",
      "^^^IsADirectoryError^: ^[Errno 21] Is a directory: '/w'^",
      "IsADirectoryError: [Errno 21] Is a directory: '/w'",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 7);
  EXPECT_EQ(h.events[0].exception, "IsADirectoryError");
}

TEST(EventBuilderTest, ACleanExceptionAfterACaretRunStillEndsATraceback) {
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/w/train.py\", line 3, in <module>",
      "    main()",
      "^^^^ValueError: bad config",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 4);
  EXPECT_EQ(h.events[0].exception, "ValueError");
}

TEST(EventBuilderTest, ASpacedOutExceptionLineOfInterleavedRanksDoesNotEndATraceback) {
  // tests/real/torchrun-tacc-interleaved-ranks-missing-config: "FileNotFoundError :  [Errno 2] ..." is two
  // ranks' copies of one line run together; the clean copy after it is the exception.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/w/utils/YParams.py\", line 16, in __init__",
      "    with open(yaml_filename) as _file:",
      "FileNotFoundError :  [Errno 2] No such file or directory: '/w/c.yaml' ",
      "      with open(yaml_filename) as _file: ",
      "FileNotFoundError: [Errno 2] No such file or directory: '/w/c.yaml'",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 6);
  EXPECT_EQ(h.events[0].exception, "FileNotFoundError");
}

TEST(EventBuilderTest, AnotherRanksFrameGluedAfterALinesTextDoesNotEndATraceback) {
  // tests/real/deepspeed-8-ranks-flash-attn-not-installed-importerror-interleaved-tracebacks: eight unprefixed
  // ranks print one traceback at once; one rank's source line "main()" runs on into another's frame line, and
  // other ranks' copies of a source line lose their indent. Those lines are debris inside the traceback, not
  // its exception: the clean ImportError line after them is.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "Traceback (most recent call last):",
      "  File \"/w/run/quantize.py\", line 135, in <module>",
      "    main()",
      "main()      File \"/w/run/quantize.py\", line 71, in main",
      "",
      "main()  File \"/w/run/quantize.py\", line 71, in main",
      "",
      "    model = AutoModelForCausalLM.from_pretrained(",
      "  File \"/t/modeling_utils.py\", line 317, in _wrapper",
      "    return func(*args, **kwargs)        ",
      "return func(*args, **kwargs)return func(*args, **kwargs)    ",
      "",
      "return func(*args, **kwargs)",
      "ImportError: FlashAttention2 has been toggled on, but the package flash_attn seems to be not installed.",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 15);
  EXPECT_EQ(h.events[0].exception, "ImportError");
}

TEST(EventBuilderTest, AnExceptionLineThatQuotesAFrameStillEndsATraceback) {
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/w/a.py\", line 3, in <module>",
      "    f()",
      "RuntimeError: worker failed at  File \"/w/b.py\", line 9, in g",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 4);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
}

TEST(EventBuilderTest, AnotherWritersWarningRecordInsideATracebackDoesNotEndIt) {
  // tests/real/trtllm-run-py-mixtral-tp4-max-multimodal-len-prompt-embedding-table-invalid-shape: another
  // rank's "[TensorRT-LLM][WARNING] ..." record lands between a frame line and its source line. It has words
  // like an exception message (": "), but the traceback goes on right under it: the assertion is the exception.
  Harness h;
  h.Feed({
      "Traceback (most recent call last):",
      "  File \"/app/examples/run.py\", line 595, in <module>",
      "[TensorRT-LLM][WARNING] prompt_embedding_table: expected dim[1] = 4096, provided dim[1] = 1024",
      "    main(args)",
      "  File \"/app/examples/run.py\", line 426, in main",
      "    outputs = runner.generate(",
      "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Tensor 'prompt_embedding_table' has invalid shape",
  });
  ASSERT_EQ(h.events.size(), 1u);
  EXPECT_EQ(h.events[0].where.line, 7);
  EXPECT_EQ(h.events[0].exception, "RuntimeError");
}

}  // namespace
}  // namespace faultline::events
