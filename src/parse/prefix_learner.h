// PrefixLearner: a wrapper nobody described. When a file's lines all wear
// the same unknown prefix (a log collector's "[gpu-node-1] ", a CI
// runner's "15:15:10  ", SageMaker's "[1,mpirank:3,algo-1]<stderr>:",
// a tab-separated export's time stamp) the framework's own structure starts
// after it, where the line parser recognises it. The learner finds, in a
// file's first lines, where the parser starts recognising each line, and
// when those prefixes share one shape (the same punctuation between the same
// kinds of tokens) it turns the shape into a pattern that peels them.
//
// A paste indented as a whole (quoted in a Markdown list, a doc) is the same
// case with blanks for a prefix: the common indentation is peeled when, without
// it, Python's or a framework's own lines start the line.
//
// Nothing is learned when the parser already recognises the lines as they
// are (their framework prefix starts the line) or when the prefixes differ
// in shape: a wrongly peeled prefix would hide structure, a missed one only
// leaves the line as it was.
#ifndef FAULTLINE_PARSE_PREFIX_LEARNER_H_
#define FAULTLINE_PARSE_PREFIX_LEARNER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::parse {

struct LearnedPrefix {
  std::string shape;    // "[w] "
  std::string pattern;  // RE2, to match at the start of a line
};

// The prefix that `lines` share before the parser recognises them, or
// nullopt when they wear none.
std::optional<LearnedPrefix> LearnPrefix(const std::vector<std::string_view>& lines);

// The blanks that every line of a paste indented as a whole starts with
// (quoted as a Markdown indented code block or list item, a doc's or an
// e-mail's indentation), whatever the lines hold: "" when the first lines
// share none, or when they are traceback frames alone (the frames' own
// indentation). A view into `lines`. WrapperSet::Detect peels it before any
// wrapper: the wrappers' patterns are anchored at the start of the line.
std::string_view PasteIndentation(const std::vector<std::string_view>& lines);

// The shape of a prefix: word runs become 'w', blank runs ' ', other
// characters stay ("[w] ", "w:w:w  "). Exposed for tests.
std::string PrefixShape(std::string_view prefix);

}  // namespace faultline::parse

#endif  // FAULTLINE_PARSE_PREFIX_LEARNER_H_
