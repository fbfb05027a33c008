#include <nlohmann/json.hpp>

#include "report/printers.h"

namespace faultline::report {

using nlohmann::json;

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFailure:
      return "failure";
    case Verdict::kStalled:
      return "stalled";
    case Verdict::kHealthy:
      return "healthy";
  }
  return "?";
}

namespace {

json Opt(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

json ProcessJson(const ProcessRef& p) {
  json j;
  j["tag"] = p.tag;
  j["role"] = p.role;
  j["pid"] = p.pid ? json(*p.pid) : json(nullptr);
  j["rank"] = p.rank ? json(*p.rank) : json(nullptr);
  j["parent"] = p.parent.empty() ? json(nullptr) : json(p.parent);
  return j;
}

json LineJson(const LineRef& l) { return json{{"file", l.file}, {"line", l.line}, {"text", l.text}}; }

}  // namespace

json ToJson(const TriageReport& r) {
  json j;
  j["schema"] = "faultline.triage/1";
  j["verdict"] = VerdictName(r.verdict);
  if (r.root_cause) {
    const RootCause& rc = *r.root_cause;
    json root;
    root["message"] = rc.message;
    root["exception"] = rc.exception.empty() ? json(nullptr) : json(rc.exception);
    root["kind"] = rc.kind;
    root["file"] = rc.where.file;
    root["line"] = rc.where.line;
    root["text"] = rc.where.text;
    if (rc.message_start) root["message_start"] = LineJson(*rc.message_start);
    root["process"] = ProcessJson(rc.process);
    root["rule"] = Opt(rc.rule);
    root["category"] = rc.category.empty() ? json(nullptr) : json(rc.category);
    root["explanation"] = rc.explanation.empty() ? json(nullptr) : json(rc.explanation);
    root["fix"] = rc.fix.empty() ? json(nullptr) : json(rc.fix);
    root["why"] = rc.why;
    root["same_error_in"] = rc.same_error_in;
    json context = json::array();
    for (const auto& c : rc.context) context.push_back(LineJson(c));
    root["context"] = context;
    if (rc.templ) root["template"] = {{"id", rc.templ->id}, {"count", rc.templ->count}};
    j["root_cause"] = root;
  } else {
    j["root_cause"] = nullptr;
  }
  json cascade = json::array();
  for (const auto& c : r.cascade) {
    json item = {{"message", c.message}, {"file", c.where.file},
                 {"line", c.where.line}, {"process", ProcessJson(c.process)},
                 {"reason", c.reason},   {"rule", Opt(c.rule)}};
    if (c.templ) item["template"] = {{"id", c.templ->id}, {"count", c.templ->count}};
    cascade.push_back(std::move(item));
  }
  j["cascade"] = cascade;
  j["cascade_total"] = r.cascade_total;
  j["last_phase"] = Opt(r.last_phase);
  j["phases_never_reached"] = r.phases_never_reached;
  json phases = json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"phase", p.phase},
                      {"file", p.where.file},
                      {"line", p.where.line},
                      {"process", ProcessJson(p.process)},
                      {"rule", Opt(p.rule)}});
  }
  j["phases"] = phases;
  json processes = json::array();
  for (const auto& p : r.processes) {
    json pj = ProcessJson(p.process);
    pj["lines"] = p.lines;
    pj["errors"] = p.errors;
    processes.push_back(pj);
  }
  j["processes"] = processes;
  json inputs = json::array();
  for (const auto& in : r.inputs) {
    json item = {{"file", in.file}, {"lines", in.lines}, {"bytes", in.bytes}, {"format", in.format}};
    if (!in.wrappers.empty()) item["wrappers"] = in.wrappers;
    inputs.push_back(std::move(item));
  }
  j["inputs"] = inputs;
  j["total_lines"] = r.total_lines;
  j["last_line"] = r.last_line ? LineJson(*r.last_line) : json(nullptr);
  j["stall_hints"] = r.stall_hints;
  if (r.template_total > 0) {
    json templates = json::object();
    templates["total"] = r.template_total;
    for (const auto* list : {&r.common_templates, &r.rare_templates}) {
      json arr = json::array();
      for (const auto& t : *list) arr.push_back({{"id", t.id}, {"count", t.count}, {"text", t.text}});
      templates[list == &r.common_templates ? "most_common" : "rarest"] = arr;
    }
    j["templates"] = templates;
  }
  j["warnings"] = r.warnings;
  return j;
}

std::string DumpJson(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

}  // namespace faultline::report
