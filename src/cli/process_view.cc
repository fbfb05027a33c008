#include "cli/process_view.h"

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "cli/cli_support.h"
#include "input/byte_source.h"
#include "input/input_files.h"
#include "input/line_cleaner.h"
#include "input/line_reader.h"
#include "parse/line_parser.h"
#include "parse/wrapper.h"
#include "rules/wrapper_loader.h"

namespace faultline::cli {
namespace {

// Display columns of UTF-8 text (code points).
size_t Columns(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// One line as a process wrote it.
struct Line {
  int64_t number = 0;
  std::string text;      // wrappers peeled, cleaned
  std::string key;       // "Worker pid=7506", "qwen-server/rank3", "" when unprefixed
  std::string identity;  // the wrappers' part of the key
  int64_t pid = -1;
  int rank = -1;
};

// Reads one input line by line: cleaned, wrappers peeled (detected from the
// first 200 lines, as triage does), attributed to its process.
class LineWalker {
 public:
  LineWalker(const parse::WrapperSet* wrappers) : wrappers_(wrappers) {}

  // Calls fn for every line; returns a non-ok status when the input cannot
  // be read.
  Status Walk(const input::InputFile& file, const std::function<void(const Line&)>& fn) {
    auto source = file.path == "-" ? input::ByteSourceFromFd(0, "<stdin>") : input::OpenByteSource(file.path);
    if (!source.ok()) return source.status();
    input::LineReader reader(std::move(*source));
    input::LineBlock block;
    std::vector<std::string> head;  // the first lines, held until the wrappers are known
    bool detected = wrappers_ == nullptr;
    int64_t number = 0;
    auto emit = [&](std::string_view raw, int64_t n) {
      Line line;
      line.number = n;
      Attribute(raw, &line);
      fn(line);
    };
    while (reader.NextBlock(&block)) {
      std::string_view data = block.data;
      size_t pos = 0;
      while (pos < data.size()) {
        size_t nl = data.find('\n', pos);
        if (nl == std::string_view::npos) nl = data.size();
        std::string_view raw = data.substr(pos, nl - pos);
        pos = nl + 1;
        ++number;
        if (!detected) {
          head.emplace_back(raw);
          if (head.size() < 200) continue;
          Detect(head);
          detected = true;
          for (size_t i = 0; i < head.size(); ++i) emit(head[i], static_cast<int64_t>(i) + 1);
          head.clear();
          continue;
        }
        emit(raw, number);
      }
    }
    if (!detected) {
      Detect(head);
      for (size_t i = 0; i < head.size(); ++i) emit(head[i], static_cast<int64_t>(i) + 1);
    }
    return reader.status();
  }

  std::string wrappers() const { return stack_.Describe(); }

 private:
  void Detect(const std::vector<std::string>& head) {
    if (wrappers_ == nullptr) return;
    std::vector<std::string> cleaned;
    for (const auto& h : head) {
      std::string c;
      input::CleanLineInto(h, &c);
      cleaned.push_back(std::move(c));
    }
    std::vector<std::string_view> views(cleaned.begin(), cleaned.end());
    stack_ = wrappers_->Detect(views);
  }

  void Attribute(std::string_view raw, Line* line) {
    clean_.clear();
    input::CleanLineInto(raw, &clean_);
    std::string_view text = clean_;
    if (!stack_.empty()) {
      parse::PeeledLine p = stack_.Peel(text, &scratch_);
      // A line no layer marked (a '\r' rewrite kept only the job's text)
      // belongs to the stream of the line before it.
      if (!p.peeled) p.identity = last_identity_, p.rank = last_rank_;
      last_identity_ = p.identity;
      last_rank_ = p.rank;
      line->identity = p.identity;
      line->rank = p.rank;
      inner_.clear();
      input::CleanLineInto(p.inner, &inner_);
      line->text = inner_;
    } else {
      line->text = std::string(text);
    }
    parse::ParsedLine parsed = parse::ParseProcessPrefixes(line->text);
    std::string process(parsed.process);
    if (parsed.pid >= 0) line->pid = parsed.pid;
    if (parsed.rank >= 0) line->rank = parsed.rank;
    if (line->identity.empty()) {
      line->key = process;
    } else {
      line->key = process.empty() ? line->identity : line->identity + "/" + process;
    }
  }

  const parse::WrapperSet* wrappers_;
  parse::WrapperStack stack_;
  std::string clean_, inner_, scratch_;
  std::string last_identity_;
  int last_rank_ = -1;
};

// A line with no process prefix that continues the one before it: a
// traceback's frames and source lines, its exception line, a wrapped message.
bool Continues(const Line& line) {
  const std::string& t = line.text;
  if (t.empty()) return false;
  if (t[0] == ' ' || t[0] == '\t') return true;
  if (t.rfind("Traceback (most recent call last)", 0) == 0) return true;
  // "ValueError: ...", "torch.OutOfMemoryError: ...".
  size_t colon = t.find(": ");
  std::string_view head = std::string_view(t).substr(0, colon == std::string::npos ? 0 : colon);
  bool name = !head.empty() && std::all_of(head.begin(), head.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
  });
  return name && (head.find("Error") != std::string_view::npos || head.find("Exception") != std::string_view::npos);
}

// Compose's palette for service prefixes.
fmt::text_style TagStyle(const std::string& tag) {
  static const fmt::terminal_color kColors[] = {fmt::terminal_color::cyan,          fmt::terminal_color::yellow,
                                                fmt::terminal_color::green,         fmt::terminal_color::magenta,
                                                fmt::terminal_color::blue,          fmt::terminal_color::bright_cyan,
                                                fmt::terminal_color::bright_yellow, fmt::terminal_color::bright_green};
  return fmt::fg(kColors[std::hash<std::string>{}(tag) % (sizeof(kColors) / sizeof(kColors[0]))]);
}

std::string Paint(bool color, fmt::text_style style, std::string_view s) {
  return color ? fmt::format(style, "{}", s) : std::string(s);
}

}  // namespace

bool ProcessMatches(const std::string& tag, const std::string& key, const std::string& identity, int64_t pid,
                    int rank) {
  if (tag.empty()) return false;
  if (key == tag || (!identity.empty() && identity == tag)) return true;
  // "Worker pid=7506" names the line of "qwen-server/Worker pid=7506" too.
  if (key.size() > tag.size() && key.compare(key.size() - tag.size(), tag.size(), tag) == 0 &&
      key[key.size() - tag.size() - 1] == '/') {
    return true;
  }
  if (AllDigits(tag)) {
    int64_t n = std::stoll(tag);
    return pid == n || rank == n;
  }
  if (tag.rfind("pid=", 0) == 0 && AllDigits(tag.substr(4))) return pid == std::stoll(tag.substr(4));
  if (tag.rfind("rank", 0) == 0 && AllDigits(tag.substr(4))) return rank == std::stoi(tag.substr(4));
  return false;
}

int PrintProcessView(const ProcessViewOptions& o, std::ostream& out, std::ostream& err) {
  auto inputs = input::ExpandInputs(o.inputs);
  if (!inputs.ok()) {
    err << "faultline: " << inputs.status().message() << "\n";
    return 2;
  }
  auto wrappers = rules::LoadWrappers(o.rule_files);
  if (!wrappers.ok()) {
    err << "faultline: " << wrappers.status().message() << "\n";
    return 2;
  }
  const auto& files = inputs->files;

  if (!o.around.empty()) {
    // [FILE:]LINE
    std::string file_part, line_part = o.around;
    if (size_t colon = o.around.rfind(':'); colon != std::string::npos) {
      file_part = o.around.substr(0, colon);
      line_part = o.around.substr(colon + 1);
    }
    if (!AllDigits(line_part) || std::stoll(line_part) < 1) {
      err << "faultline: triage: --around '" << o.around << "': expected LINE or FILE:LINE, e.g. vllm.log:41\n";
      return 2;
    }
    const int64_t target = std::stoll(line_part);
    const input::InputFile* file = nullptr;
    for (const auto& f : files) {
      bool named = file_part.empty() || f.display == file_part || f.path == file_part ||
                   (f.display.size() > file_part.size() &&
                    f.display.compare(f.display.size() - file_part.size(), file_part.size(), file_part) == 0 &&
                    f.display[f.display.size() - file_part.size() - 1] == '/');
      if (!named) continue;
      if (file != nullptr) {
        err << "faultline: triage: --around " << o.around << ": name the file (FILE:LINE); "
            << (file_part.empty() ? "there are several inputs" : "several inputs end in " + file_part) << "\n";
        return 2;
      }
      file = &f;
    }
    if (file == nullptr) {
      err << "faultline: triage: --around " << o.around << ": no input named " << file_part << "\n";
      return 2;
    }
    LineWalker walker(wrappers->get());
    std::vector<Line> window;
    int64_t last = 0;
    Status st = walker.Walk(*file, [&](const Line& l) {
      last = l.number;
      if (l.number >= target - o.context && l.number <= target + o.context) window.push_back(l);
    });
    if (!st.ok()) {
      err << "faultline: " << st.message() << "\n";
      return 2;
    }
    if (target > last) {
      err << "faultline: triage: --around " << o.around << ": " << file->display << " has " << last << " line(s)\n";
      return 2;
    }
    size_t tag_width = 0;
    for (const auto& l : window) tag_width = std::max(tag_width, Columns(l.key.empty() ? "-" : l.key));
    out << "  " << Paint(o.color, fmt::fg(fmt::terminal_color::magenta) | fmt::emphasis::bold, file->display) << "\n";
    for (const auto& l : window) {
      std::string tag = l.key.empty() ? "-" : l.key;
      std::string padded = tag + std::string(tag_width - Columns(tag), ' ');
      bool key = l.number == target;
      std::string number = fmt::format("{:>6}", l.number);
      out << "  "
          << (key ? Paint(o.color, fmt::fg(fmt::terminal_color::bright_red) | fmt::emphasis::bold, number)
                  : Paint(o.color, fmt::fg(fmt::terminal_color::bright_black), number))
          << (key ? ": " : "  ") << Paint(o.color, TagStyle(tag), padded) << " | " << l.text << "\n";
    }
    return 0;
  }

  // --process TAG
  int64_t shown = 0;
  std::map<std::string, int64_t> seen;  // process -> lines, to name them when TAG matches none
  for (const auto& f : files) {
    LineWalker walker(wrappers->get());
    bool heading = false, previous_selected = false;
    Status st = walker.Walk(f, [&](const Line& l) {
      bool selected = ProcessMatches(o.process, l.key, l.identity, l.pid, l.rank);
      if (!selected && previous_selected && l.key.empty() && Continues(l)) selected = true;
      if (!l.key.empty()) ++seen[l.key];
      previous_selected = selected;
      if (!selected) return;
      if (!heading) {
        out << "  " << Paint(o.color, fmt::fg(fmt::terminal_color::magenta) | fmt::emphasis::bold, f.display) << "\n";
        heading = true;
      }
      out << "  " << Paint(o.color, fmt::fg(fmt::terminal_color::bright_black), fmt::format("{:>6}", l.number)) << "  "
          << l.text << "\n";
      ++shown;
    });
    if (!st.ok()) {
      err << "faultline: " << st.message() << "\n";
      return 2;
    }
  }
  if (shown == 0) {
    std::vector<std::pair<int64_t, std::string>> by_lines;
    for (const auto& [k, n] : seen) by_lines.push_back({-n, k});
    std::sort(by_lines.begin(), by_lines.end());
    std::vector<std::string> names;
    for (const auto& [n, k] : by_lines) names.push_back(k);
    std::string hint = Suggest(o.process, names);
    std::string list;
    for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 8) list += fmt::format(", ... ({} in all)", names.size());
    err << "faultline: triage: no line of process '" << o.process << "'"
        << (hint.empty() ? "" : "; did you mean '" + hint + "'?")
        << (names.empty() ? std::string(" (the log names no processes)") : " (the log's processes: " + list + ")")
        << "\n";
    return 2;
  }
  return 0;
}

}  // namespace faultline::cli
