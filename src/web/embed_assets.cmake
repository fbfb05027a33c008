# Generates a C++ source holding every file of web/ (the dashboard's front
# end) as a byte array, so the binary serves the page with no files on disk.
# Usage: cmake -DASSETS_DIR=... -DOUTPUT=... -P embed_assets.cmake
file(GLOB asset_files ${ASSETS_DIR}/*.html ${ASSETS_DIR}/*.css ${ASSETS_DIR}/*.js ${ASSETS_DIR}/*.svg)
list(SORT asset_files)
set(arrays "")
set(table "")
set(i 0)
foreach(f ${asset_files})
  get_filename_component(name ${f} NAME)
  get_filename_component(ext ${f} LAST_EXT)
  if(ext STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(ext STREQUAL ".css")
    set(type "text/css; charset=utf-8")
  elseif(ext STREQUAL ".js")
    set(type "text/javascript; charset=utf-8")
  else()
    set(type "image/svg+xml")
  endif()
  file(READ ${f} hex HEX)
  string(LENGTH "${hex}" hex_len)
  math(EXPR size "${hex_len} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND arrays "const unsigned char kAsset${i}[] = {${bytes}0};\n")
  string(APPEND table "    {\"/${name}\", \"${type}\", std::string_view(reinterpret_cast<const char*>(kAsset${i}), ${size})},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUTPUT}.tmp
"// Generated from web/ by src/web/embed_assets.cmake. Do not edit.
#include \"web/assets.h\"
namespace faultline::web {
namespace {
${arrays}
const Asset kAssets[] = {
${table}};
}  // namespace
const Asset* FindAsset(std::string_view path) {
  if (path == \"/\") path = \"/index.html\";
  for (const Asset& a : kAssets) {
    if (a.path == path) return &a;
  }
  return nullptr;
}
}  // namespace faultline::web
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
