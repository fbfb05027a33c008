#include <fmt/color.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "report/printers.h"

namespace faultline::report {

bool ShouldColor(const std::string& when, int fd) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  for (const char* force : {"FORCE_COLOR", "CLICOLOR_FORCE"}) {
    const char* v = std::getenv(force);
    if (v && std::string_view(v) != "0") return true;
  }
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return ::isatty(fd) == 1;
}

size_t TerminalWidth(int fd) {
  size_t width = 100;
  struct winsize ws {};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    width = ws.ws_col;
  } else if (const char* columns = std::getenv("COLUMNS")) {
    long c = std::strtol(columns, nullptr, 10);
    if (c > 0) width = static_cast<size_t>(c);
  }
  return std::max<size_t>(width, 40);
}

namespace {

class Styler {
 public:
  explicit Styler(bool color) : color_(color) {}
  std::string Label(std::string_view s) const { return Paint(fmt::format("{:<10}", s), fmt::emphasis::bold); }
  std::string Red(std::string_view s) const {
    return Paint(s, fmt::fg(fmt::terminal_color::bright_red) | fmt::emphasis::bold);
  }
  std::string Yellow(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::yellow)); }
  std::string Green(std::string_view s) const {
    return Paint(s, fmt::fg(fmt::terminal_color::green) | fmt::emphasis::bold);
  }
  std::string Dim(std::string_view s) const { return Paint(s, fmt::fg(fmt::terminal_color::bright_black)); }
  std::string Heading(std::string_view s) const {
    return Paint(s, fmt::fg(fmt::terminal_color::magenta) | fmt::emphasis::bold);
  }

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

// Display columns of UTF-8 text (code points; wide characters count as one).
size_t Columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Wraps text at width columns, indenting continuation lines; a word longer
// than a line (a path, a URL) is cut where the line ends.
std::string Wrap(const std::string& text, size_t width, size_t indent) {
  width = std::max<size_t>(width, 20);
  std::string out, line;
  size_t pos = 0;
  auto flush = [&]() {
    out += line + "\n" + std::string(indent, ' ');
    line.clear();
  };
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    if (!line.empty() && Columns(line) + 1 + Columns(word) > width) flush();
    while (Columns(word) > width) {
      size_t cut = width;
      while (cut > 0 && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) --cut;
      if (!line.empty()) flush();
      line = word.substr(0, cut);
      flush();
      word = word.substr(cut);
    }
    line += (line.empty() ? "" : " ") + word;
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  return out + line;
}

// Lines of one or more files, as ripgrep prints matches: the file name once
// as a heading, then each line number right-aligned before its text. Text
// wraps under itself, not under the number.
class LineListing {
 public:
  // width 0: lines are not wrapped.
  LineListing(const Styler& st, std::ostream& out, size_t width) : st_(st), out_(out), width_(width) {}
  void Add(const LineRef& l, bool key, const std::string& text) {
    if (l.file != file_) {
      out_ << "  " << st_.Heading(l.file == "-" ? std::string("<stdin>") : l.file) << "\n";
      file_ = l.file;
    }
    std::string number = fmt::format("{:>6}", l.line);
    std::string body = width_ == 0 ? text : Wrap(text, width_ > 12 ? width_ - 12 : 20, 12);
    out_ << "  " << (key ? st_.Red(number) : st_.Dim(number)) << (key ? ": " : "  ") << (key ? st_.Red(body) : body)
         << "\n";
  }
  void Note(const std::string& text) { out_ << "            " << st_.Dim(text) << "\n"; }

 private:
  const Styler& st_;
  std::ostream& out_;
  size_t width_;
  std::string file_;
};

}  // namespace

std::string CascadeNoun(const TriageReport& r) {
  return r.cascade_before_root > 0 ? "other error(s)" : "later error(s)";
}

void PrintText(const TriageReport& r, const TextOptions& opt, std::ostream& out) {
  Styler st(opt.color);
  constexpr size_t kIndent = 12;
  const size_t width = std::max<size_t>(opt.width, 40);
  auto row = [&](std::string_view label, const std::string& value) {
    out << "  " << st.Label(label) << Wrap(value, width - kIndent, kIndent) << "\n";
  };
  if (r.root_cause) {
    const RootCause& rc = *r.root_cause;
    out << st.Red("root cause") << "  " << Wrap(rc.message, width - kIndent, kIndent) << "\n";
    row("where", fmt::format("{}:{}, {}", rc.where.file, rc.where.line, DescribeProcess(rc.process)));
    if (!rc.explanation.empty()) row("why", rc.explanation);
    if (!rc.fix.empty()) row("fix", rc.fix);
    if (!rc.same_error_in.empty()) {
      std::string list;
      for (const auto& p : rc.same_error_in)
        list += (list.empty() ? "" : ", ") + (p.empty() ? std::string("unprefixed") : p);
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
      row("cascade", fmt::format("{} {} are consequences ({}{})", r.cascade_total, CascadeNoun(r), firsts,
                                 r.cascade_total > 2 ? "; ..." : ""));
    }
    row("rule", rc.rule ? *rc.rule + (rc.category.empty() ? "" : " (" + rc.category + ")")
                        : std::string("none: an unknown error, found by log structure"));
  } else if (r.verdict == Verdict::kStalled) {
    out << st.Yellow("stalled") << "     the log ends without an error"
        << (r.phases_never_reached.empty() ? "" : " before the job was ready") << "\n";
    if (r.last_line)
      row("last line",
          fmt::format("{}:{}: {}", r.last_line->file, r.last_line->line, r.last_line->text.substr(0, 200)));
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
    LineListing listing(st, out, opt.wrap_lines ? width : 0);
    if (start > 0) out << st.Dim(fmt::format("  ... {} earlier line(s)", start)) << "\n";
    for (size_t i = start; i < ctx.size(); ++i) {
      const auto& l = ctx[i];
      bool key = l.line == r.root_cause->where.line && l.file == r.root_cause->where.file;
      listing.Add(l, key, l.text);
    }
  }
  if (opt.explain) {
    if (r.root_cause) {
      out << "\n" << st.Dim("why this line") << "\n";
      for (const auto& w : r.root_cause->why) out << "  - " << w << "\n";
    }
    if (!r.cascade.empty()) {
      out << "\n" << st.Dim("cascade") << "\n";
      LineListing listing(st, out, opt.wrap_lines ? width : 0);
      for (const auto& c : r.cascade) {
        listing.Add(c.where, false, c.message.substr(0, 160));
        listing.Note(c.reason);
      }
    }
  }
  if (r.template_total > 0) {
    out << "\n"
        << st.Dim(fmt::format("what this log is made of ({} templates over {} lines)", r.template_total, r.total_lines))
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
