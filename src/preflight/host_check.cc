// Things of the host rather than the GPUs: the port the server binds, and
// environment variables that change how NCCL / vLLM behave.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "preflight/check_context.h"

namespace faultline::preflight {
namespace {

// True when something already listens on host:port (bind fails with EADDRINUSE).
bool PortInUse(const std::string& host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (host.empty() || host == "0.0.0.0" || inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
  }
  bool in_use = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno == EADDRINUSE;
  close(fd);
  return in_use;
}

int FreePortNear(const std::string& host, int port) {
  for (int p = port + 1; p < port + 100 && p < 65536; ++p) {
    if (!PortInUse(host, p)) return p;
  }
  return port + 1;
}

}  // namespace

void CheckPort(const CheckContext& ctx, PreflightReport* report) {
  if (!ctx.check_port) return;
  if (ctx.cmd.launcher == Launcher::kTorchrun && ctx.layout.node_rank != 0) return;  // only rank 0 listens
  std::string host = ctx.cmd.Str("host");
  int port = static_cast<int>(ctx.cmd.Int("port", ctx.cmd.launcher == Launcher::kVllm     ? 8000
                                                  : ctx.cmd.launcher == Launcher::kSglang ? 30000
                                                                                          : 29500));
  Finding f;
  f.check = "port";
  f.numbers["port"] = port;
  std::string flag = ctx.cmd.launcher == Launcher::kTorchrun ? "--master-port" : "--port";
  if (PortInUse(host, port)) {
    f.severity = Severity::kBlocking;
    int free_port = FreePortNear(host, port);
    CheckText t = ctx.texts->Render("port", "default",
                                    {{"host", host.empty() ? "0.0.0.0" : host},
                                     {"port", std::to_string(port)},
                                     {"free_port", std::to_string(free_port)}});
    f.message = fmt::format("port {} ({}) is already in use on this machine", port, flag);
    f.tool_error = t.tool_error;
    f.source = t.source;
    f.fix = ctx.cmd.launcher == Launcher::kTorchrun ? fmt::format("--master-port {}", free_port) : t.fix;
  } else {
    f.severity = Severity::kOk;
    f.message = fmt::format("port {} ({}) is free", port, flag);
  }
  report->Add(std::move(f));
}

void CheckEnvironment(const CheckContext& ctx, PreflightReport* report) {
  struct Known {
    const char* name;
    const char* bad_value;
    const char* why;
  };
  static const Known kKnown[] = {
      {"NCCL_P2P_DISABLE", "1", "GPU peer-to-peer copies are off: tensor parallelism goes through host memory"},
      {"NCCL_SHM_DISABLE", "1", "NCCL shared-memory transport is off"},
      {"NCCL_IB_DISABLE", "1", "InfiniBand is off: multi-node traffic uses TCP sockets"},
      {"VLLM_ENABLE_V1_MULTIPROCESSING", "0", "the engine core runs in the API server process"},
      {"CUDA_LAUNCH_BLOCKING", "1", "every CUDA kernel launch is synchronous: startup and serving are slow"},
  };
  for (const Known& k : kKnown) {
    auto it = ctx.env.find(k.name);
    if (it == ctx.env.end() || it->second != k.bad_value) continue;
    if (std::string(k.name).rfind("NCCL_", 0) == 0 && ctx.layout.needed_local <= 1 && ctx.layout.nnodes <= 1) continue;
    Finding f;
    f.check = "environment";
    f.severity = Severity::kWarning;
    f.message = fmt::format("{}={}: {}", k.name, it->second, k.why);
    f.fix = fmt::format("unset {} unless it works around a known problem", k.name);
    report->Add(std::move(f));
  }
  for (const char* name : {"NCCL_SOCKET_IFNAME", "NCCL_DEBUG", "VLLM_HOST_IP", "VLLM_PORT", "MASTER_ADDR",
                           "MASTER_PORT", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "HF_HUB_OFFLINE"}) {
    auto it = ctx.env.find(name);
    if (it != ctx.env.end()) report->notes.push_back(fmt::format("{}={}", name, it->second));
  }
}

}  // namespace faultline::preflight
