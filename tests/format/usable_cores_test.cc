// UsableCores: the affinity mask and the cgroup CPU quota, the smaller wins (util/usable_cores.h).
#include "util/usable_cores.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace epctx {
namespace {

namespace fs = std::filesystem;

TEST(UsableCores, QuotaIsRoundedUpToWholeCores) {
  EXPECT_EQ(CoresOfQuota(200000, 100000), 2);
  EXPECT_EQ(CoresOfQuota(150000, 100000), 2);
  EXPECT_EQ(CoresOfQuota(50000, 100000), 1);
  EXPECT_EQ(CoresOfQuota(-1, 100000), std::nullopt);
  EXPECT_EQ(CoresOfQuota(100000, 0), std::nullopt);
}

TEST(UsableCores, CpuMaxOfCgroupV2) {
  EXPECT_EQ(CoresOfCpuMax("300000 100000\n"), 3);
  EXPECT_EQ(CoresOfCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax("300000\n"), std::nullopt);
  EXPECT_EQ(CoresOfCpuMax("3x 100000"), std::nullopt);
}

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("epctx_cgroup_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    const fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(CgroupTree, V2TakesTheSmallestLimitAlongThePath) {
  Write("a/b/cpu.max", "max 100000\n");
  Write("a/cpu.max", "200000 100000\n");
  Write("cpu.max", "800000 100000\n");
  EXPECT_EQ(CgroupCoreLimit("0::/a/b\n", root_.string()), 2);
  Write("a/b/cpu.max", "100000 100000\n");
  EXPECT_EQ(CgroupCoreLimit("0::/a/b\n", root_.string()), 1);
  EXPECT_EQ(CgroupCoreLimit("0::/elsewhere\n", root_.string()), 8);
}

TEST_F(CgroupTree, V1ReadsTheCpuControllersQuota) {
  Write("cpu/x/cpu.cfs_quota_us", "150000\n");
  Write("cpu/x/cpu.cfs_period_us", "100000\n");
  Write("cpu/cpu.cfs_quota_us", "-1\n");
  Write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(CgroupCoreLimit("4:memory:/m\n3:cpu,cpuacct:/x\n", root_.string()), 2);
  // Another controller's path, or cpuacct alone, is not the cpu controller's.
  EXPECT_EQ(CgroupCoreLimit("3:cpuacct:/x\n4:memory:/x\n", root_.string()), std::nullopt);
  // No quota anywhere (-1), or no files: no limit.
  EXPECT_EQ(CgroupCoreLimit("1:cpu:/\n0::/\n", root_.string()), std::nullopt);
  EXPECT_EQ(CgroupCoreLimit("garbage\n", root_.string()), std::nullopt);
}

TEST(UsableCores, NeverMoreThanTheAffinityMaskAllows) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_GE(UsableCores(), 1);
  EXPECT_LE(UsableCores(), CPU_COUNT(&set));
}

}  // namespace
}  // namespace epctx
