// The dashboard server: a local web page and JSON API for one run directory,
// served by the faultline binary itself (http_server.h, libmicrohttpd; the page's HTML, CSS
// and JS are embedded at build time). A watcher thread re-reads the run
// directory once a second (a few stat calls when nothing changed) and pushes
// a Server-Sent Event to open pages when something did. The server is
// http_server.h: limits, the token/Host gate, event-driven connections.
//
// Safety: binds 127.0.0.1 by default. Any other address needs a token (one is
// generated when none is given); with a token every request must carry it
// (`Authorization: Bearer T`, `?token=T`, or the cookie the page gets). No
// endpoint starts or stops anything unless allow_control is set AND the
// embedding command (run --dashboard) supplied a stop hook.
//
// Endpoints: docs/dashboard-api.md.
#ifndef FAULTLINE_WEB_DASHBOARD_H_
#define FAULTLINE_WEB_DASHBOARD_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "util/status.h"

namespace faultline::web {

struct DashboardOptions {
  // A run directory, or a runs/ directory: then the newest run inside it is
  // served, switching when a newer one appears (what `run --dashboard` needs,
  // since the run directory is made after the server starts).
  std::string run_dir;
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port
  std::string token;  // required on every request when non-empty
  bool allow_control = false;
  // Stops one service (SIGTERM to its tree); only reachable with allow_control.
  std::function<Status(const std::string& service)> stop_service;
  double refresh_seconds = 1.0;
};

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost; IsLoopbackAddress).
bool IsLoopbackHost(const std::string& host);
// "HOST:PORT", "[::1]:PORT", ":PORT" or "PORT" (host 127.0.0.1) -> host, port.
bool ParseListenAddress(const std::string& text, std::string* host, int* port);
// Whether `listen` parses and its port can be bound now (a probe, closed at
// once): what `run --dashboard` checks before starting anything.
Status CheckListenAddress(const std::string& listen);
// 32 hex digits from /dev/urandom.
std::string GenerateToken();

class Dashboard {
 public:
  // Checks the options (a non-loopback host without a token is refused:
  // callers generate one first), binds, and starts serving on background
  // threads. Errors: kInvalidArgument (options), kIoError (bind).
  static Result<std::unique_ptr<Dashboard>> Start(DashboardOptions options);
  virtual ~Dashboard() = default;

  virtual int port() const = 0;
  // http://HOST:PORT/ (with ?token=... when there is one).
  virtual std::string url() const = 0;
  // Blocks until Stop() (from another thread or a signal handler's thread).
  virtual void Wait() = 0;
  virtual void Stop() = 0;
};

// What `dashboard` and `run --dashboard` share: parses `listen` (HOST:PORT),
// generates a token off loopback when `token` is empty, starts the server on
// `run_dir`, and prints the URL (and a generated token) on `out`:
//   faultline: dashboard of runs/... at http://127.0.0.1:8765/
// kInvalidArgument for a bad address; Start's errors otherwise.
Result<std::unique_ptr<Dashboard>> StartDashboardFor(const std::string& listen, const std::string& run_dir,
                                                     std::string token, bool allow_control, std::ostream& out);

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_DASHBOARD_H_
