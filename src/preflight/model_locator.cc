#include "preflight/model_locator.h"
#include "util/read_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faultline::preflight {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadText(const fs::path& p) {
  return ReadSmallFile(p.string());  // bounded; a FIFO or /dev/zero is refused
}

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string Env(const std::map<std::string, std::string>& env, const char* key) {
  auto it = env.find(key);
  return it == env.end() ? "" : it->second;
}

// Reads config.json (+ index) from a directory or a config file path.
Status LoadFacts(const fs::path& config, ModelLocation* loc) {
  Result<std::string> text = ReadText(config);
  if (!text.ok()) return text.status();
  Result<ModelFacts> facts = ParseModelConfig(*text, config.string());
  if (!facts.ok()) return facts.status();
  loc->config_path = config.string();
  fs::path index = config.parent_path() / "model.safetensors.index.json";
  if (Exists(index)) {
    Result<std::string> itext = ReadText(index);
    if (!itext.ok()) return itext.status();
    Result<SafetensorsIndex> idx = ParseSafetensorsIndex(*itext, index.string());
    if (!idx.ok()) return idx.status();
    facts->checkpoint_bytes = idx->total_size;
    facts->checkpoint_bytes_source = index.string();
    if (loc->kind != ModelLocation::Kind::kExplicit) {
      for (const std::string& shard : idx->shards) {
        if (!Exists(config.parent_path() / shard)) loc->missing_shards.push_back(shard);
      }
    }
  } else if (loc->kind != ModelLocation::Kind::kExplicit) {
    // Single-file checkpoints: the file size is the weight size.
    fs::path single = config.parent_path() / "model.safetensors";
    std::error_code ec;
    if (Exists(single)) {
      facts->checkpoint_bytes = fs::file_size(single, ec);
      facts->checkpoint_bytes_source = single.string();
    }
  }
  loc->facts = std::move(*facts);
  return Status::Ok();
}

std::vector<fs::path> CacheDirs(const LocateRequest& req) {
  std::vector<fs::path> dirs;
  if (!req.download_dir.empty()) dirs.push_back(req.download_dir);
  for (const char* key : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    std::string v = Env(req.env, key);
    if (!v.empty()) dirs.push_back(v);
  }
  std::string hf_home = Env(req.env, "HF_HOME");
  if (!hf_home.empty()) dirs.push_back(fs::path(hf_home) / "hub");
  std::string xdg = Env(req.env, "XDG_CACHE_HOME");
  if (!xdg.empty()) dirs.push_back(fs::path(xdg) / "huggingface" / "hub");
  std::string home = Env(req.env, "HOME");
  if (!home.empty()) dirs.push_back(fs::path(home) / ".cache" / "huggingface" / "hub");
  return dirs;
}

// models--ORG--NAME/snapshots/<rev>/config.json; the revision named by
// refs/<revision or main> first, then any snapshot that has a config.json.
std::optional<fs::path> FindInCache(const fs::path& cache, const std::string& model, const std::string& revision) {
  std::string repo = "models--";
  for (char c : model) repo += (c == '/') ? std::string("--") : std::string(1, c);
  fs::path root = cache / repo;
  if (!IsDir(root)) return std::nullopt;
  std::string ref = revision.empty() ? "main" : revision;
  Result<std::string> commit = ReadText(root / "refs" / ref);
  std::string want = commit.ok() ? *commit : ref;
  while (!want.empty() && (want.back() == '\n' || want.back() == ' ')) want.pop_back();
  if (Exists(root / "snapshots" / want / "config.json")) return root / "snapshots" / want / "config.json";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root / "snapshots", ec)) {
    if (Exists(entry.path() / "config.json")) return entry.path() / "config.json";
  }
  return std::nullopt;
}

bool LooksLikePath(const std::string& m) {
  return !m.empty() && (m[0] == '/' || m[0] == '.' || m[0] == '~' || std::count(m.begin(), m.end(), '/') > 1);
}

}  // namespace

Result<ModelLocation> LocateModel(const LocateRequest& req) {
  ModelLocation loc;
  if (!req.model_config.empty()) {
    loc.kind = ModelLocation::Kind::kExplicit;
    fs::path p = req.model_config;
    if (IsDir(p)) p /= "config.json";
    if (!Exists(p)) return Status::NotFound(fmt::format("--model-config {}: no such file", req.model_config));
    loc.description = fmt::format("--model-config {}", p.string());
    Status st = LoadFacts(p, &loc);
    if (!st.ok()) return st;
    return loc;
  }
  std::string config_dir = !req.hf_config_path.empty() ? req.hf_config_path : req.model;
  fs::path dir = config_dir;
  if (!config_dir.empty() && config_dir[0] == '~') {
    dir = fs::path(Env(req.env, "HOME")) / config_dir.substr(config_dir.size() > 1 ? 2 : 1);
  }
  if (IsDir(dir)) {
    loc.kind = ModelLocation::Kind::kLocalDir;
    if (!Exists(dir / "config.json")) {
      loc.kind = ModelLocation::Kind::kMissingPath;
      loc.description = fmt::format("{} has no config.json", dir.string());
      return loc;
    }
    loc.description = fmt::format("{}/config.json", dir.string());
    Status st = LoadFacts(dir / "config.json", &loc);
    if (!st.ok()) return st;
    return loc;
  }
  if (LooksLikePath(config_dir) || Exists(dir)) {
    loc.kind = ModelLocation::Kind::kMissingPath;
    loc.description = fmt::format("{}: no such directory", config_dir);
    return loc;
  }
  for (const fs::path& cache : CacheDirs(req)) {
    loc.searched.push_back(cache.string());
    std::optional<fs::path> found = FindInCache(cache, config_dir, req.revision);
    if (!found) continue;
    loc.kind = ModelLocation::Kind::kHubCache;
    loc.description = found->string();
    Status st = LoadFacts(*found, &loc);
    if (!st.ok()) return st;
    return loc;
  }
  loc.kind = ModelLocation::Kind::kNotCached;
  loc.description = fmt::format("{} is not in the local Hugging Face cache", config_dir);
  return loc;
}

}  // namespace faultline::preflight
