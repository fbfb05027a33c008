// --format github: GitHub Actions workflow commands
// (https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions).
#include <fmt/format.h>

#include <ostream>
#include <string>

#include "report/printers.h"

namespace faultline::report {
namespace {

// A command's message: %, CR and LF escaped.
std::string EscapeData(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

// A property value (file=..., title=...): also : and , escaped.
std::string EscapeProperty(std::string_view s) {
  std::string out;
  for (char c : EscapeData(s)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

// "file=F,line=N," for a line of a named file; stdin has no file to point at.
std::string Location(const LineRef& where) {
  if (where.file.empty() || where.file == "-" || where.file == "<stdin>") return "";
  return fmt::format("file={},line={},", EscapeProperty(where.file), where.line);
}

}  // namespace

void PrintGithub(const TriageReport& r, std::ostream& out) {
  if (r.root_cause) {
    const RootCause& rc = *r.root_cause;
    std::string title = "faultline: root cause";
    if (rc.rule) title += " (" + *rc.rule + ")";
    std::string message = rc.message;
    if (!rc.process.tag.empty()) message += "\nprocess: " + rc.process.tag;
    if (!rc.explanation.empty()) message += "\nwhy: " + rc.explanation;
    if (!rc.fix.empty()) message += "\nfix: " + rc.fix;
    if (r.cascade_total > 0)
      message += fmt::format("\n{} {} are consequences of this one", r.cascade_total, CascadeNoun(r));
    out << "::error " << Location(rc.where) << "title=" << EscapeProperty(title) << "::" << EscapeData(message) << "\n";
    return;
  }
  if (r.verdict == Verdict::kStalled) {
    std::string message = "the log ends without an error";
    if (r.last_phase) message += "; last phase reached: " + *r.last_phase;
    if (!r.phases_never_reached.empty()) message += "; never reached: " + r.phases_never_reached.front();
    for (const auto& h : r.stall_hints) message += "\nhint: " + h;
    out << "::warning " << (r.last_line ? Location(*r.last_line) : "")
        << "title=" << EscapeProperty("faultline: stalled") << "::" << EscapeData(message) << "\n";
    return;
  }
  out << "::notice title=" << EscapeProperty("faultline: healthy")
      << "::" << EscapeData(fmt::format("no failure found in {} line(s)", r.total_lines)) << "\n";
}

}  // namespace faultline::report
