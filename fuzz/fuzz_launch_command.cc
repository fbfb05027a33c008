// A launch command (preflight -- vllm serve ...): one argv element per line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "preflight/launch_command.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      argv.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  argv.push_back(cur);
  (void)faultline::preflight::ParseLaunchCommand(argv);
  return 0;
}
