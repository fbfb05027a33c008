#include "web/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

namespace faultline::web {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string CookieValue(const std::string& header, const std::string& name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    size_t b = part.find_first_not_of(' ');
    if (b != std::string::npos) part = part.substr(b);
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

// A numeric address (or localhost) -> sockaddr.
bool ToSockaddr(const std::string& host, int port, sockaddr_storage* out, socklen_t* len) {
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (Lower(h) == "localhost") h = "127.0.0.1";
  std::memset(out, 0, sizeof(*out));
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, h.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, h.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// One stream's state, shared by the content reader (a server thread) and
// WakeStreams (any thread). `suspended` is true exactly while the connection
// is suspended: MHD forbids resuming one that is not.
struct Stream {
  std::mutex mu;
  MHD_Connection* conn = nullptr;
  std::function<std::optional<std::string>()> next;
  std::string pending;
  size_t sent = 0;
  bool suspended = false;
};

class Server;

struct StreamHandle {
  Server* server;
  std::shared_ptr<Stream> stream;
};

// What one request has collected across the access handler's calls.
struct Pending {
  HttpRequest req;
  bool too_large = false;
  bool set_cookie = false;
  std::function<void(bool)> on_done;
};

class Server : public HttpServer {
 public:
  explicit Server(HttpServerOptions o) : options_(std::move(o)) {}
  ~Server() override { Stop(); }

  Status Init() {
    sockaddr_storage addr;
    socklen_t len;
    if (!ToSockaddr(options_.host, options_.port, &addr, &len)) {
      return Status::InvalidArgument(fmt::format("{}: not an IP address (e.g. 127.0.0.1)", options_.host));
    }
    RaiseFileLimit(options_.limits.max_connections + 64);
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return Status::IoError(fmt::format("socket: {}", std::strerror(errno)));
    // SO_REUSEADDR (a restart may bind over TIME_WAIT) but never
    // SO_REUSEPORT: a second server on a port in use must fail, not share it.
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (addr.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      int e = errno;
      close(fd);
      if (e == EADDRINUSE) {
        return Status::IoError(fmt::format("port {} is in use; try {}:0 (any free port)", options_.port,
                                           addr.ss_family == AF_INET6 ? "[::1]" : "127.0.0.1"));
      }
      if (e == EADDRNOTAVAIL)
        return Status::IoError(fmt::format("{} is not an address of this machine", options_.host));
      return Status::IoError(fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, std::strerror(e)));
    }
    if (listen(fd, 4096) != 0) {
      int e = errno;
      close(fd);
      return Status::IoError(fmt::format("listen: {}", std::strerror(e)));
    }
    sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (addr.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    MHD_OptionItem ops[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&Quiet), nullptr},
        {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(options_.limits.max_connections), nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(options_.limits.idle_timeout_s), nullptr},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(options_.limits.max_request_bytes), nullptr},
        {MHD_OPTION_THREAD_POOL_SIZE, static_cast<intptr_t>(std::max(1u, options_.limits.threads)), nullptr},
        {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Completed), this},
        {MHD_OPTION_END, 0, nullptr}};
    daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &Access, this, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
    if (!daemon_) {
      close(fd);
      return Status::IoError(fmt::format("cannot serve on {}:{}", options_.host, port_));
    }
    return Status::Ok();
  }

  int port() const override { return port_; }

  void WakeStreams() override {
    std::vector<std::shared_ptr<Stream>> all;
    {
      std::lock_guard<std::mutex> lock(streams_mu_);
      all.assign(streams_.begin(), streams_.end());
    }
    for (const auto& s : all) {
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->suspended) {
        s->suspended = false;
        MHD_resume_connection(s->conn);
      }
    }
  }

  void Stop() override {
    if (!daemon_) return;
    stopping_ = true;  // streams end instead of waiting again
    WakeStreams();
    // Quiesced, MHD hands the listening socket back instead of closing it.
    MHD_socket fd = MHD_quiesce_daemon(daemon_);
    MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
    if (fd != MHD_INVALID_SOCKET) close(fd);
  }

 private:
  static void Quiet(void*, const char*, va_list) {}

  static void RaiseFileLimit(rlim_t want) {
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
    rl.rlim_cur = std::min(want, rl.rlim_max);
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  static MHD_Result CollectHeader(void* cls, MHD_ValueKind, const char* key, const char* value) {
    if (key) static_cast<HttpRequest*>(cls)->headers[Lower(key)] = value ? value : "";
    return MHD_YES;
  }
  static MHD_Result CollectArg(void* cls, MHD_ValueKind, const char* key, const char* value) {
    if (key) static_cast<HttpRequest*>(cls)->query[key] = value ? value : "";
    return MHD_YES;
  }

  static void Completed(void*, MHD_Connection*, void** req_cls, MHD_RequestTerminationCode code) {
    auto* p = static_cast<Pending*>(*req_cls);
    if (p && p->on_done) p->on_done(code == MHD_REQUEST_TERMINATED_COMPLETED_OK);
    delete p;
    *req_cls = nullptr;
  }

  // The gate: nullopt when the request may go on.
  std::optional<HttpResponse> Gate(Pending* p) {
    const HttpRequest& req = p->req;
    if (options_.token.empty()) {
      if (!options_.any_host && !HostHeaderAllowed(req.header("host"), options_.host)) {
        return HttpResponse::Error(403, "this server answers only to its loopback address (127.0.0.1, localhost)");
      }
      return std::nullopt;
    }
    std::string given;
    std::string auth = req.header("authorization");
    if (auth.rfind("Bearer ", 0) == 0) {
      given = auth.substr(7);
    } else if (req.has_param("token")) {
      given = req.param("token");
    } else {
      given = CookieValue(req.header("cookie"), options_.cookie);
    }
    if (!ConstantTimeEquals(given, options_.token)) {
      return HttpResponse::Error(401, "a token is required: open the URL faultline printed (…/?token=…)");
    }
    p->set_cookie = req.has_param("token");
    return std::nullopt;
  }

  MHD_Result Queue(MHD_Connection* c, HttpResponse r, bool set_cookie) {
    MHD_Response* resp;
    if (r.stream) {
      auto* h = new StreamHandle{this, std::make_shared<Stream>()};
      h->stream->conn = c;
      h->stream->next = std::move(r.stream);
      {
        std::lock_guard<std::mutex> lock(streams_mu_);
        streams_.insert(h->stream);
      }
      resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, &ReadStream, h, &FreeStream);
    } else {
      resp = MHD_create_response_from_buffer(r.body.size(), r.body.data(), MHD_RESPMEM_MUST_COPY);
    }
    if (!resp) return MHD_NO;
    bool has_csp = false;
    for (const auto& [k, v] : r.headers) {
      MHD_add_response_header(resp, k.c_str(), v.c_str());
      has_csp = has_csp || Lower(k) == "content-security-policy";
    }
    MHD_add_response_header(resp, "Content-Type", r.content_type.c_str());
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    if (!has_csp)
      MHD_add_response_header(resp, "Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
    if (set_cookie) {
      std::string cookie = fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict", options_.cookie, options_.token);
      MHD_add_response_header(resp, "Set-Cookie", cookie.c_str());
    }
    MHD_Result ret = MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
    MHD_destroy_response(resp);
    return ret;
  }

  static MHD_Result Access(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                           const char* upload, size_t* upload_size, void** req_cls) {
    auto* self = static_cast<Server*>(cls);
    try {
      return self->Handle(c, url, method, upload, upload_size, req_cls);
    } catch (const std::exception& e) {
      return self->Queue(c, HttpResponse::Error(500, e.what()), false);
    } catch (...) {
      return MHD_NO;
    }
  }

  MHD_Result Handle(MHD_Connection* c, const char* url, const char* method, const char* upload, size_t* upload_size,
                    void** req_cls) {
    auto* p = static_cast<Pending*>(*req_cls);
    if (!p) {
      // The first call: the headers are in, nothing of the body is read yet.
      p = new Pending;
      *req_cls = p;
      p->req.method = method ? method : "";
      p->req.path = url ? url : "/";
      MHD_get_connection_values(c, MHD_HEADER_KIND, &CollectHeader, &p->req);
      MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &CollectArg, &p->req);
      if (auto refused = Gate(p)) return Queue(c, std::move(*refused), false);
      std::string length = p->req.header("content-length");
      if (!length.empty()) {
        errno = 0;
        char* end = nullptr;
        unsigned long long n = std::strtoull(length.c_str(), &end, 10);
        if (errno != 0 || n > options_.limits.max_body_bytes) {
          return Queue(c,
                       HttpResponse::Error(
                           413, fmt::format("request bodies are limited to {} bytes", options_.limits.max_body_bytes)),
                       false);
        }
      }
      return MHD_YES;
    }
    if (*upload_size != 0) {
      if (p->req.body.size() + *upload_size > options_.limits.max_body_bytes) {
        p->too_large = true;
      } else {
        p->req.body.append(upload, *upload_size);
      }
      *upload_size = 0;
      return MHD_YES;
    }
    if (p->too_large) {
      return Queue(c,
                   HttpResponse::Error(
                       413, fmt::format("request bodies are limited to {} bytes", options_.limits.max_body_bytes)),
                   false);
    }
    HttpResponse r = options_.handler ? options_.handler(p->req) : HttpResponse::Error(404, "not found");
    p->on_done = std::move(r.on_done);
    return Queue(c, std::move(r), p->set_cookie);
  }

  static ssize_t ReadStream(void* cls, uint64_t, char* buf, size_t max) {
    auto* h = static_cast<StreamHandle*>(cls);
    Stream& s = *h->stream;
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.sent == s.pending.size()) {
      s.pending.clear();
      s.sent = 0;
      if (h->server->stopping_) return MHD_CONTENT_READER_END_OF_STREAM;
      std::optional<std::string> more;
      try {
        more = s.next();
      } catch (...) {
        more = std::nullopt;
      }
      if (!more) return MHD_CONTENT_READER_END_OF_STREAM;
      s.pending = std::move(*more);
      if (s.pending.empty()) {
        s.suspended = true;
        MHD_suspend_connection(s.conn);
        return 0;
      }
    }
    size_t n = std::min(max, s.pending.size() - s.sent);
    std::memcpy(buf, s.pending.data() + s.sent, n);
    s.sent += n;
    return static_cast<ssize_t>(n);
  }

  static void FreeStream(void* cls) {
    auto* h = static_cast<StreamHandle*>(cls);
    {
      std::lock_guard<std::mutex> lock(h->server->streams_mu_);
      h->server->streams_.erase(h->stream);
    }
    delete h;
  }

  HttpServerOptions options_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex streams_mu_;
  std::set<std::shared_ptr<Stream>> streams_;
};

}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::param(const std::string& key) const {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers.push_back({"Cache-Control", "no-store"});
  return r;
}

HttpResponse HttpResponse::Error(int status, const std::string& message) {
  return Json(status,
              nlohmann::json({{"error", message}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool IsLoopbackAddress(const std::string& host) {
  std::string h = Lower(host);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

bool HostHeaderAllowed(const std::string& host_header, const std::string& bound_host) {
  std::string name = Lower(host_header);
  if (name.empty()) return false;
  if (name[0] == '[') {
    size_t close = name.find(']');
    if (close == std::string::npos) return false;
    std::string rest = name.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || rest.find_first_not_of("0123456789", 1) != std::string::npos)) return false;
    name = name.substr(0, close + 1);
  } else if (size_t colon = name.find(':'); colon != std::string::npos) {
    if (name.find_first_not_of("0123456789", colon + 1) != std::string::npos) return false;
    name = name.substr(0, colon);
  }
  if (IsLoopbackAddress(name)) return true;
  std::string bound = Lower(bound_host);
  if (bound.size() > 2 && bound.front() == '[') bound = bound.substr(1, bound.size() - 2);
  if (name.size() > 2 && name.front() == '[') name = name.substr(1, name.size() - 2);
  return !bound.empty() && bound != "0.0.0.0" && bound != "::" && name == bound;
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerOptions options) {
  if (options.port < 0 || options.port > 65535) return Status::InvalidArgument("port: 0..65535");
  auto s = std::make_unique<Server>(std::move(options));
  Status st = s->Init();
  if (!st.ok()) return st;
  return std::unique_ptr<HttpServer>(std::move(s));
}

}  // namespace faultline::web
