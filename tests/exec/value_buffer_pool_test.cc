// The buffers of run values that do not fit the arena are kept for the next run: a released
// buffer serves the next allocation of its size class, never one that is still in use.
#include "exec/value_buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "program_generated.h"
#include "vm_flags.h"

namespace epctx::exec {
namespace {

constexpr int64_t kFloats = 64 * 1024;  // 256 KiB: above ValueBufferPool::kMinPooledBytes

TEST(ValueBufferPool, SizeClassesRoundUpByAtMostAnEighth) {
  EXPECT_EQ(ValueBufferPool::SizeClass(1), 64u);
  EXPECT_EQ(ValueBufferPool::SizeClass(64), 64u);
  EXPECT_EQ(ValueBufferPool::SizeClass(65536), 65536u);
  EXPECT_EQ(ValueBufferPool::SizeClass(65537), 65536u + 8192u);
  EXPECT_EQ(ValueBufferPool::SizeClass(393216), 393216u);  // 128 x 768 floats: a class of its own
  for (uint64_t bytes : {100u, 4097u, 70000u, 1000001u, 123456789u}) {
    const uint64_t c = ValueBufferPool::SizeClass(bytes);
    EXPECT_GE(c, bytes);
    EXPECT_LE(c, bytes + bytes / 8) << bytes;
    EXPECT_EQ(ValueBufferPool::SizeClass(c), c) << bytes;
  }
}

TEST(ValueBufferPool, AReleasedBufferServesTheNextTensorOfItsClass) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  const void* first = nullptr;
  {
    auto t = pool->Allocate(DataType::kFloat32, {kFloats});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->shape(), std::vector<int64_t>{kFloats});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    first = t->data();
    EXPECT_EQ(pool->retained_bytes(), 0u);
  }
  EXPECT_EQ(pool->retained_bytes(), kFloats * 4u);
  // Another shape of the same size class (int32, 2-D) takes the same buffer.
  auto again = pool->Allocate(DataType::kInt32, {2, kFloats / 2});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(pool->retained_bytes(), 0u);
  // While it is in use, the next tensor gets a buffer of its own.
  auto other = pool->Allocate(DataType::kFloat32, {kFloats});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->data(), first);
}

// A large buffer (an LLM's logits) is kept and reused as any other, small-paged: not advised
// for transparent huge pages, whose first touch on a VM that reports free memory to its host
// cost a first run up to 5x more than small pages (value_buffer_pool.cc).
TEST(ValueBufferPool, LargeBuffersAreKeptAndSmallPaged) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  const void* first = nullptr;
  {
    auto t = pool->Allocate(DataType::kFloat32, {3 << 18});  // 3 MiB
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    std::fill_n(t->mutable_data_as<float>(), 3 << 18, 1.0f);  // every page writable
    first = t->data();
    const std::string flags = epctx::testing::VmFlagsOf(first);
    ASSERT_NE(flags, "");
    EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;
  }
  auto again = pool->Allocate(DataType::kFloat32, {3 << 18});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
}

TEST(ValueBufferPool, SmallTensorsAreNotKept) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  {
    auto t = pool->Allocate(DataType::kFloat32, {16});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->element_count(), 16);
  }
  EXPECT_EQ(pool->retained_bytes(), 0u);
}

TEST(ValueBufferPool, KeepsNoMoreThanItsLimit) {
  auto pool = ValueBufferPool::Create(2 * kFloats * 4);
  {
    std::vector<Tensor> held;
    for (int i = 0; i < 3; ++i) {
      auto t = pool->Allocate(DataType::kFloat32, {kFloats});
      ASSERT_TRUE(t.ok());
      held.push_back(*t);
    }
  }
  EXPECT_EQ(pool->retained_bytes(), 2u * kFloats * 4);
}

// A buffer each run takes again stays; one no run took for two whole runs is freed when the
// next ends (a decode loop's caches outgrowing their size class).
TEST(ValueBufferPool, BuffersNoRunTakesAreFreedAfterTwoRuns) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  for (int run = 0; run < 5; ++run) {
    auto t = pool->Allocate(DataType::kFloat32, {kFloats});
    ASSERT_TRUE(t.ok());
    *t = Tensor();
    pool->EndRun();
    EXPECT_EQ(pool->retained_bytes(), kFloats * 4u) << "run " << run;
  }
  {
    auto larger = pool->Allocate(DataType::kFloat32, {2 * kFloats});  // another class
    ASSERT_TRUE(larger.ok());
  }
  EXPECT_EQ(pool->retained_bytes(), 3u * kFloats * 4);
  pool->EndRun();  // the smaller class's buffer has been free through this one run
  EXPECT_EQ(pool->retained_bytes(), 3u * kFloats * 4);
  {
    auto again = pool->Allocate(DataType::kFloat32, {2 * kFloats});  // the larger class's buffer
    ASSERT_TRUE(again.ok());
  }
  pool->EndRun();  // and through a second: freed; the larger one is free again
  EXPECT_EQ(pool->retained_bytes(), 2u * kFloats * 4);
  pool->EndRun();
  EXPECT_EQ(pool->retained_bytes(), 2u * kFloats * 4);
  pool->EndRun();
  EXPECT_EQ(pool->retained_bytes(), 0u);
}

TEST(ValueBufferPool, ATensorMayOutliveItsPool) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  auto t = pool->Allocate(DataType::kFloat32, {kFloats});
  ASSERT_TRUE(t.ok());
  pool.reset();
  t->mutable_data_as<float>()[kFloats - 1] = 3.0f;  // still owned by the tensor
  EXPECT_EQ(t->data_as<float>()[kFloats - 1], 3.0f);
}

TEST(ValueBufferPool, BadShapesAreReportedAsTensorAllocateReportsThem) {
  auto pool = ValueBufferPool::Create(uint64_t{1} << 30);
  auto t = pool->Allocate(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(t.ok());
  auto expected = Tensor::Allocate(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(t.status().message(), expected.status().message());
}

// x -> Relu -> h -> Neg -> y, every value of unknown length (no arena).
std::vector<uint8_t> DynamicChain() {
  flatbuffers::FlatBufferBuilder fbb;
  auto value = [&](const char* name) {
    return fb::CreateValue(fbb, fbb.CreateString(name), static_cast<int32_t>(DataType::kFloat32),
                           fbb.CreateVector(std::vector<int64_t>{-1}));
  };
  std::vector<flatbuffers::Offset<fb::Value>> values = {value("x"), value("h"), value("y")};
  auto node = [&](const char* name, const char* op, int32_t in, int32_t out) {
    return fb::CreateNode(fbb, fbb.CreateString(name), fbb.CreateString(op), fbb.CreateString(""),
                          fbb.CreateVector(std::vector<int32_t>{in}),
                          fbb.CreateVector(std::vector<int32_t>{out}));
  };
  std::vector<flatbuffers::Offset<fb::Node>> nodes = {node("relu", "Relu", 0, 1),
                                                      node("neg", "Neg", 1, 2)};
  std::vector<flatbuffers::Offset<fb::OpsetImport>> opsets = {
      fb::CreateOpsetImport(fbb, fbb.CreateString(""), 17)};
  fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString("p"), fbb.CreateVector(values),
                               fbb.CreateVector(nodes), fbb.CreateVector(std::vector<int32_t>{0}),
                               fbb.CreateVector(std::vector<int32_t>{2}), 0,
                               fbb.CreateVector(opsets)));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

Tensor Filled(float v) {
  auto t = Tensor::Allocate(DataType::kFloat32, {kFloats});
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < kFloats; ++i) t->mutable_data_as<float>()[i] = v;
  return *t;
}

TEST(ValueBufferPool, AnOutputTheCallerHoldsIsNotReusedByTheNextRun) {
  const std::vector<uint8_t> bytes = DynamicChain();
  WeightResolver no_weights = [](uint32_t) -> Result<Tensor> {
    return Status(StatusCode::kInternal, "no weights");
  };
  auto bound = BoundProgram::Bind(*flatbuffers::GetRoot<fb::Program>(bytes.data()), no_weights, 1);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  std::vector<Tensor> in1 = {Filled(2.0f)};
  auto out1 = (*bound)->Run(in1, {});
  ASSERT_TRUE(out1.ok()) << out1.status().ToString();
  std::vector<Tensor> in2 = {Filled(5.0f)};
  auto out2 = (*bound)->Run(in2, {});
  ASSERT_TRUE(out2.ok()) << out2.status().ToString();
  EXPECT_NE((*out1)[0].data(), (*out2)[0].data());
  for (int64_t i = 0; i < kFloats; i += 4099) {
    ASSERT_EQ((*out1)[0].data_as<float>()[i], -2.0f) << i;
    ASSERT_EQ((*out2)[0].data_as<float>()[i], -5.0f) << i;
  }
  // Once released, the first output's buffer serves the next run.
  const void* released = (*out1)[0].data();
  out1->clear();
  auto out3 = (*bound)->Run(in1, {});
  ASSERT_TRUE(out3.ok());
  EXPECT_EQ((*out3)[0].data(), released);
  EXPECT_EQ((*out3)[0].data_as<float>()[kFloats - 1], -2.0f);
}

}  // namespace
}  // namespace epctx::exec
