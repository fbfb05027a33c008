// Helpers shared by the tests of whole-input reshaping (newest first, unfold).
#ifndef FAULTLINE_INPUT_RESHAPE_TEST_UTIL_H_
#define FAULTLINE_INPUT_RESHAPE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "input/byte_source.h"

namespace faultline::input {

inline std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A log of the real-log corpus (tests/real/CASE/FILE).
inline std::string Real(const std::string& rel) {
  return ReadAll(std::string(FAULTLINE_SOURCE_DIR) + "/tests/real/" + rel);
}

// Everything `src` yields, in small reads: a buffered head is served across several.
inline std::string Drain(ByteSource& src) {
  std::string out;
  char buf[1000];
  while (true) {
    auto n = src.Read(buf, sizeof(buf));
    EXPECT_TRUE(n.ok());
    if (!n.ok() || *n == 0) break;
    out.append(buf, *n);
  }
  return out;
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// `data` in a file of the test's temporary directory named after `tag`.
inline std::string TempFile(const std::string& tag, const std::string& data) {
  std::string path = std::string(::testing::TempDir()) + "/" + tag + "." + std::to_string(::getpid());
  std::ofstream(path, std::ios::binary) << data;
  return path;
}

}  // namespace faultline::input

#endif  // FAULTLINE_INPUT_RESHAPE_TEST_UTIL_H_
