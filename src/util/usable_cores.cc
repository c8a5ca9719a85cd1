#include "util/usable_cores.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace epctx {
namespace {

std::optional<long long> ParseInteger(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<int> Smaller(std::optional<int> a, std::optional<int> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// `path` ("/a/b") and each of its parents up to "/", as directories under `base`.
std::vector<std::string> SelfAndParents(const std::string& base, std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::vector<std::string> dirs;
  while (true) {
    dirs.push_back(base + (p == "/" ? "" : p));
    if (p.empty() || p == "/") break;
    const size_t slash = p.rfind('/');
    p = slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
  }
  return dirs;
}

bool ListsCpuController(std::string_view controllers) {
  size_t start = 0;
  while (start <= controllers.size()) {
    const size_t comma = controllers.find(',', start);
    const std::string_view c = controllers.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (c == "cpu") return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}

}  // namespace

std::optional<int> CoresOfQuota(long long quota_us, long long period_us) {
  if (quota_us <= 0 || period_us <= 0) return std::nullopt;
  return static_cast<int>(std::max(1LL, (quota_us + period_us - 1) / period_us));
}

std::optional<int> CoresOfCpuMax(std::string_view cpu_max) {
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = ParseInteger(cpu_max.substr(0, space));
  const auto period = ParseInteger(cpu_max.substr(space + 1));
  if (!quota || !period) return std::nullopt;  // "max": no limit
  return CoresOfQuota(*quota, *period);
}

std::optional<int> CgroupCoreLimit(std::string_view self_cgroup, const std::string& cgroup_root) {
  std::optional<int> limit;
  size_t start = 0;
  while (start < self_cgroup.size()) {
    size_t end = self_cgroup.find('\n', start);
    if (end == std::string_view::npos) end = self_cgroup.size();
    const std::string_view line = self_cgroup.substr(start, end - start);
    start = end + 1;
    // "hierarchy-id:controllers:path"
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && controllers.empty()) {
      for (const std::string& dir : SelfAndParents(cgroup_root, path)) {
        if (auto text = ReadSmallFile(dir + "/cpu.max"))
          limit = Smaller(limit, CoresOfCpuMax(*text));
      }
    } else if (ListsCpuController(controllers)) {
      // v1 mounts the cpu controller at <root>/cpu (often a link to cpu,cpuacct).
      for (const std::string& dir : SelfAndParents(cgroup_root + "/cpu", path)) {
        const auto quota = ReadSmallFile(dir + "/cpu.cfs_quota_us");
        const auto period = ReadSmallFile(dir + "/cpu.cfs_period_us");
        if (!quota || !period) continue;
        const auto q = ParseInteger(*quota), p = ParseInteger(*period);
        if (q && p) limit = Smaller(limit, CoresOfQuota(*q, *p));
      }
    }
  }
  return limit;
}

int UsableCores() {
  int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  // The quota is read once per process (a few files); the mask each time, as taskset may change it.
  static const std::optional<int> quota_limit = [] {
    const auto self = ReadSmallFile("/proc/self/cgroup");
    return self ? CgroupCoreLimit(*self, "/sys/fs/cgroup") : std::nullopt;
  }();
  return quota_limit ? std::min(cores, *quota_limit) : cores;
}

}  // namespace epctx
