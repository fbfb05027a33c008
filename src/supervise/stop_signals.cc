#include "supervise/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

namespace faultline::supervise {
namespace {

int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_count = 0;

void OnSignal(int sig) {
  g_signal = sig;
  g_count = g_count + 1;
  char c = 1;
  (void)!write(g_pipe[1], &c, 1);
}

}  // namespace

int InstallStopSignals() {
  if (g_pipe[0] >= 0) return g_pipe[0];
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  return g_pipe[0];
}

int StopSignalReceived() { return g_signal; }

int StopSignalCount() { return g_count; }

}  // namespace faultline::supervise
