// The background preparation's job: its `also` waits for the session's creation to be over, a
// cancelled job never starts it, a first run that finishes the nodes tells it so, threads done with
// the nodes map the scratchpad ahead (after creation), and the worker counts leave the creating
// thread a core.
#include "exec/kernel_preparer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/executor.h"
#include "exec/kernels/onednn/runtime.h"
#include "program_generated.h"
#include "util/usable_cores.h"

namespace epctx::exec {
namespace {

// x -> Relu -> Relu -> ... -> y: nodes for the job to take (our kernels prepare nothing).
std::vector<uint8_t> ReluChain(int length) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Value>> values;
  for (int i = 0; i <= length; ++i) {
    values.push_back(fb::CreateValue(fbb, fbb.CreateString(fmt::format("v{}", i)),
                                     static_cast<int32_t>(DataType::kFloat32),
                                     fbb.CreateVector(std::vector<int64_t>{4})));
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  for (int i = 0; i < length; ++i) {
    nodes.push_back(fb::CreateNode(fbb, fbb.CreateString(fmt::format("relu{}", i)),
                                   fbb.CreateString("Relu"), fbb.CreateString(""),
                                   fbb.CreateVector(std::vector<int32_t>{i}),
                                   fbb.CreateVector(std::vector<int32_t>{i + 1})));
  }
  std::vector<flatbuffers::Offset<fb::OpsetImport>> opsets = {
      fb::CreateOpsetImport(fbb, fbb.CreateString(""), 17)};
  fbb.Finish(fb::CreateProgram(fbb, fbb.CreateString("p"), fbb.CreateVector(values),
                               fbb.CreateVector(nodes), fbb.CreateVector(std::vector<int32_t>{0}),
                               fbb.CreateVector(std::vector<int32_t>{length}), 0,
                               fbb.CreateVector(opsets)));
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

// Waits up to 10 s (a busy machine) for `flag`; returns it.
bool WaitFor(const std::atomic<bool>& flag) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  return flag.load();
}

class KernelPreparer : public ::testing::Test {
 protected:
  void SetUp() override { Bind(64); }

  void Bind(int nodes) {
    bytes_ = ReluChain(nodes);
    WeightResolver no_weights = [](uint32_t) -> Result<Tensor> {
      return Status(StatusCode::kInternal, "no weights");
    };
    auto bound =
        BoundProgram::Bind(*flatbuffers::GetRoot<fb::Program>(bytes_.data()), no_weights, 1);
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    program_ = std::move(*bound);
  }

  // An `also` that records that it ran.
  AlsoPrepare Recorder() {
    return [this](const AlsoStop&) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++also_runs_;
      ran_.notify_all();
    };
  }
  int AlsoRuns() {
    std::lock_guard<std::mutex> lock(mutex_);
    return also_runs_;
  }
  // Whether `also` ran within 10 s (a busy machine).
  bool AlsoRan() {
    std::unique_lock<std::mutex> lock(mutex_);
    return ran_.wait_for(lock, std::chrono::seconds(10), [&] { return also_runs_ > 0; });
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<BoundProgram> program_;
  std::mutex mutex_;
  std::condition_variable ran_;
  int also_runs_ = 0;
};

TEST_F(KernelPreparer, AlsoStartsOnlyOnceCreationIsDone) {
  auto ticket = PrepareInBackground(program_.get(), WorkersFor(0), Recorder());
  // Time enough for the pool to take up the nodes and, wrongly, the also.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(AlsoRuns(), 0);
  ticket->CreationDone();
  EXPECT_TRUE(AlsoRan());
  ticket.reset();  // waits for the job
  EXPECT_EQ(AlsoRuns(), 1);
}

TEST_F(KernelPreparer, AlsoRunsBesideABusyOneThreadJob) {
  // A 1-thread session on a 2-core machine has one thread on its nodes after creation; the also
  // still starts while those are taken.
  auto ticket = PrepareInBackground(program_.get(), {1, 1}, Recorder());
  ticket->CreationDone();
  EXPECT_TRUE(AlsoRan());
}

TEST_F(KernelPreparer, ACancelledJobNeverStartsItsAlso) {
  auto ticket = PrepareInBackground(program_.get(), WorkersFor(0), Recorder());
  ticket.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(AlsoRuns(), 0);
}

TEST_F(KernelPreparer, PrepareNowRunsAlsoBeforeReturning) {
  PrepareNow(program_.get(), Recorder());
  EXPECT_EQ(AlsoRuns(), 1);
}

TEST_F(KernelPreparer, FinishNodesReturnsOnceEveryNodeIsPrepared) {
  Bind(20000);  // long enough that a pool thread alone is still at it when FinishNodes starts
  auto ticket = PrepareInBackground(program_.get(), {1, 1, true}, Recorder());
  ticket->CreationDone();
  ticket->FinishNodes();
  EXPECT_TRUE(ticket->NodesDone());
}

TEST_F(KernelPreparer, FinishNodesTellsTheAlsoThatTheRunStarted) {
  // The run that finishes the nodes takes every core: the `also` stops what that run does itself
  // as it goes (AlsoStop::run_started), and is not cancelled.
  std::atomic<bool> started{false};
  std::atomic<bool> returned{false};
  std::atomic<bool> cancelled{false};
  auto until_run = [&](const AlsoStop& stop) {
    started = true;
    returned = WaitFor(stop.run_started);
    cancelled = stop.cancelled.load();
  };
  auto ticket = PrepareInBackground(program_.get(), {1, 2, true}, until_run);
  ticket->CreationDone();
  ASSERT_TRUE(WaitFor(started));
  ticket->FinishNodes();
  // Told by FinishNodes, not by the ticket's end (which sets both flags).
  EXPECT_TRUE(WaitFor(returned));
  EXPECT_FALSE(cancelled);
}

TEST_F(KernelPreparer, CancellingTellsTheAlsoBoth) {
  std::atomic<bool> started{false};
  std::atomic<bool> both{false};
  auto until_cancelled = [&](const AlsoStop& stop) {
    started = true;
    both = WaitFor(stop.cancelled) && stop.run_started.load();
  };
  auto ticket = PrepareInBackground(program_.get(), {1, 2, false}, until_cancelled);
  ticket->CreationDone();
  ASSERT_TRUE(WaitFor(started));
  ticket.reset();  // cancels, and waits for the also to return
  EXPECT_TRUE(both);
}

// A thread done with its share of the nodes maps a scratchpad as large as the largest known
// ahead: the `also` may have looked before that primitive was made. Not while creation lasts.
// (Sizes larger than any other test's here, and the larger one for the test that expects none
// made, so that either order in one process holds.)
TEST_F(KernelPreparer, ThreadsDoneWithTheNodesMapTheLargestScratchpadAhead) {
  constexpr size_t kBytes = size_t{32} << 20;
  kernels::onednn::NoteScratchpadSize(kBytes);  // as a primitive among the nodes would
  PrepareNow(program_.get());                   // creation's work: no need to wait
  EXPECT_GE(kernels::onednn::SpareScratchpadBytes(), kBytes);
}

TEST_F(KernelPreparer, NodesDoneWhileCreationLastsMapNoScratchpad) {
  constexpr size_t kBytes = size_t{48} << 20;
  kernels::onednn::NoteScratchpadSize(kBytes);
  auto ticket = PrepareInBackground(program_.get(), WorkersFor(0));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ticket->NodesDone() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(ticket->NodesDone());
  EXPECT_LT(kernels::onednn::SpareScratchpadBytes(), kBytes);
}

TEST(PrepareWorkers, CreationLeavesTheCreatingThreadACoreAndRunsGetWhatTheyLeaveFree) {
  const int cores = UsableCores();
  const int pool = std::min(cores, 4);
  const PrepareWorkers all = WorkersFor(0);
  EXPECT_EQ(all.while_creating, std::max(1, pool - 1));
  EXPECT_EQ(all.after_creation, pool);
  EXPECT_EQ(WorkersFor(cores).after_creation, pool);
  EXPECT_EQ(WorkersFor(cores + 3).after_creation, pool);
  // Runs that take every core finish the preparation first; runs that leave cores free do not.
  EXPECT_TRUE(all.first_run_finishes);
  EXPECT_TRUE(WorkersFor(cores).first_run_finishes);
  if (cores >= 2) {
    EXPECT_EQ(WorkersFor(1).after_creation, std::min(cores - 1, pool));
    EXPECT_EQ(WorkersFor(cores - 1).after_creation, 1);
    EXPECT_FALSE(WorkersFor(cores - 1).first_run_finishes);
  }
}

}  // namespace
}  // namespace epctx::exec
