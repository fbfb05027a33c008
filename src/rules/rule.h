// Rule: one piece of failure knowledge, loaded from rules/*.yaml.
//
// Code knows rule kinds; rule files know failures (docs/rules.md):
//   signature  names a known error: category, explanation and fix templates
//   cascade    marks a line as a consequence of an earlier failure, with why
//   phase      marks progress: the job reached a phase (ready and training too)
//   fact       captures a value from the log (tensor_parallel_size=2) that
//              explanation/fix templates may use as {name}
//   benign     a line that looks like an error but is known to be harmless
//   stop       the job was stopped from outside (Ctrl-C, SIGTERM, a
//              scheduler's time limit): what follows is its consequence
//   redact     a secret to mask in every report
// Rules never decide *whether* a line is an error; structure does that.
#ifndef FAULTLINE_RULES_RULE_H_
#define FAULTLINE_RULES_RULE_H_

#include <string>
#include <vector>

namespace faultline::rules {

enum class RuleKind { kSignature, kCascade, kPhase, kFact, kBenign, kRedact, kStop };
const char* RuleKindName(RuleKind kind);

struct Rule {
  std::string id;  // stable, "<framework>.<name>"
  RuleKind kind = RuleKind::kSignature;
  std::string pattern;  // RE2 syntax; (?P<name>...) captures feed templates
  std::string framework;
  std::vector<std::string> versions;  // framework versions it was seen in
  std::string category;               // signature: "gpu-visibility", "oom", ...
  std::string title;
  std::string explanation;  // templates: {capture}, {fact}, {a*b}
  std::string fix;
  std::string reason;    // cascade: why a matching line is a consequence
  bool summary = false;  // cascade: a launcher's summary of a failure; the
                         // best evidence left when nothing else failed
  // signature: a generic wrapper error (NCCL "unhandled system error",
  // RayTaskError, "EngineCore failed to start", CalledProcessError) that
  // yields to a more specific error in the same process or causal window.
  bool generic = false;
  // signature: a control-flow exception (a bare StopIteration) that an except clause turns into
  // the real error: in a chained traceback the first exception raised while handling it (the next
  // of the chain) is the event's message; alone it stays the message.
  bool control_flow = false;
  // cascade: the pattern is matched on a traceback's frame lines too, so a
  // traceback raised by a launcher's own code (torch.distributed.run,
  // deepspeed.launcher) is a consequence wherever its message points.
  bool frames = false;
  // stop: the stop ends the job itself (a scheduler's time limit): when the job never reached `ready`
  // (a server that served until then ended normally), the stop's own line is the root cause.
  bool fatal = false;
  // stop: the stop itself says the job hung (a watchdog or a harness gave up waiting): the verdict is
  // stalled even when a server had reached `ready` (without it a stop after ready ends a served run).
  bool hang = false;
  // stop: the line says the process is still waiting (a client retrying its connection), not that it was
  // stopped: it counts as a stop only when the wait is where its process ended (no later phase mark or
  // fatal error of that process).
  bool tentative = false;
  // cascade: the line says the serving engine itself is gone (vLLM's EngineDeadError, "Got fatal signal
  // from worker processes, shutting down", SGLang's sigquit from a child): an error shortly before it in
  // the same process killed the engine, so the front end answering /health with 200 afterwards is no
  // recovery from it.
  bool dead = false;
  // signature: the error leaves the process without its GPU (a driver older than the CUDA runtime): a
  // server that comes up after it serves without the model it was to load, so later ready or training
  // marks of the process are no recovery from it (a completion marker still is).
  bool unrecoverable = false;
  // cascade: the line is a launcher's report that one run of the job's workers ended (torchrun's agent
  // "failed (exitcode: N) local_rank: R", DeepSpeed's "exits with return code = N"). When the job is then
  // seen running again (the same agent reports or is stopped once more, or a phase it had passed is
  // reached again) the launcher relaunched it: the earlier run's errors, stops and phases are superseded
  // and the last run decides (diagnosis/runs.h).
  bool run_end = false;
  // cascade, with run_end: the writer prints the line once per run (a scheduler's job report, LSF's "Exited with
  // exit code N."), so the same rule's line printed again later, with no pid to tell agents apart, ends a later
  // run (several jobs appended to one output file). Without it, unprefixed run ends of one rule may be several
  // processes' ends of one run (DeepSpeed's "Process N exits with return code = 1" per rank).
  bool one_per_run = false;
  // signature: RE2 over a later fatal error's message that this error, when
  // only logged (a WARNING that a native extension failed to import), explains:
  // the fatal "object has no attribute 'rms_norm'" is its consequence.
  std::string explains;
  std::string phase;       // phase: one of the design.md vocabulary
  bool completes = false;  // phase: the job finished (counts as healthy)
  // completes: the marker is final only when no progress of its process follows it, a generic
  // counter's rise included (a test report printed after every epoch is followed by the next
  // epoch's "Train Epoch: 4 [...]"); other markers ignore generic counters after them (an HF
  // Trainer's closing 60/60 bar, NeMo's "step 100" of an async checkpoint save).
  bool final_only = false;
  // completes: the line says only that the job's process ended (a shell's `time` report, a launcher's
  // resource-usage line, W&B's exit footer), which it also prints after a crash: the job ran to its end
  // when no error is the root cause, but the line never makes an earlier error a recovered one.
  bool exit_only = false;
  bool progress = false;  // phase: a generic progress shape; the phase is
                          // reached only when its (?P<step>N) capture rises
  // progress: the counter counts the whole run (a script's "step 40/40", a tqdm bar without an epoch
  // in its description), so its last mark with step == total, not followed by more progress of its
  // process, is the run's end (completes). Not for per-epoch bars (Lightning's "Epoch 3: ... 118/118"
  // ends an epoch, not the run: progress.generic.epoch-bar).
  bool ends_at_total = false;
  // progress: one line of the counter counts, below its total (N < M): a run's progress line with a step
  // word, N/M and a metric (loss, lr) seen once before a stop ("step 3475/4528 ... loss=0.49"); one
  // line cannot rise, but a counter below the run's declared total is the run at step N.
  bool counts_once = false;
  // phase: the line is work a server does too (a collective timed out at a high sequence number): it
  // counts as its phase only when no server reached ready (on a serving engine it is request traffic).
  bool traffic = false;
  // completes: the marker counts only when its (?P<step>) equals a total that a generic counter of its
  // process reached ("=== Epoch 3/3 ===" ... "==end-of-epoch 3=="): the end of the run's declared last
  // unit, not of any unit.
  bool at_total = false;
  // phase: the line starts a batch job's own work (an offline generation's progress bar, a CLI's
  // generation): unlike a server that reached ready, the log must end with a completion marker
  // (a `completes` phase) or the job is stalled in that phase.
  bool batch = false;
  // phase: the line is a frame of a stack dump (py-spy dump, faulthandler): it says where the process
  // was parked when dumped, so it counts even when the dump follows the stop that printed it (a
  // watchdog's timeout, a signal's dump handler).
  bool stack = false;
  // phase: the line is a frame of the traceback that a stop raised (Ctrl-C's KeyboardInterrupt, a
  // collective timeout's RuntimeError): it says where the stopped process was, so it counts only as
  // part of that stop's interrupted stack - never as progress before a root cause or a stop (a
  // traceback's frames follow its error).
  bool interrupted = false;
  // phase: the line only words a phase in the vocabulary any framework uses ("Loading checkpoint ...",
  // "Capturing CUDA graphs", "epoch 3 ... loss=") and names no framework. Such a mark decides the job's
  // phase only when no other phase mark was reached (an unknown framework's log would otherwise stop at
  // process-start); it is never progress, recovery or a run's restart.
  bool fallback = false;
  // phase (process-start): the line is a launcher's or a library's that any program prints (torchrun's
  // banner, DeepSpeed's accelerator probe, a datasets progress bar): it says a process started, not which
  // framework it runs, so a fallback mark still counts after it. Any other framework mark means the log's
  // framework is known and its own marks say where it was: fallback marks then count for nothing.
  bool launcher = false;
  std::string replacement;  // redact: what the secret becomes
  std::vector<std::string> match_samples;
  std::vector<std::string> no_match_samples;
  std::string source;  // "rules/vllm.yaml:12"

  // Every field: the build-time copy of the built-in rules (rule_loader.h SerializeRules) is checked
  // against the YAML with it, so a new field must also be added to VisitRuleFields (rule_loader.cc).
  bool operator==(const Rule&) const = default;
};

// A training mark: its line is the job's latest progress (kept per line, gated by literals). A stop's
// traceback frame (interrupted) only says where the process was.
inline bool IsTrainingMark(const Rule& rule) { return rule.phase == "training" && !rule.interrupted && !rule.fallback; }

}  // namespace faultline::rules

#endif  // FAULTLINE_RULES_RULE_H_
