// A small HTTP/1.1 server for faultline's local endpoints (the dashboard,
// /metrics), built on libmicrohttpd's event loop (epoll, a fixed pool of
// polling threads): an idle, slow or streaming connection costs a socket and
// a few KiB, never a thread, so a thousand of them do not delay anyone else,
// and Stop() closes every connection at once whatever the clients do.
//
// Every request passes one gate before its body is read: with a token, the
// token (`Authorization: Bearer T`, `?token=T`, or the cookie); without one,
// the Host header must name this machine's loopback (localhost, 127.0.0.0/8,
// ::1, case-insensitive) or the bound address: no DNS rebinding. Bodies are
// capped (413 before reading when Content-Length says more). Every answer
// carries nosniff, no-referrer, and frame-ancestors 'none'.
#ifndef FAULTLINE_WEB_HTTP_SERVER_H_
#define FAULTLINE_WEB_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace faultline::web {

struct HttpRequest {
  std::string method;  // GET, POST...
  std::string path;    // without the query
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& lower_name) const;
  bool has_param(const std::string& key) const { return query.count(key) > 0; }
  std::string param(const std::string& key) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // A stream (e.g. Server-Sent Events) instead of `body`: called when the
  // stream starts and after each HttpServer::WakeStreams(); returns the text
  // to send, "" for nothing now (the connection waits for the next wake), or
  // nullopt to end the stream. Called on a server thread; must not block.
  std::function<std::optional<std::string>()> stream;
  // Called once on a server thread when the exchange ends: true when the
  // whole response was handed to the socket, false when the connection ended
  // first (a client that gave up, Stop()). Must not block.
  std::function<void(bool sent)> on_done;

  static HttpResponse Json(int status, std::string body);
  static HttpResponse Error(int status,
                            const std::string& message);  // {"error": message}
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpLimits {
  unsigned max_connections = 4096;  // more are refused at accept
  unsigned idle_timeout_s = 30;     // a connection with no traffic this long is
                                    // closed (streams: while they send)
  size_t max_body_bytes = 16 << 10;
  size_t max_request_bytes = 32 << 10;  // request line + headers (per-connection memory)
  unsigned threads = 2;                 // polling threads; handlers run on them and should be quick
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";          // a numeric address, or localhost
  int port = 0;                            // 0: any free port
  std::string token;                       // non-empty: required on every request
  std::string cookie = "faultline_token";  // the cookie that carries the token (set on ?token=)
  // No Host check without a token: for a read-only endpoint other machines
  // must reach by any name (/metrics scraped by Prometheus; run --metrics).
  bool any_host = false;
  HttpLimits limits;
  HttpHandler handler;
};

// Whether `host` (a listen address) is loopback: 127.0.0.0/8, ::1, localhost.
bool IsLoopbackAddress(const std::string& host);
// The Host check of a token-less server: `host_header` ("name", "name:port",
// "[v6]:port") names loopback or `bound_host`. Case-insensitive, exact.
bool HostHeaderAllowed(const std::string& host_header, const std::string& bound_host);

class HttpServer {
 public:
  // Binds (kIoError: "port N is in use; ..." or not an address of this
  // machine; kInvalidArgument: not an IP address) and starts serving on
  // background threads.
  static Result<std::unique_ptr<HttpServer>> Start(HttpServerOptions options);
  virtual ~HttpServer() = default;

  virtual int port() const = 0;
  // Calls every waiting stream again. Not after Stop().
  virtual void WakeStreams() = 0;
  // Closes the listener and every connection; returns in milliseconds.
  virtual void Stop() = 0;
};

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_HTTP_SERVER_H_
