// The dashboard's front end (web/*.html, *.css, *.js), embedded into the
// binary at build time by embed_assets.cmake: no files to install, no CDN.
#ifndef FAULTLINE_WEB_ASSETS_H_
#define FAULTLINE_WEB_ASSETS_H_

#include <string_view>

namespace faultline::web {

struct Asset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

// The asset served at `path`, or nullptr.
const Asset* FindAsset(std::string_view path);

}  // namespace faultline::web

#endif  // FAULTLINE_WEB_ASSETS_H_
