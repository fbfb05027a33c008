#include <unistd.h>

#include <cstdlib>

#include <fmt/color.h>
#include <fmt/format.h>

#include "report/printers.h"

namespace faultline::report {

bool ShouldColor(const std::string& when, int fd) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return ::isatty(fd) == 1;
}

namespace {

class Styler {
 public:
  explicit Styler(bool color) : color_(color) {}
  std::string Label(std::string_view s) const { return Paint(fmt::format("{:<10}", s), fmt::emphasis::bold); }
  std::string Red(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::bright_red) | fmt::emphasis::bold); }
  std::string Yellow(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::yellow)); }
  std::string Green(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::green) | fmt::emphasis::bold); }
  std::string Dim(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::bright_black)); }

 private:
  std::string Paint(std::string_view s, fmt::text_style style) const {
    return color_ ? fmt::format(style, "{}", s) : std::string(s);
  }
  bool color_;
};

std::string DescribeProcess(const ProcessRef& p) {
  if (p.tag.empty()) return "unprefixed output";
  std::string s = fmt::format("process {}", p.tag);
  if (!p.parent.empty()) s += fmt::format(" (under {})", p.parent);
  return s;
}

// Wraps text at width, indenting continuation lines.
std::string Wrap(const std::string& text, size_t width, size_t indent) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  return out + line;
}

}  // namespace

void PrintText(const TriageReport& r, const TextOptions& opt, std::ostream& out) {
  Styler st(opt.color);
  constexpr size_t kIndent = 12;
  auto row = [&](std::string_view label, const std::string& value) {
    out << "  " << st.Label(label) << Wrap(value, 96, kIndent) << "\n";
  };
  if (r.root_cause) {
    const RootCause& rc = *r.root_cause;
    out << st.Red("root cause") << "  " << rc.message << "\n";
    row("where", fmt::format("{}:{}, {}", rc.where.file, rc.where.line, DescribeProcess(rc.process)));
    if (!rc.explanation.empty()) row("why", rc.explanation);
    if (!rc.fix.empty()) row("fix", rc.fix);
    if (!rc.same_error_in.empty()) {
      std::string list;
      for (const auto& p : rc.same_error_in) list += (list.empty() ? "" : ", ") + (p.empty() ? std::string("unprefixed") : p);
      row("also in", list);
    }
    if (r.cascade_total > 0) {
      std::string firsts;
      for (size_t i = 0; i < r.cascade.size() && i < 2; ++i) {
        std::string m = r.cascade[i].message;
        if (m.size() > 60) {  // cut at a word, not inside one
          size_t cut = m.rfind(' ', 60);
          m = m.substr(0, cut == std::string::npos || cut < 30 ? 60 : cut) + " ...";
        }
        firsts += (i ? "; " : "") + m;
      }
      row("cascade", fmt::format("{} later error(s) are consequences ({}{})", r.cascade_total, firsts,
                                 r.cascade_total > 2 ? "; ..." : ""));
    }
    row("rule", rc.rule ? *rc.rule + (rc.category.empty() ? "" : " (" + rc.category + ")")
                        : std::string("none: an unknown error, found by log structure"));
  } else if (r.verdict == Verdict::kStalled) {
    out << st.Yellow("stalled") << "     the log ends without an error"
        << (r.phases_never_reached.empty() ? "" : " before the job was ready") << "\n";
    if (r.last_line) row("last line", fmt::format("{}:{}: {}", r.last_line->file, r.last_line->line, r.last_line->text.substr(0, 200)));
  } else {
    out << st.Green("healthy") << "     no failure found\n";
  }
  std::string phase = fmt::format("reached: {}", r.last_phase.value_or("unknown"));
  if (!r.phases_never_reached.empty() && r.verdict != Verdict::kHealthy) {
    phase += fmt::format("; never: {}", r.phases_never_reached.front());
  }
  row("phase", phase);
  for (const auto& h : r.stall_hints) row("hint", h);
  if (r.root_cause && !r.root_cause->context.empty()) {
    out << "\n" << st.Dim("evidence") << "\n";
    const auto& ctx = r.root_cause->context;
    size_t start = ctx.size() > 12 && !opt.explain ? ctx.size() - 12 : 0;
    if (start > 0) out << st.Dim(fmt::format("  ... {} earlier line(s)", start)) << "\n";
    for (size_t i = start; i < ctx.size(); ++i) {
      const auto& l = ctx[i];
      bool key = l.line == r.root_cause->where.line && l.file == r.root_cause->where.file;
      std::string loc = fmt::format("{}:{}", l.file, l.line);
      out << "  " << (key ? st.Red(loc) : st.Dim(loc)) << "  " << (key ? st.Red(l.text) : l.text) << "\n";
    }
  }
  if (opt.explain) {
    if (r.root_cause) {
      out << "\n" << st.Dim("why this line") << "\n";
      for (const auto& w : r.root_cause->why) out << "  - " << w << "\n";
    }
    if (!r.cascade.empty()) {
      out << "\n" << st.Dim("cascade") << "\n";
      for (const auto& c : r.cascade) {
        out << "  " << st.Dim(fmt::format("{}:{}", c.where.file, c.where.line)) << "  " << c.message.substr(0, 160) << "\n"
            << "      " << st.Dim(c.reason) << "\n";
      }
    }
  }
  if (r.template_total > 0) {
    out << "\n" << st.Dim(fmt::format("what this log is made of ({} templates over {} lines)", r.template_total,
                                       r.total_lines))
        << "\n";
    for (const auto& t : r.common_templates) out << fmt::format("  {:>9}  {}\n", t.count, t.text.substr(0, 140));
    if (!r.rare_templates.empty()) {
      out << st.Dim("  rarest:") << "\n";
      for (const auto& t : r.rare_templates) out << fmt::format("  {:>9}  {}\n", t.count, t.text.substr(0, 140));
    }
  }
  for (const auto& w : r.warnings) out << st.Yellow("warning") << "  " << w << "\n";
}

}  // namespace faultline::report
