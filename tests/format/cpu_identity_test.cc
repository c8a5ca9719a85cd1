// DetectedCpuIdentity: cpuid's vendor and family against what the kernel read from the same CPU
// (/proc/cpuinfo's vendor_id and "cpu family", which Linux derives from cpuid leaf 1 alike).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "util/cpu_features.h"

namespace epctx {
namespace {

// The value of the first "key<tabs>: value" line of /proc/cpuinfo, or "" if none.
std::string CpuinfoValue(const std::string& key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.find_first_not_of(" \t", key.size()) != colon) {
      continue;  // a longer key that starts alike ("model" and "model name")
    }
    return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "";
}

TEST(CpuIdentity, MatchesProcCpuinfo) {
  const std::string vendor = CpuinfoValue("vendor_id");
  const std::string family = CpuinfoValue("cpu family");
  if (vendor.empty() || family.empty()) GTEST_SKIP() << "/proc/cpuinfo names no vendor or family";
  const CpuIdentity id = DetectedCpuIdentity();
  EXPECT_EQ(id.amd, vendor == "AuthenticAMD") << vendor;
  EXPECT_EQ(id.family, std::stoi(family));
  EXPECT_GT(id.family, 0);
}

}  // namespace
}  // namespace epctx
