// A Llama MLP's gate, Mul(Mul(g, Sigmoid(g)), u), becomes one com.epctx SwiGlu (FuseSwiGlu):
// the optimised graph must compute exactly what the unoptimised one does (the kernel takes the
// Sigmoid kernel's sigmoid and rounds the two products in the graph's order), in either operand
// order, on one and two threads, across the kernel's chunks and a tail of odd length; and where
// the fused node would not compute the graph (an intermediate read elsewhere, u broadcast, the
// sigmoid of another value, shapes not provably one), the nodes must stay.
#include <gtest/gtest.h>

#include "compile/dnnl_graph_helpers.h"
#include "compile/passes/passes.h"

namespace epctx::testing::dnnl {
namespace {

// How a test writes the gate.
struct GateForm {
  bool g_first = true;     // Mul(g, Sigmoid(g)) or Mul(Sigmoid(g), g)
  bool silu_first = true;  // Mul(silu, u) or Mul(u, silu)
};

// silu(g) * u as `form` writes it; returns the output. `sigmoid_of`: the Sigmoid's input (g
// unless a test gives another value).
std::string Gate(ModelBuilder& b, const std::string& g, const std::string& u,
                 const GateForm& form = {}, const std::string& sigmoid_of = "") {
  const std::string s = b.Node("Sigmoid", {sigmoid_of.empty() ? g : sigmoid_of});
  const std::string silu = b.Node("Mul", form.g_first ? std::vector{g, s} : std::vector{s, g});
  return b.Node("Mul", form.silu_first ? std::vector{silu, u} : std::vector{u, silu});
}

// Every operand order, a batch dim of one symbolic name, 2 x 3 x 700 elements: the kernel's
// 1024-float chunks end inside a thread's range, and the tensor's last 4 elements are a tail.
TEST(FuseSwiGlu, EveryOperandOrderExactlyOnOneAndTwoThreads) {
  for (int threads : {1, 2}) {
    for (bool g_first : {true, false}) {
      for (bool silu_first : {true, false}) {
        ModelBuilder b(71);
        const std::vector<int64_t> shape = {-1, 3, 700};
        const std::string g = b.Input("g", shape, {"batch"}), u = b.Input("u", shape, {"batch"});
        b.Output(Gate(b, g, u, {.g_first = g_first, .silu_first = silu_first}));
        const std::vector<int64_t> run = {2, 3, 700};
        const std::string what = "threads " + std::to_string(threads) + ", g first " +
                                 std::to_string(g_first) + ", silu first " +
                                 std::to_string(silu_first);
        const compile::IrGraph opt = OptimiseAndCompareWithin(
            b, {RandomTensor(run, b.rng()), RandomTensor(run, b.rng())}, 0, what, threads);
        EXPECT_EQ(CountOps(opt, "SwiGlu"), 1) << what;
        EXPECT_EQ(CountOps(opt, "Sigmoid"), 0) << what;
        EXPECT_EQ(CountOps(opt, "Mul"), 0) << what;
      }
    }
  }
}

// The sigmoid read by something else too (a graph output): the nodes stay.
TEST(FuseSwiGlu, ASigmoidReadElsewhereStays) {
  ModelBuilder b(72);
  const std::vector<int64_t> shape = {2, 64};
  const std::string g = b.Input("g", shape), u = b.Input("u", shape);
  const std::string s = b.Node("Sigmoid", {g});
  b.Output(b.Node("Mul", {b.Node("Mul", {g, s}), u}));
  b.Output(s);
  const compile::IrGraph opt = OptimiseAndCompareWithin(
      b, {RandomTensor(shape, b.rng()), RandomTensor(shape, b.rng())}, 0, "sigmoid read elsewhere");
  EXPECT_EQ(CountOps(opt, "SwiGlu"), 0);
  EXPECT_EQ(CountOps(opt, "Sigmoid"), 1);
}

// u broadcast over g's rows: the fused kernel does not broadcast, so the nodes stay.
TEST(FuseSwiGlu, ABroadcastUStays) {
  ModelBuilder b(73);
  const std::string g = b.Input("g", {2, 64}), u = b.Input("u", {64});
  b.Output(Gate(b, g, u));
  const compile::IrGraph opt = OptimiseAndCompareWithin(
      b, {RandomTensor({2, 64}, b.rng()), RandomTensor({64}, b.rng())}, 0, "u broadcast");
  EXPECT_EQ(CountOps(opt, "SwiGlu"), 0);
  EXPECT_EQ(CountOps(opt, "Mul"), 2);
}

// Dims of different symbolic names may differ at run time: the nodes stay.
TEST(FuseSwiGlu, ShapesNotProvablyOneStay) {
  ModelBuilder b(74);
  const std::string g = b.Input("g", {-1, 64}, {"rows"}), u = b.Input("u", {-1, 64}, {"other"});
  b.Output(Gate(b, g, u));
  const compile::IrGraph opt = OptimiseAndCompareWithin(
      b, {RandomTensor({3, 64}, b.rng()), RandomTensor({3, 64}, b.rng())}, 0, "two symbols");
  EXPECT_EQ(CountOps(opt, "SwiGlu"), 0);
}

// g * sigmoid(h) with h another value is no gate: the nodes stay.
TEST(FuseSwiGlu, TheSigmoidOfAnotherValueStays) {
  ModelBuilder b(75);
  const std::vector<int64_t> shape = {2, 64};
  const std::string g = b.Input("g", shape), h = b.Input("h", shape), u = b.Input("u", shape);
  b.Output(Gate(b, g, u, {}, h));
  const compile::IrGraph opt = OptimiseAndCompareWithin(
      b, {RandomTensor(shape, b.rng()), RandomTensor(shape, b.rng()), RandomTensor(shape, b.rng())},
      0, "sigmoid of h");
  EXPECT_EQ(CountOps(opt, "SwiGlu"), 0);
  EXPECT_EQ(CountOps(opt, "Sigmoid"), 1);
}

}  // namespace
}  // namespace epctx::testing::dnnl
