// Wrappers: prefixes that the tools *around* a job add to every line it
// prints — docker compose ("qwen-server  | "), kubectl --prefix / --timestamps,
// docker logs -t, docker's json-file records, journald (short-iso, -o json),
// srun --label (" 2: "), mpirun --tag-output ("[1,3]<stderr>:"), pdsh
// ("node-1: "), CI timestamps. They hide the framework's own structure
// (the "(Worker pid=7506) ERROR ..." prefix no longer starts the line), so
// they are peeled before anything else reads the line.
//
// Wrappers are data (rules/wrappers.yaml): a pattern anchored at the start
// of the line whose match is removed, or a JSON field that holds the line;
// named captures give the identity the wrapper carries (service, node, pod,
// Slurm task -> rank). Which wrappers a file wears is detected from the file
// itself (its first lines); they may stack (kubectl --timestamps around a
// docker compose prefix), so detection repeats on the peeled lines.
//
// A prefix no spec describes is learned from the same first lines
// (parse/prefix_learner.h) and peeled as the innermost layer; the blanks of a
// paste indented as a whole are the outermost (parse::PasteIndentation).
//
// A WrapperSet is immutable after Build() and may be shared by threads; a
// WrapperStack is used by one thread.
#ifndef FAULTLINE_PARSE_WRAPPER_H_
#define FAULTLINE_PARSE_WRAPPER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace re2 {
class RE2;
}

namespace faultline::parse {

struct WrapperSpec {
  std::string id;  // "docker-compose"
  std::string description;
  // Prefix form: an RE2 pattern matched at the start of the line; the line
  // goes on after the match. Named groups are captures.
  std::string pattern;
  // JSON-record form: each line is a JSON object; `json_field` holds the
  // line; other fields become captures (json_captures: capture <- field).
  // A field may be a dotted path into nested objects ("fields.message") and
  // may list alternatives tried in order ("fields.message|message").
  std::string json_field;
  std::vector<std::pair<std::string, std::string>> json_captures;
  // JSON-record form only: the line rebuilt from the record, a template over
  // the captures and {line} (json_field's text); a bracketed group
  // ("[{span}: ]") is printed only when all its placeholders have values. A logger
  // that writes JSON instead of text (Rust tracing-subscriber's json())
  // then reads as its own text format. Empty: the field's text alone.
  std::string json_line;
  // The identity the wrapper gives a line, a template over captures
  // ("{service}", "task {task}"); empty parts and their separators drop out.
  std::string identity;
  std::string rank_capture;  // capture that is the process's rank, if any
  // The share of a file's first lines it must peel to be detected. Half by default; a prefix whose
  // shape plain text can also take (stern's "POD CONTAINER ") asks for more.
  double min_share = 0.5;
  std::vector<std::string> match_samples;     // lines it must peel
  std::vector<std::string> no_match_samples;  // lines it must leave alone
  std::string source;                         // "rules/wrappers.yaml:12"
};

// One line with its wrappers peeled.
struct PeeledLine {
  std::string_view inner;  // the line as the job printed it
  std::string identity;    // "" when the wrappers carry none
  int rank = -1;
  bool peeled = false;  // some layer matched this line
  // A bar the job redrew with '\r' inside a decoded record: the bar's first
  // state (input/line_cleaner.h), "" when none.
  std::string earlier;
};

class WrapperSet;

// The wrappers one input wears, outermost first.
class WrapperStack {
 public:
  bool empty() const { return indentation_.empty() && layers_.empty() && !learned_; }
  // Ids, outermost first ("kubectl-timestamps+docker-compose"); a learned
  // prefix shows as its shape: learned "[w] ".
  std::string Describe() const;

  // Peels every layer that matches this line. `scratch` holds decoded text
  // (JSON records); `inner` may point into it or into `line`.
  PeeledLine Peel(std::string_view line, std::string* scratch) const;

 private:
  friend class WrapperSet;
  std::string indentation_;  // outermost: a paste indented as a whole
  std::vector<size_t> layers_;
  const WrapperSet* set_ = nullptr;
  std::shared_ptr<const re2::RE2> learned_;  // innermost, when one was learned
  std::string learned_shape_;
};

class WrapperSet {
 public:
  // Compiles the specs; a bad pattern or a failing sample is an error.
  static Result<std::unique_ptr<WrapperSet>> Build(std::vector<WrapperSpec> specs);

  // Detects the wrappers from a file's first lines: a wrapper is worn when
  // it matches at least half of the non-empty sample lines; detection
  // repeats on the peeled lines, up to four layers; then a prefix that no
  // spec describes may be learned from what is left.
  WrapperStack Detect(const std::vector<std::string_view>& first_lines) const;

  const std::vector<WrapperSpec>& specs() const { return specs_; }
  ~WrapperSet();

  // Peels one layer; false when the line does not wear it. `earlier` (may be
  // null): the first state of a bar the job redrew inside a decoded record.
  bool PeelOne(size_t layer, std::string_view line, std::string* scratch, std::string_view* inner,
               std::vector<std::pair<std::string, std::string>>* captures, std::string* earlier = nullptr) const;

 private:
  WrapperSet() = default;
  std::vector<WrapperSpec> specs_;
  std::vector<std::unique_ptr<re2::RE2>> compiled_;
};

// Problems with the specs' samples (empty when all are right).
std::vector<std::string> CheckWrapperSamples(const WrapperSet& set);

}  // namespace faultline::parse

#endif  // FAULTLINE_PARSE_WRAPPER_H_
