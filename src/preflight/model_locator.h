// Finds a model's config.json (and model.safetensors.index.json beside it)
// the way the launchers would: an explicit --model-config file, a local
// directory, or the Hugging Face cache layout
// ($HF_HUB_CACHE | $HF_HOME/hub | ~/.cache/huggingface/hub)/models--ORG--NAME/snapshots/<rev>/.
#ifndef FAULTLINE_PREFLIGHT_MODEL_LOCATOR_H_
#define FAULTLINE_PREFLIGHT_MODEL_LOCATOR_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "preflight/model_facts.h"
#include "util/status.h"

namespace faultline::preflight {

struct ModelLocation {
  enum class Kind {
    kExplicit,     // --model-config FILE
    kLocalDir,     // the model argument is a directory
    kHubCache,     // found in the Hugging Face cache
    kMissingPath,  // the model argument is a path that does not exist / has no config.json
    kNotCached,    // a hub id that is not in any local cache
  };
  Kind kind = Kind::kNotCached;
  std::string config_path;                  // empty unless found
  std::string description;                  // where it was found / looked
  std::vector<std::string> searched;        // cache directories looked in
  std::vector<std::string> missing_shards;  // shards listed in the index but absent
  std::optional<ModelFacts> facts;
};

struct LocateRequest {
  std::string model;           // as on the command line
  std::string model_config;    // --model-config FILE (preflight flag), may be empty
  std::string hf_config_path;  // vLLM --hf-config-path
  std::string download_dir;    // vLLM --download-dir
  std::string revision;        // --revision
  std::map<std::string, std::string> env;
};

// Errors (kInvalidArgument / kNotFound) only for an unreadable --model-config
// or a malformed config.json / index; a model that is simply not there is a
// location of kind kMissingPath / kNotCached, for the checks to report.
Result<ModelLocation> LocateModel(const LocateRequest& req);

}  // namespace faultline::preflight

#endif  // FAULTLINE_PREFLIGHT_MODEL_LOCATOR_H_
