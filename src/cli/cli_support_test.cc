#include "cli/cli_support.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace faultline::cli {
namespace {

// Runs a shell command line, returning its exit status and stdout+stderr.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

const std::string kBinary = FAULTLINE_BINARY;

TEST(SuggestTest, OneTypoAwayIsSuggestedAndFarWordsAreNot) {
  std::vector<std::string> commands = {"triage", "preflight", "run", "wait-ready", "watch", "rules", "templates"};
  EXPECT_EQ(Suggest("tirage", commands), "triage");  // a transposition
  EXPECT_EQ(Suggest("prefligt", commands), "preflight");
  EXPECT_EQ(Suggest("wach", commands), "watch");
  EXPECT_EQ(Suggest("deploy", commands), "");
  EXPECT_EQ(Suggest("x", commands), "");
  std::vector<std::string> flags = {"--json", "--explain", "--rules", "--color"};
  EXPECT_EQ(Suggest("--jsno", flags), "--json");
  EXPECT_EQ(Suggest("--colour", flags), "--color");
  EXPECT_EQ(Suggest("--explai", flags), "--explain");
}

TEST(EditDistanceTest, CountsTranspositionsAsOneEdit) {
  EXPECT_EQ(EditDistance("triage", "triage"), 0);
  EXPECT_EQ(EditDistance("tirage", "triage"), 1);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(CliE2eTest, MistypedCommandGetsOneLineWithASuggestion) {
  auto [code, out] = Shell(kBinary + " tirage x.log");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(out, "faultline: unknown command 'tirage'; did you mean 'triage'?\n");
}

TEST(CliE2eTest, MistypedFlagGetsOneLineWithASuggestion) {
  auto [code, out] = Shell(kBinary + " triage --jsno x.log");
  EXPECT_EQ(code, 2);
  EXPECT_EQ(out, "faultline: triage: unknown flag '--jsno'; did you mean '--json'?\n");
}

TEST(CliE2eTest, EveryParseErrorIsOneLinePrefixed) {
  for (const char* args : {"", "triage", "triage --color purple x.log", "--bogus", "watch --pid notanumber",
                           "completion tcsh", "help nosuchcommand"}) {
    auto [code, out] = Shell(kBinary + " " + args);
    EXPECT_EQ(code, 2) << args;
    ASSERT_FALSE(out.empty()) << args;
    EXPECT_EQ(out.rfind("faultline: ", 0), 0u) << args << ": " << out;
    EXPECT_EQ(out.find('\n'), out.size() - 1) << args << ": " << out;
  }
}

TEST(CliE2eTest, VersionNamesTheProjectVersionAndCommit) {
  auto [code, out] = Shell(kBinary + " version");
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out.rfind("faultline " + VersionString(), 0), 0u) << out;
  EXPECT_NE(out.find("(git "), std::string::npos);
  auto [code2, out2] = Shell(kBinary + " --version");
  EXPECT_EQ(code2, 0);
  EXPECT_EQ(out2, out);
}

TEST(CliE2eTest, EachCommandsHelpHasAnExampleAndExitCodes) {
  auto [code, list] = Shell(kBinary + " help");
  ASSERT_EQ(code, 0);
  for (const char* c : {"triage", "preflight", "run", "wait-ready", "watch", "dashboard", "templates", "rules"}) {
    EXPECT_NE(list.find(c), std::string::npos) << c;
    auto [hc, help] = Shell(kBinary + " help " + c);
    EXPECT_EQ(hc, 0) << c;
    EXPECT_NE(help.find("Example:\n  faultline " + std::string(c)), std::string::npos) << c << ":\n" << help;
    EXPECT_NE(help.find("Exit codes: "), std::string::npos) << c;
    auto [fc, flag_help] = Shell(kBinary + " " + c + " --help");
    EXPECT_EQ(fc, 0);
    EXPECT_EQ(flag_help, help) << c;
  }
}

// The completions and the man page come from the command definitions: every
// flag of every command is in each.
TEST(CliE2eTest, CompletionsAndManPageNameEveryFlag) {
  auto [hc, help] = Shell(kBinary + " help triage");
  auto [bc, bash] = Shell(kBinary + " completion bash");
  auto [zc, zsh] = Shell(kBinary + " completion zsh");
  auto [fc, fish] = Shell(kBinary + " completion fish");
  auto [mc, man] = Shell(kBinary + " help --man");
  ASSERT_EQ(bc + zc + fc + mc, 0);
  for (const char* flag : {"--json", "--explain", "--rules", "--no-builtin-rules", "--max-cascade", "--color"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
    EXPECT_NE(bash.find(std::string(" ") + flag), std::string::npos) << flag;
    EXPECT_NE(zsh.find(std::string("'") + flag + "["), std::string::npos) << flag;
    EXPECT_NE(fish.find(std::string(" -l ") + (flag + 2)), std::string::npos) << flag;
    std::string roff;
    for (const char* p = flag; *p; ++p) roff += (*p == '-') ? std::string("\\-") : std::string(1, *p);
    EXPECT_NE(man.find(roff), std::string::npos) << flag;
  }
  EXPECT_NE(bash.find("choices=\"auto always never\""), std::string::npos);
  // A flag takes no value; an option says which.
  EXPECT_NE(man.find("\\fB\\-\\-json\\fR\nthe same as"), std::string::npos) << man;
  EXPECT_NE(man.find("\\fB\\-\\-rules\\fR \\fITEXT\\fR"), std::string::npos);
  EXPECT_NE(fish.find("-l json -d"), std::string::npos);
  EXPECT_NE(fish.find("-l rules -r -F"), std::string::npos);
}

TEST(CliE2eTest, BashCompletionIsValidAndCompletes) {
  std::string script = ::testing::TempDir() + "/faultline.bash";
  ASSERT_EQ(Shell(kBinary + " completion bash > " + script).first, 0);
  EXPECT_EQ(Shell("bash -n " + script).first, 0);
  // Complete "faultline tri" and "faultline triage --ex".
  auto [c1, words] = Shell("bash -c 'source " + script +
                           "; COMP_WORDS=(faultline tri); COMP_CWORD=1; "
                           "_faultline; echo ${COMPREPLY[@]}'");
  EXPECT_EQ(words, "triage\n");
  auto [c2, flags] = Shell("bash -c 'source " + script +
                           "; COMP_WORDS=(faultline triage --ex); "
                           "COMP_CWORD=2; _faultline; echo ${COMPREPLY[@]}'");
  EXPECT_EQ(flags, "--explain\n");
  auto [c3, colors] = Shell("bash -c 'source " + script +
                            "; COMP_WORDS=(faultline triage --color a); "
                            "COMP_CWORD=3; _faultline; echo ${COMPREPLY[@]}'");
  EXPECT_EQ(colors, "auto always\n");
}

TEST(CliE2eTest, ManPageRendersWithoutWarnings) {
  if (Shell("command -v groff").first != 0) GTEST_SKIP() << "no groff";
  std::string page = ::testing::TempDir() + "/faultline.1";
  ASSERT_EQ(Shell(kBinary + " help --man > " + page).first, 0);
  auto [code, warnings] = Shell("groff -man -Tutf8 -ww -z " + page);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(warnings, "");
  auto [rc, text] = Shell("MANWIDTH=80 man -l " + page + " | col -b");
  EXPECT_NE(text.find("faultline triage"), std::string::npos) << text;
  EXPECT_NE(text.find("EXIT STATUS"), std::string::npos);
}

}  // namespace
}  // namespace faultline::cli
