#include "preflight/calibration.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "preflight/memory_estimate.h"
#include "preflight/model_facts.h"
#include "preflight/units.h"

namespace faultline::preflight {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("{}: cannot read", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Pct(const std::optional<double>& e) { return e ? fmt::format("{:+.1f}%", *e * 100) : "-"; }

}  // namespace

Result<CalibrationSummary> RunCalibration(const std::string& yaml_path, const std::string& models_dir,
                                          double tolerance) {
  CalibrationSummary out;
  out.tolerance = tolerance;
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(yaml_path);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", yaml_path, e.what()));
  }
  if (!doc["points"] || !doc["points"].IsSequence()) {
    return Status::InvalidArgument(fmt::format("{}: no `points` list", yaml_path));
  }
  try {
    for (const YAML::Node& p : doc["points"]) {
      CalibrationRow row;
      row.name = p["name"].as<std::string>();
      row.vllm = p["vllm"].as<std::string>("unknown");
      row.source = p["source"].as<std::string>("");
      std::string config = models_dir + "/" + p["model"].as<std::string>() + "/config.json";
      Result<std::string> text = ReadFile(config);
      if (!text.ok()) return text.status();
      Result<ModelFacts> facts = ParseModelConfig(*text, config);
      if (!facts.ok()) return facts.status();
      MemoryInputs in;
      in.tp = p["tp"].as<int>(1);
      in.pp = p["pp"].as<int>(1);
      in.dp = p["dp"].as<int>(1);
      in.expert_parallel = p["expert_parallel"].as<bool>(false);
      in.gpu_total_bytes = p["gpu_memory_mib"].as<uint64_t>() * 1024 * 1024;
      in.gpu_name = p["gpu_name"].as<std::string>("");
      if (p["utilization"]) in.utilization = p["utilization"].as<double>();
      if (p["max_num_batched_tokens"]) in.max_num_batched_tokens = p["max_num_batched_tokens"].as<int64_t>();
      if (p["max_num_seqs"]) in.max_num_seqs = p["max_num_seqs"].as<int64_t>();
      in.kv_cache_dtype = p["kv_cache_dtype"].as<std::string>("auto");
      in.quantization = p["quantization"].as<std::string>("");
      in.enforce_eager = p["enforce_eager"].as<bool>(false);
      if (p["flashinfer_sampler"]) in.flashinfer_sampler = p["flashinfer_sampler"].as<bool>();
      if (p["estimate_cudagraphs"]) in.estimate_cudagraphs = p["estimate_cudagraphs"].as<bool>();
      if (std::optional<VllmVersion> v = VllmVersion::Parse(row.vllm)) in.vllm_version = *v;
      MemoryEstimate e = EstimateMemory(*facts, in);
      int64_t len = p["max_model_len"].as<int64_t>(facts->derived_max_len);
      row.estimated_weights_gib = e.weights_per_gpu / kGiB;
      row.estimated_kv_gib = e.kv_available_bytes / kGiB;
      row.estimated_tokens = e.TokenCapacity(len);
      double need = e.BytesForRequest(len);
      row.estimated_fits = e.kv_available_bytes > 0 && need <= e.kv_available_bytes;
      row.margin_gib = (e.kv_available_bytes - need) / kGiB;
      row.largest_fitting_len = e.kv_available_bytes > 0 ? e.MaxFittingLen(facts->derived_max_len * 4) : 0;
      if (p["fits"]) {
        row.reported_fits = p["fits"].as<bool>();
        ++out.verdict_points;
        if (*row.reported_fits == row.estimated_fits) ++out.verdict_right;
      }
      const YAML::Node& r = p["reported"];
      if (r["weights_gib"]) {
        row.reported_weights_gib = r["weights_gib"].as<double>();
        row.weights_error = row.estimated_weights_gib / row.reported_weights_gib - 1;
      }
      if (r["kv_cache_gib"]) {
        row.reported_kv_gib = r["kv_cache_gib"].as<double>();
        // A negative budget (vLLM refused to start) has no meaningful ratio:
        // its verdict counts instead.
        if (*row.reported_kv_gib > 0) row.kv_gib_error = row.estimated_kv_gib / *row.reported_kv_gib - 1;
      }
      if (r["kv_cache_tokens"]) {
        row.reported_tokens = r["kv_cache_tokens"].as<int64_t>();
        row.tokens_error = static_cast<double>(row.estimated_tokens) / static_cast<double>(*row.reported_tokens) - 1;
      }
      auto count = [&](const std::optional<double>& err, double tol, int* points, int* within) {
        if (!err) return;
        ++*points;
        if (std::abs(*err) <= tol) ++*within;
      };
      count(row.tokens_error, tolerance, &out.tokens_points, &out.tokens_within);
      count(row.kv_gib_error, tolerance, &out.kv_gib_points, &out.kv_gib_within);
      count(row.weights_error, 0.05, &out.weights_points, &out.weights_within);
      out.rows.push_back(std::move(row));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", yaml_path, e.what()));
  }
  return out;
}

std::string CalibrationSummary::Table() const {
  std::string t =
      "| launch | vLLM | weights GiB reported / estimated (err) | "
      "KV GiB reported / estimated (err) | KV tokens "
      "reported / estimated (err) | fits: vLLM / preflight "
      "(margin) |\n|---|---|---|---|---|---|\n";
  std::vector<double> tok_errs;
  for (const CalibrationRow& r : rows) {
    std::string kv = r.reported_kv_gib ? fmt::format("{:.2f} / {:.2f} ({})", *r.reported_kv_gib, r.estimated_kv_gib,
                                                     Pct(r.kv_gib_error))
                                       : fmt::format("- / {:.2f}", r.estimated_kv_gib);
    std::string tok = r.reported_tokens ? fmt::format("{} / {} ({})", WithCommas(*r.reported_tokens),
                                                      WithCommas(r.estimated_tokens), Pct(r.tokens_error))
                                        : fmt::format("- / {}", WithCommas(r.estimated_tokens));
    std::string w = r.weights_error ? fmt::format("{:.2f} / {:.2f} ({})", r.reported_weights_gib,
                                                  r.estimated_weights_gib, Pct(r.weights_error))
                                    : fmt::format("- / {:.2f}", r.estimated_weights_gib);
    std::string verdict =
        fmt::format("{} / {} ({:+.2f} GiB)", r.reported_fits ? (*r.reported_fits ? "yes" : "no") : "-",
                    r.estimated_fits ? "yes" : "no", r.margin_gib);
    t += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.name, r.vllm, w, kv, tok, verdict);
    if (r.tokens_error) tok_errs.push_back(std::abs(*r.tokens_error));
  }
  std::sort(tok_errs.begin(), tok_errs.end());
  auto pct = [](int a, int b) { return b ? 100.0 * a / b : 0.0; };
  t += fmt::format(
      "\n{} points. KV tokens within ±{:.0f}%: {}/{} ({:.0f}%); KV GiB within "
      "±{:.0f}%: {}/{} ({:.0f}%); "
      "weights within ±5%: {}/{}; fit / no-fit verdicts right: {}/{}.\n",
      rows.size(), tolerance * 100, tokens_within, tokens_points, pct(tokens_within, tokens_points), tolerance * 100,
      kv_gib_within, kv_gib_points, pct(kv_gib_within, kv_gib_points), weights_within, weights_points, verdict_right,
      verdict_points);
  if (!tok_errs.empty()) {
    t += fmt::format(
        "KV-token |error|: median {:.1f}%, 90th percentile "
        "{:.1f}%, worst {:.1f}%.\n",
        tok_errs[tok_errs.size() / 2] * 100,
        tok_errs[(tok_errs.size() * 9) / 10 < tok_errs.size() ? (tok_errs.size() * 9) / 10 : tok_errs.size() - 1] * 100,
        tok_errs.back() * 100);
  }
  return t;
}

}  // namespace faultline::preflight
