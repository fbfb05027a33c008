#include "cli/cli_support.h"

#include <algorithm>
#include <map>
#include <sstream>

#ifndef FAULTLINE_VERSION
#define FAULTLINE_VERSION "0.0.0"
#endif
#ifndef FAULTLINE_GIT_COMMIT
#define FAULTLINE_GIT_COMMIT "unknown"
#endif

namespace faultline::cli {

std::string VersionString() { return std::string(FAULTLINE_VERSION) + " (git " + FAULTLINE_GIT_COMMIT + ")"; }

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string Suggest(std::string_view word, const std::vector<std::string>& candidates) {
  // Compare without the dashes of a flag, so "--jsn" is one edit from "--json".
  auto bare = [](std::string_view s) {
    while (!s.empty() && s.front() == '-') s.remove_prefix(1);
    return s;
  };
  std::string_view w = bare(word);
  const int limit = std::min(2, std::max(1, static_cast<int>(w.size()) / 2));
  std::string best;
  int best_distance = limit + 1;
  for (const auto& c : candidates) {
    int distance = EditDistance(w, bare(c));
    // A prefix of a long name ("--explai") is a typo too.
    if (w.size() >= 3 && bare(c).substr(0, w.size()) == w) distance = std::min(distance, 1);
    if (distance < best_distance) {
      best_distance = distance;
      best = c;
    }
  }
  return best;
}

namespace {

std::string OneLine(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      if (!out.empty() && out.back() != ';') out += "; ";
      continue;
    }
    out += c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

std::vector<std::string> FlagNames(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

bool IsFlagOf(const CLI::App& cmd, const std::string& token) {
  std::string name = token.substr(0, token.find('='));
  for (const auto& n : FlagNames(cmd)) {
    if (n == name) return true;
  }
  // -abc: a cluster of short flags, or -fVALUE.
  if (name.size() > 2 && name[0] == '-' && name[1] != '-') {
    for (const auto& n : FlagNames(cmd)) {
      if (n == name.substr(0, 2)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<const CLI::App*> VisibleCommands(const CLI::App& root) {
  return root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); });
}

std::string DescribeParseError(const CLI::App& root, const CLI::ParseError& e, const std::vector<std::string>& args) {
  std::vector<std::string> command_names;
  for (const CLI::App* c : VisibleCommands(root)) command_names.push_back(c->get_name());
  auto first = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.empty() || a[0] != '-'; });
  if (first == args.end()) {
    for (const auto& a : args) {
      if (!IsFlagOf(root, a)) {
        std::string hint = Suggest(a, FlagNames(root));
        if (!hint.empty()) return "unknown flag '" + a + "'; did you mean '" + hint + "'?";
        return "unknown flag '" + a + "'; 'faultline help' lists the commands";
      }
    }
    return "no command given; 'faultline help' lists the commands";
  }
  const CLI::App* cmd = nullptr;
  for (const CLI::App* c : root.get_subcommands([](const CLI::App*) { return true; })) {
    if (c->check_name(*first)) cmd = c;
  }
  if (cmd == nullptr) {
    std::string hint = Suggest(*first, command_names);
    if (!hint.empty()) return "unknown command '" + *first + "'; did you mean '" + hint + "'?";
    return "unknown command '" + *first + "'; 'faultline help' lists the commands";
  }
  const std::string name = cmd->get_name();
  for (auto it = first + 1; it != args.end() && *it != "--"; ++it) {
    const std::string& a = *it;
    if (a.size() < 2 || a[0] != '-' || IsFlagOf(*cmd, a)) continue;
    if (a[1] >= '0' && a[1] <= '9') continue;  // a negative number given as a value
    std::string flag = a.substr(0, a.find('='));
    std::string hint = Suggest(flag, FlagNames(*cmd));
    if (!hint.empty()) return name + ": unknown flag '" + flag + "'; did you mean '" + hint + "'?";
    return name + ": unknown flag '" + flag + "'; 'faultline help " + name + "' lists its flags";
  }
  return name + ": " + OneLine(e.what()) + " ('faultline help " + name + "')";
}

std::string HelpFooter(std::string_view example, std::string_view exit_codes) {
  std::string out = "\nExample:\n  ";
  out += example;
  out += "\n\nExit codes: ";
  out += exit_codes;
  out += "\n";
  return out;
}

namespace {

// What man and the completions need to know about one flag.
struct FlagInfo {
  std::vector<std::string> names;  // "--json", "-f"
  std::string description;
  bool takes_value = false;
  std::string value_name;            // "TEXT", "UINT"
  std::vector<std::string> choices;  // from CLI::IsMember
};

struct CommandInfo {
  std::string name;
  std::string description;
  std::string footer;
  std::vector<FlagInfo> flags;
  std::vector<std::string> positionals;  // names, e.g. "inputs"
};

std::vector<CommandInfo> Describe(const CLI::App& root) {
  std::vector<CommandInfo> out;
  for (const CLI::App* c : VisibleCommands(root)) {
    CommandInfo info;
    info.name = c->get_name();
    info.description = c->get_description();
    info.footer = c->get_footer();
    for (const CLI::Option* o : c->get_options()) {
      if (!o->nonpositional()) {
        info.positionals.push_back(o->get_name());
        continue;
      }
      FlagInfo f;
      for (const auto& l : o->get_lnames()) f.names.push_back("--" + l);
      for (const auto& s : o->get_snames()) f.names.push_back("-" + s);
      f.description = o->get_description();
      f.takes_value = o->get_expected_max() != 0;  // flags expect no value
      std::string type = o->get_type_name();
      f.value_name = type.substr(0, type.find(':'));
      if (f.value_name.empty()) f.value_name = "VALUE";
      size_t open = type.find('{'), close = type.rfind('}');
      if (open != std::string::npos && close != std::string::npos && close > open) {
        std::stringstream ss(type.substr(open + 1, close - open - 1));
        std::string choice;
        while (std::getline(ss, choice, ',')) f.choices.push_back(choice);
      }
      info.flags.push_back(std::move(f));
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::string Roff(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

}  // namespace

std::string ManPage(const CLI::App& root) {
  std::ostringstream m;
  m << ".TH FAULTLINE 1 \"\" \"faultline " << FAULTLINE_VERSION << "\" \"User Commands\"\n";
  m << ".SH NAME\nfaultline \\- finds the line at fault when a distributed GPU "
       "job fails or stalls\n";
  m << ".SH SYNOPSIS\n.B faultline\n.I command\n[\\fIflags\\fR] "
       "[\\fIarguments\\fR]\n.br\n"
       ".B faultline help\n[\\fIcommand\\fR]\n";
  m << ".SH DESCRIPTION\n" << Roff(root.get_description()) << "\n";
  m << ".SH COMMANDS\n";
  for (const CommandInfo& c : Describe(root)) {
    m << ".SS \"faultline " << c.name;
    for (const auto& p : c.positionals) m << " " << p;
    m << "\"\n" << Roff(c.description) << "\n";
    for (const FlagInfo& f : c.flags) {
      m << ".TP\n";
      for (size_t i = 0; i < f.names.size(); ++i) m << (i ? ", " : "") << "\\fB" << Roff(f.names[i]) << "\\fR";
      if (f.takes_value) {
        m << " \\fI" << (f.choices.empty() ? Roff(f.value_name) : Roff(Join(f.choices, "|"))) << "\\fR";
      }
      m << "\n" << Roff(f.description) << "\n";
    }
    // The footer: "Example:\n  CMD\n\nExit codes: ...".
    std::istringstream footer(c.footer);
    std::string line;
    bool in_example = false;
    while (std::getline(footer, line)) {
      if (line.empty()) continue;
      if (line == "Example:") {
        m << ".PP\nExample:\n";
        in_example = true;
      } else if (in_example && line.rfind("  ", 0) == 0) {
        m << ".RS\n.B " << Roff(line.substr(2)) << "\n.RE\n";
      } else {
        in_example = false;
        m << ".PP\n" << Roff(line) << "\n";
      }
    }
  }
  m << ".SH EXIT STATUS\n0: healthy (or the command succeeded); 1: a failure "
       "or stall was diagnosed, or a check "
       "failed; 2: usage or input error (one line on stderr, prefixed "
       "faultline:).\n";
  m << ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nnever colour.\n.TP\n.B "
       "FORCE_COLOR\\fR, \\fBCLICOLOR_FORCE\n"
       "colour even when stdout is not a terminal (unless NO_COLOR is set or "
       "the value is 0).\n";
  m << ".SH SEE ALSO\nfaultline help \\fIcommand\\fR; the README and docs/ of "
       "the source tree.\n";
  return m.str();
}

namespace {

std::string BashCompletion(const std::vector<CommandInfo>& commands) {
  std::ostringstream b;
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  b << "# bash completion for faultline (generated by faultline completion "
       "bash)\n";
  b << "_faultline() {\n  local cur=\"${COMP_WORDS[COMP_CWORD]}\" "
       "prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n";
  b << "  local flags=\"\" valued=\"\" choices=\"\"\n";
  b << "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W \"" << Join(names, " ")
    << " --help --version\" -- \"$cur\"))\n    return\n  fi\n";
  b << "  case \"${COMP_WORDS[1]}\" in\n";
  for (const auto& c : commands) {
    std::vector<std::string> all, valued;
    for (const auto& f : c.flags) {
      for (const auto& n : f.names) {
        all.push_back(n);
        if (f.takes_value) valued.push_back(n);
      }
    }
    b << "    " << c.name << ")\n      flags=\"" << Join(all, " ") << "\"\n      valued=\"" << Join(valued, " ")
      << "\"\n      case \"$prev\" in\n";
    for (const auto& f : c.flags) {
      if (f.choices.empty()) continue;
      b << "        " << Join(f.names, "|") << ") choices=\"" << Join(f.choices, " ") << "\" ;;\n";
    }
    b << "      esac\n      ;;\n";
  }
  if (!names.empty()) {
    b << "    help) COMPREPLY=($(compgen -W \"" << Join(names, " ") << "\" -- \"$cur\")); return ;;\n";
  }
  b << "  esac\n";
  b << "  if [ -n \"$choices\" ]; then COMPREPLY=($(compgen -W \"$choices\" -- "
       "\"$cur\")); return; fi\n";
  b << "  if [[ \" $valued \" == *\" $prev \"* ]]; then COMPREPLY=($(compgen "
       "-f -- \"$cur\")); return; fi\n";
  b << "  if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- "
       "\"$cur\"));"
       " else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n}\n";
  b << "complete -o filenames -o bashdefault -F _faultline faultline\n";
  return b.str();
}

// Inside a zsh _arguments spec in single quotes.
std::string ZshEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else if (c == '[' || c == ']' || c == ':' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string ZshCompletion(const std::vector<CommandInfo>& commands) {
  std::ostringstream z;
  z << "#compdef faultline\n# zsh completion for faultline (generated by "
       "faultline completion zsh)\n";
  z << "_faultline() {\n  local -a commands\n  commands=(\n";
  for (const auto& c : commands) z << "    '" << ZshEscape(c.name) << ":" << ZshEscape(c.description) << "'\n";
  z << "  )\n  if (( CURRENT == 2 )); then\n    _describe -t commands "
       "'faultline command' commands\n    return\n  fi\n";
  z << "  local cmd=$words[2]\n  shift words\n  (( CURRENT-- ))\n  case $cmd "
       "in\n";
  for (const auto& c : commands) {
    z << "    " << c.name << ")\n      _arguments -s";
    for (const auto& f : c.flags) {
      std::string action;
      if (f.takes_value) {
        action = f.choices.empty() ? ":" + ZshEscape(f.value_name) + ":_files"
                                   : ":" + ZshEscape(f.value_name) + ":(" + Join(f.choices, " ") + ")";
      }
      std::string excl = f.names.size() > 1 ? "(" + Join(f.names, " ") + ")" : "";
      std::string names = f.names.size() > 1 ? "{" + Join(f.names, ",") + "}" : f.names[0];
      if (f.names.size() > 1) {
        z << " \\\n        '" << excl << "'" << names << "'[" << ZshEscape(f.description) << "]" << action << "'";
      } else {
        z << " \\\n        '" << names << "[" << ZshEscape(f.description) << "]" << action << "'";
      }
    }
    z << " \\\n        '*:file:_files'\n      ;;\n";
  }
  z << "    help) _describe -t commands 'faultline command' commands ;;\n  "
       "esac\n}\n_faultline \"$@\"\n";
  return z.str();
}

std::string FishEscape(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string FishCompletion(const std::vector<CommandInfo>& commands) {
  std::ostringstream f;
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  f << "# fish completion for faultline (generated by faultline completion "
       "fish)\n";
  f << "complete -c faultline -f\n";
  f << "complete -c faultline -l version -d 'print the version'\n";
  for (const auto& c : commands) {
    f << "complete -c faultline -n __fish_use_subcommand -a " << c.name << " -d " << FishEscape(c.description) << "\n";
  }
  f << "complete -c faultline -n '__fish_seen_subcommand_from help' -a " << FishEscape(Join(names, " ")) << "\n";
  for (const auto& c : commands) {
    std::string cond = "-n '__fish_seen_subcommand_from " + c.name + "'";
    if (!c.positionals.empty()) f << "complete -c faultline " << cond << " -F\n";
    for (const auto& fl : c.flags) {
      f << "complete -c faultline " << cond;
      for (const auto& n : fl.names) f << (n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1));
      if (fl.takes_value) f << (fl.choices.empty() ? " -r -F" : " -x -a " + FishEscape(Join(fl.choices, " ")));
      f << " -d " << FishEscape(fl.description) << "\n";
    }
  }
  return f.str();
}

}  // namespace

std::string CompletionScript(const CLI::App& root, std::string_view shell) {
  auto commands = Describe(root);
  if (shell == "bash") return BashCompletion(commands);
  if (shell == "zsh") return ZshCompletion(commands);
  if (shell == "fish") return FishCompletion(commands);
  return "";
}

}  // namespace faultline::cli
