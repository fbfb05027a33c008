// The result of a preflight run: findings (each a check, a severity, the
// numbers, the error the launcher would print and a fix), the estimates, and
// the GPUs it was judged against. Written as text or as JSON
// (faultline.preflight/1, docs/preflight.schema.json) by report_writer.h.
#ifndef FAULTLINE_PREFLIGHT_REPORT_H_
#define FAULTLINE_PREFLIGHT_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::preflight {

enum class Severity { kOk, kWarning, kBlocking };
const char* SeverityName(Severity s);  // "ok", "warning", "blocking"

struct Finding {
  std::string check;  // "gpu-count", "kv-cache", ...
  Severity severity = Severity::kOk;
  std::string message;                    // one line with the numbers
  std::string tool_error;                 // what the launcher would print; empty when nothing
  std::string source;                     // where that text is in the launcher's source
  std::string fix;                        // empty for ok findings
  std::map<std::string, double> numbers;  // the numbers behind the message
};

struct Estimates {
  std::optional<int64_t> gpus_needed;
  std::optional<int64_t> gpus_visible;
  std::optional<double> weights_gib_per_gpu;
  std::optional<double> kv_cache_gib_per_gpu;
  std::optional<int64_t> kv_cache_tokens;
  std::optional<int64_t> max_model_len;
  std::optional<double> activation_gib_per_gpu;
  std::optional<double> gpu_memory_gib;
  std::optional<double> gpu_memory_utilization;
};

struct GpuLine {
  int node_index = 0;
  int cuda_index = 0;
  std::string name;
  std::string uuid;
  double total_gib = 0;
  double used_gib = 0;
  int processes = 0;
};

struct PreflightReport {
  std::string launcher;  // "vllm"
  std::string entry;     // "vllm serve"
  std::string model;
  std::string model_config;     // where config.json came from; empty when not found
  std::string gpu_source;       // "nvml", "nvidia-smi", "plan (--gpus 8 --gpu-memory 48GiB)"
  std::string visible_setting;  // "CUDA_VISIBLE_DEVICES=0,1"
  std::vector<GpuLine> gpus;    // visible GPUs
  std::vector<Finding> findings;
  Estimates estimates;
  std::vector<std::string> notes;

  bool blocking() const;
  void Add(Finding f) { findings.push_back(std::move(f)); }
};

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_REPORT_H_
