// SIGINT / SIGTERM / SIGHUP as an event: InstallStopSignals() sets handlers
// that write to a self-pipe, so the supervisor's poll() wakes on Ctrl-C and
// stops everything cleanly instead of dying mid-way.
#ifndef FAULTLINE_SUPERVISE_STOP_SIGNALS_H_
#define FAULTLINE_SUPERVISE_STOP_SIGNALS_H_

namespace faultline::supervise {

// Returns the read end of the self-pipe (readable once a signal came).
// Idempotent.
int InstallStopSignals();
// The last stop signal received, 0 if none.
int StopSignalReceived();
// How many stop signals arrived so far (a second Ctrl-C kills at once).
int StopSignalCount();

}  // namespace faultline::supervise

#endif  // FAULTLINE_SUPERVISE_STOP_SIGNALS_H_
