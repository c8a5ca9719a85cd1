// The kernel's flags for the mapping that holds an address (/proc/self/smaps): " hg" among them
// means the mapping was advised for transparent huge pages (madvise MADV_HUGEPAGE).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace epctx::testing {

// The "VmFlags: ..." line of the mapping holding `p` ("" if there is none).
inline std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace epctx::testing
