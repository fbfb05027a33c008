// Where a live command's metrics go: `--metrics HOST:PORT` serves /metrics
// (read-only, no token: it is meant to be scraped by Prometheus from other
// hosts), and `--metrics-textfile DIR` rewrites DIR/faultline_<run_id>.prom
// atomically (a temporary file renamed over it), as node_exporter's textfile
// collector expects. Both render one RunMetrics, fed by Apply().
//
// The end of a run is worth a scrape: Finish() writes the final textfile and,
// when the endpoint was scraped at least once, keeps serving until the next
// scrape after the end (bounded by `linger`), so Prometheus sees the death or
// stall before the series go stale.
#ifndef FAULTLINE_WEB_METRICS_OUTPUT_H_
#define FAULTLINE_WEB_METRICS_OUTPUT_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "util/status.h"
#include "web/metrics.h"

namespace faultline::metrics {

// hostname, version, and SchedulerLabels() of this process's environment.
Identity LocalIdentity(std::string run_id, std::string pipeline, std::vector<std::string> phases);

// faultline_<run_id>.prom, with every character outside [A-Za-z0-9_.-] as '_'.
std::string TextfileName(const std::string &run_id);

class MetricsOutput {
 public:
  // listen: "" for no endpoint, else HOST:PORT (PORT 0: any free port);
  // textfile_dir: "" for none. Prints the endpoint's URL on `out`.
  // kInvalidArgument for a bad address or a missing directory, kIoError when
  // the port is taken.
  static Result<std::unique_ptr<MetricsOutput>> Start(const std::string &listen, const std::string &textfile_dir,
                                                      Identity identity, std::ostream &out);
  virtual ~MetricsOutput() = default;

  // One faultline.live/1 record; rewrites the textfile (status records at most
  // once a second).
  virtual void Apply(const nlohmann::json &record) = 0;
  // The final textfile, the last scrape (at most `linger` seconds), then the
  // endpoint stops.
  virtual void Finish(double linger_seconds) = 0;
  virtual const RunMetrics &metrics() const = 0;
  virtual int port() const = 0;  // 0 without an endpoint
};

}  // namespace faultline::metrics

#endif  // FAULTLINE_WEB_METRICS_OUTPUT_H_
