// How many cores this process may use: the one count the executor (intra_op_num_threads = 0),
// the kernel preparation pool and `epctx perf` share. Two limits apply, and the smaller wins:
// the affinity mask (taskset, cpusets) and the CPU quota of the process's cgroups (a container's
// `--cpus=2` on a 64-core host leaves all 64 in the mask). std::thread::hardware_concurrency()
// sees neither.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace epctx {

// Cores for this process, at least 1.
int UsableCores();

// The parts, for tests and for other roots than "/":
// Whole cores a cgroup quota allows: ceil(quota / period); nothing for no limit ("max", -1).
std::optional<int> CoresOfQuota(long long quota_us, long long period_us);
// cgroup v2's cpu.max ("max 100000" or "200000 100000"); nothing when unlimited or malformed.
std::optional<int> CoresOfCpuMax(std::string_view cpu_max);
// The smallest quota along the process's cgroups: /proc/self/cgroup's text read against a
// cgroup file system mounted at `cgroup_root` (v2 "0::/a/b": <root>/a/b/cpu.max and each parent;
// v1 "N:...cpu...:/a/b": <root>/cpu/a/b/cpu.cfs_quota_us and cpu.cfs_period_us, and parents).
std::optional<int> CgroupCoreLimit(std::string_view self_cgroup, const std::string& cgroup_root);

}  // namespace epctx
