// A bare HTTP/1.1 client over loopback sockets for the web tests: each call
// is one blocking step (connect, send, read until), so a test can stop a
// client anywhere in an exchange, as slow or hostile clients do.
#ifndef FAULTLINE_WEB_TEST_HTTP_CLIENT_H_
#define FAULTLINE_WEB_TEST_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace faultline::web::test_http {

inline int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline void SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Reads until `until` appears, the peer closes, or `timeout_ms` passes.
inline std::string ReadUntil(int fd, const std::string& until, int timeout_ms) {
  std::string out;
  using Clock = std::chrono::steady_clock;
  auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < end && out.find(until) == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
    if (poll(&p, 1, std::max(left, 1)) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// One request on a fresh connection; the whole answer (Connection: close).
inline std::string Get(int port, const std::string& path, const std::string& host = "127.0.0.1", int timeout_ms = 5000) {
  int fd = Connect(port);
  if (fd < 0) return "";
  SendAll(fd, "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
  std::string r = ReadUntil(fd, "\x01never", timeout_ms);
  close(fd);
  return r;
}

}  // namespace faultline::web::test_http

#endif  // FAULTLINE_WEB_TEST_HTTP_CLIENT_H_
