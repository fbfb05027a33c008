// The memory model against what vLLM itself printed at startup: each
// calibration point (tests/fixtures/calibration/vllm_startup.yaml) names a
// launch (model config, GPU, flags, vLLM release) and the figures vLLM
// logged ("Model loading took", "Available KV cache memory", "GPU KV cache
// size"). Used by calibration_test.cc and by
// `faultline preflight --calibration FILE`, which prints the table.
#ifndef FAULTLINE_PREFLIGHT_CALIBRATION_H_
#define FAULTLINE_PREFLIGHT_CALIBRATION_H_

#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace faultline::preflight {

struct CalibrationRow {
  std::string name, vllm, source;
  double reported_weights_gib = 0, estimated_weights_gib = 0;
  std::optional<double> reported_kv_gib;
  double estimated_kv_gib = 0;
  std::optional<int64_t> reported_tokens;
  int64_t estimated_tokens = 0;
  // Relative errors (estimated / reported - 1); absent when not reported.
  std::optional<double> weights_error, kv_gib_error, tokens_error;
  // Whether one request of max_model_len fits (vLLM started), as the source
  // says and as preflight predicts; margin_gib = KV budget - need.
  std::optional<bool> reported_fits;
  bool estimated_fits = false;
  double margin_gib = 0;
  int64_t largest_fitting_len = 0;
};

struct CalibrationSummary {
  std::vector<CalibrationRow> rows;
  int tokens_points = 0, tokens_within = 0;  // within the tolerance
  int kv_gib_points = 0, kv_gib_within = 0;
  int weights_points = 0, weights_within = 0;
  int verdict_points = 0, verdict_right = 0;
  double tolerance = 0.10;
  std::string Table() const;  // Markdown table plus the error distribution
};

// Reads the calibration YAML; model configs are
// `models_dir/<model>/config.json`.
Result<CalibrationSummary> RunCalibration(const std::string& yaml_path, const std::string& models_dir,
                                          double tolerance = 0.10);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_CALIBRATION_H_
