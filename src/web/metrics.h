// /metrics: a run's state in the Prometheus text exposition format (0.0.4):
// per service its state, phase, pid, uptime, exit code, CPU, RSS and seconds
// without progress; per GPU its memory and utilisation; the log sizes; and a
// stall gauge. Label values are escaped as the format requires.
#ifndef FAULTLINE_WEB_METRICS_H_
#define FAULTLINE_WEB_METRICS_H_

#include <string>

#include <nlohmann/json.hpp>

namespace faultline::web {

// `run`: the /api/run object (RunDir::RunJson); `diagnosis`: the diagnosis record or null.
std::string PrometheusText(const nlohmann::json& run, const nlohmann::json& diagnosis);

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_METRICS_H_
