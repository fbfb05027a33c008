// faultline dashboard --run-dir runs/<id>: serves a live page of a run (its
// services, samples, phases, logs and diagnosis) and a JSON API, from this
// binary (src/web/). Binds 127.0.0.1:8765 by default; any other address needs
// --dashboard-token (one is generated and printed when it is not given). It
// never starts or stops processes. Runs until Ctrl-C / SIGTERM (exit 0).
#include <pthread.h>
#include <signal.h>

#include <iostream>

#include "cli/cli_support.h"
#include "cli/commands.h"
#include "web/dashboard.h"

namespace faultline::cli {
namespace {

struct DashboardArgs {
  std::string run_dir;
  std::string listen = "127.0.0.1:8765";
  std::string token;
  bool allow_control = false;
};

int RunDashboard(const DashboardArgs& a) {
  // Ctrl-C and SIGTERM are taken by sigwait below, in no other thread: block
  // them before the server's threads start (they inherit the mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto d = web::StartDashboardFor(a.listen, a.run_dir, a.token, a.allow_control, std::cout);
  if (!d.ok()) {
    std::cerr << "faultline: " << d.status().message() << "\n";
    return kExitUsage;
  }
  if (a.allow_control) {
    std::cerr << "faultline: --allow-control: a run directory has no processes "
                 "to control; the stop endpoint "
                 "answers 501 (it is live under `run --dashboard`)\n";
  }
  int sig = 0;
  sigwait(&stop_signals, &sig);
  (*d)->Stop();
  return kExitHealthy;
}

}  // namespace

void AddDashboardCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DashboardArgs>();
  CLI::App* cmd = app.add_subcommand("dashboard", "serve a live web page of a run directory (docs/dashboard.md)");
  cmd->footer(HelpFooter("faultline dashboard --run-dir runs/ --listen 127.0.0.1:8765",
                         "0 stopped with Ctrl-C, 2 usage error or the address is taken"));
  cmd->add_option("--run-dir", args->run_dir, "a run directory (runs/<time>-<name>), or runs/ for the newest run")
      ->required();
  cmd->add_option("--listen", args->listen, "HOST:PORT to serve on (port 0: any free port)")->capture_default_str();
  cmd->add_option("--dashboard-token", args->token,
                  "token every request must carry (?token=, Bearer); required "
                  "off loopback, generated when absent");
  cmd->add_flag("--allow-control", args->allow_control, "let the page stop services (only under run --dashboard)");
  cmd->callback([args, exit_code] { *exit_code = RunDashboard(*args); });
}

FAULTLINE_REGISTER_COMMAND(60, AddDashboardCommand);

}  // namespace faultline::cli
