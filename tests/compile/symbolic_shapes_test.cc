// The symbolic shape inference rule by rule, on small IR graphs whose node outputs ONNX's
// inference knew nothing about (as after a shape computed at run time).
#include "compile/symbolic/symbolic_shapes.h"

#include <gtest/gtest.h>

#include <climits>

namespace epctx::compile {
namespace {

IrAttribute Int(const std::string& name, int64_t v) {
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kInt;
  a.i = v;
  return a;
}

IrAttribute IntsAttribute(const std::string& name, std::vector<int64_t> v) {
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kInts;
  a.ints = std::move(v);
  return a;
}

IrAttribute Str(const std::string& name, const std::string& s) {
  IrAttribute a;
  a.name = name;
  a.type = exec::AttrType::kString;
  a.s = s;
  return a;
}

class Builder {
 public:
  explicit Builder(int64_t opset = 17) {
    g.name = "test";
    g.opsets[""] = opset;
  }

  // dims: a name is a symbolic dim, "?" an unnamed unknown one, digits a static one.
  int Input(const std::string& name, const std::vector<std::string>& dims,
            DataType dtype = DataType::kFloat32) {
    IrValue v;
    v.name = name;
    v.dtype = dtype;
    v.shape_known = true;
    for (const std::string& d : dims) {
      const bool digits = !d.empty() && std::isdigit(static_cast<unsigned char>(d[0]));
      v.shape.push_back(digits ? std::stoll(d) : -1);
      v.dim_names.push_back(digits || d == "?" ? "" : d);
    }
    int index = g.AddValue(std::move(v));
    g.inputs.push_back(index);
    return index;
  }

  int Ints(const std::vector<int64_t>& values, bool scalar = false) {
    std::vector<int64_t> shape;
    if (!scalar) shape.push_back(static_cast<int64_t>(values.size()));
    return g.AddConstant("c", ConstantData::FromVector<int64_t>(DataType::kInt64, shape, values));
  }
  int Scalar(int64_t v) { return Ints({v}, true); }

  int Floats(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return g.AddConstant("w", ConstantData::FromVector<float>(DataType::kFloat32, shape,
                                                              std::vector<float>(n, 0.0f)));
  }

  // A node whose outputs have no shape in the IR.
  std::vector<int> Node(const std::string& op, std::vector<int> inputs, size_t outputs = 1,
                        std::vector<IrAttribute> attrs = {}, DataType dtype = DataType::kFloat32) {
    IrNode n;
    n.name = op + std::to_string(g.nodes.size());
    n.op_type = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    for (size_t o = 0; o < outputs; ++o) {
      IrValue v;
      v.name = g.UniqueName(n.name + "_out");
      v.dtype = dtype;
      n.outputs.push_back(g.AddValue(std::move(v)));
    }
    std::vector<int> out = n.outputs;
    g.nodes.push_back(std::move(n));
    return out;
  }
  int Op(const std::string& op, std::vector<int> inputs, std::vector<IrAttribute> attrs = {},
         DataType dtype = DataType::kFloat32) {
    return Node(op, std::move(inputs), 1, std::move(attrs), dtype)[0];
  }
  int IntOp(const std::string& op, std::vector<int> inputs, std::vector<IrAttribute> attrs = {}) {
    return Op(op, std::move(inputs), std::move(attrs), DataType::kInt64);
  }

  // The dims of `shape` as the IR has them: Shape -> Gather(i) -> Unsqueeze, concatenated.
  int DimsOf(int x, const std::vector<int64_t>& dims) {
    int shape = IntOp("Shape", {x});
    std::vector<int> parts;
    for (int64_t d : dims) {
      int picked = IntOp("Gather", {shape, Scalar(d)}, {Int("axis", 0)});
      parts.push_back(IntOp("Unsqueeze", {picked, Ints({0})}));
    }
    return parts.size() == 1 ? parts[0] : IntOp("Concat", parts, {Int("axis", 0)});
  }

  SymbolicShapeStats Infer() { return InferSymbolicShapes(g); }

  // "[batch,min(64,seq)]"; "?" for an unknown rank, "?" for an unnamed unknown dim.
  std::string ShapeOf(int index) const {
    const IrValue& v = g.values[static_cast<size_t>(index)];
    if (!v.shape_known) return "?";
    std::string out = "[";
    for (size_t i = 0; i < v.shape.size(); ++i) {
      if (i > 0) out += ',';
      out += v.shape[i] >= 0          ? std::to_string(v.shape[i])
             : v.dim_names[i].empty() ? "?"
                                      : v.dim_names[i];
    }
    return out + "]";
  }
  const std::string& DimName(int index, size_t dim) const {
    return g.values[static_cast<size_t>(index)].dim_names.at(dim);
  }

  IrGraph g;
};

bool IsFresh(const std::string& name) {
  return name.rfind("sym", 0) == 0;
}

TEST(SymbolicShapes, ShapeTensorsBuildReshapeTargets) {
  Builder b;
  int x = b.Input("x", {"batch", "seq", "128"});
  int target = b.IntOp("Concat", {b.DimsOf(x, {0, 1}), b.Ints({2, 64})}, {Int("axis", 0)});
  int r = b.Op("Reshape", {x, target});
  int t = b.Op("Transpose", {r}, {IntsAttribute("perm", {0, 2, 1, 3})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(target), "[4]");
  EXPECT_EQ(b.ShapeOf(r), "[batch,seq,2,64]");
  EXPECT_EQ(b.ShapeOf(t), "[batch,2,seq,64]");
}

TEST(SymbolicShapes, ReshapeCopiesZerosAndInfersMinusOne) {
  Builder b;
  int x = b.Input("x", {"batch", "seq", "128"});
  int split = b.Op("Reshape", {x, b.Ints({0, 0, -1, 32})});
  int flat = b.Op("Reshape", {x, b.Ints({-1, 128})});
  int merged = b.Op("Reshape", {split, b.Ints({0, 0, -1})});
  int all = b.Op("Reshape", {x, b.Ints({-1})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(split), "[batch,seq,4,32]");
  EXPECT_EQ(b.ShapeOf(flat), "[batch*seq,128]");
  EXPECT_EQ(b.ShapeOf(merged), "[batch,seq,128]");
  EXPECT_EQ(b.ShapeOf(all), "[128*batch*seq]");
}

TEST(SymbolicShapes, ReshapeElementThatMayBeZeroIsNotTrusted) {
  Builder b;
  int x = b.Input("x", {"batch", "seq"});
  int y = b.Input("y", {"n"});
  // n may be 0 at run time, which copies x's dim instead: the dim is not known to be n.
  int target = b.IntOp("Concat", {b.DimsOf(y, {0}), b.Ints({-1})}, {Int("axis", 0)});
  int r = b.Op("Reshape", {x, target});
  int kept = b.Op("Reshape", {x, target}, {Int("allowzero", 1)});
  b.Infer();
  ASSERT_EQ(b.ShapeOf(r).size() > 0, true);
  EXPECT_TRUE(IsFresh(b.DimName(r, 0))) << b.ShapeOf(r);
  EXPECT_TRUE(IsFresh(b.DimName(r, 1))) << b.ShapeOf(r);
  EXPECT_EQ(b.DimName(kept, 0), "n");
}

TEST(SymbolicShapes, ExpandThroughTheExportersWhereEqualPattern) {
  Builder b;
  int ids = b.Input("ids", {"batch", "seq"}, DataType::kInt64);
  int shape = b.DimsOf(ids, {0, 1});
  IrAttribute one;
  one.name = "value";
  one.type = exec::AttrType::kTensor;
  one.tensor = ConstantData::FromVector<int64_t>(DataType::kInt64, {1}, {1});
  int ones = b.IntOp("ConstantOfShape", {b.IntOp("Shape", {shape})}, {one});
  int minus = b.IntOp("Mul", {ones, b.Scalar(-1)});
  int eq = b.Op("Equal", {shape, minus}, {}, DataType::kBool);
  int where = b.IntOp("Where", {eq, ones, shape});
  int expanded = b.IntOp("Expand", {b.IntOp("Unsqueeze", {b.Scalar(0), b.Ints({0, 1})}), where});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(ones), "[2]");
  EXPECT_EQ(b.ShapeOf(expanded), "[batch,seq]");
}

TEST(SymbolicShapes, SliceOfABufferBySequenceLength) {
  Builder b;
  int ids = b.Input("ids", {"batch", "seq"}, DataType::kInt64);
  int word = b.Input("word", {"batch", "seq", "8"});
  int buffer = b.g.AddConstant("pos", ConstantData::FromVector<int64_t>(DataType::kInt64, {1, 64},
                                                                        std::vector<int64_t>(64)));
  int positions =
      b.IntOp("Slice", {buffer, b.Ints({0}), b.DimsOf(ids, {1}), b.Ints({1}), b.Ints({1})});
  int table = b.Floats({64, 8});
  int pos = b.Op("Gather", {table, positions});
  int sum = b.Op("Add", {word, pos});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(positions), "[1,min(64,seq)]");
  EXPECT_EQ(b.ShapeOf(pos), "[1,min(64,seq),8]");
  // min(64, seq) is 1 only when seq is: the broadcast is seq in every run.
  EXPECT_EQ(b.ShapeOf(sum), "[batch,seq,8]");
}

TEST(SymbolicShapes, SliceSqueezeAndRangeOfAShapeTensor) {
  Builder b;
  int x = b.Input("x", {"batch", "seq"});
  int last =
      b.IntOp("Slice", {b.IntOp("Shape", {x}), b.Ints({-1}), b.Ints({INT64_MAX}), b.Ints({0})});
  int n = b.IntOp("Squeeze", {last, b.Ints({0})});
  int range = b.IntOp("Range", {b.Scalar(0), n, b.Scalar(1)});
  int halves = b.IntOp("Range", {b.Scalar(0), n, b.Scalar(2)});
  int tail = b.Op("Slice", {x, b.Ints({1}), b.Ints({INT64_MAX}), b.Ints({1})});
  int reversed = b.Op("Slice", {x, b.Ints({-1}), b.Ints({INT64_MIN}), b.Ints({0}), b.Ints({-1})});
  int middle = b.Op("Slice", {x, b.Ints({2}), b.Ints({-2}), b.Ints({1})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(last), "[1]");
  EXPECT_EQ(b.ShapeOf(n), "[]");
  EXPECT_EQ(b.ShapeOf(range), "[seq]");
  EXPECT_EQ(b.ShapeOf(halves), "[floor((seq+1)/2)]");
  // min(1, seq) <= seq, so the length needs no max(0, ...).
  EXPECT_EQ(b.ShapeOf(tail), "[batch,seq-min(1,seq)]");
  EXPECT_EQ(b.ShapeOf(reversed), "[batch,seq]");
  // seq - 2 - min(2, seq) is not simplified further, but it is the same in every run.
  EXPECT_EQ(b.ShapeOf(middle).rfind("[batch,", 0), 0u) << b.ShapeOf(middle);
  EXPECT_FALSE(IsFresh(b.DimName(middle, 1))) << b.ShapeOf(middle);
}

TEST(SymbolicShapes, BroadcastingRules) {
  Builder b;
  int xy = b.Op("Add", {b.Input("a", {"x", "1"}), b.Input("b", {"1", "y"})});
  int fixed = b.Op("Mul", {b.Input("c", {"s"}), b.Input("d", {"5"})});
  int same = b.Op("Sub", {b.Input("e", {"p"}), b.Input("f", {"p"})});
  int differ = b.Op("Div", {b.Input("g", {"p"}), b.Input("h", {"q"})});
  int ranks = b.Op("Add", {b.Input("i", {"n", "c", "1"}), b.Input("j", {"7"})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(xy), "[x,y]");
  EXPECT_EQ(b.ShapeOf(fixed), "[5]");
  EXPECT_EQ(b.ShapeOf(same), "[p]");
  // p and q may be 1 and 5: the result is neither.
  EXPECT_TRUE(IsFresh(b.DimName(differ, 0))) << b.ShapeOf(differ);
  EXPECT_EQ(b.ShapeOf(ranks), "[n,c,7]");
}

TEST(SymbolicShapes, MatMulGemmTranspose) {
  Builder b;
  int x = b.Input("x", {"b", "s", "64"});
  int proj = b.Op("MatMul", {x, b.Floats({64, 32})});
  int vec = b.Op("MatMul", {b.Input("v", {"8"}), b.Input("m", {"8", "n"})});
  int batched = b.Op("MatMul", {b.Input("q", {"b", "1", "s", "4"}), b.Input("k", {"h", "4", "t"})});
  int gemm =
      b.Op("Gemm", {b.Input("ga", {"m", "4"}), b.Input("gb", {"n", "4"})}, {Int("transB", 1)});
  int reversed = b.Op("Transpose", {x});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(proj), "[b,s,32]");
  EXPECT_EQ(b.ShapeOf(vec), "[n]");
  EXPECT_EQ(b.ShapeOf(batched), "[b,h,s,t]");
  EXPECT_EQ(b.ShapeOf(gemm), "[m,n]");
  EXPECT_EQ(b.ShapeOf(reversed), "[64,s,b]");
}

TEST(SymbolicShapes, ConcatSplitSoftmaxLayerNorm) {
  Builder b;
  int cat = b.Op("Concat", {b.Input("a", {"b", "s"}), b.Input("c", {"b", "3"})}, {Int("axis", 1)});
  std::vector<int> thirds = b.Node("Split", {b.Input("x", {"b", "192"})}, 3, {Int("axis", 1)});
  std::vector<int> sized =
      b.Node("Split", {b.Input("y", {"b", "30"}), b.Ints({10, 20})}, 2, {Int("axis", 1)});
  int sm = b.Op("Softmax", {cat}, {Int("axis", -1)});
  std::vector<int> ln = b.Node("LayerNormalization",
                               {b.Input("z", {"b", "s", "64"}), b.Floats({64}), b.Floats({64})}, 3);
  b.Infer();
  EXPECT_EQ(b.ShapeOf(cat), "[b,s+3]");
  for (int t : thirds) EXPECT_EQ(b.ShapeOf(t), "[b,64]");
  EXPECT_EQ(b.ShapeOf(sized[0]), "[b,10]");
  EXPECT_EQ(b.ShapeOf(sized[1]), "[b,20]");
  EXPECT_EQ(b.ShapeOf(sm), "[b,s+3]");
  EXPECT_EQ(b.ShapeOf(ln[0]), "[b,s,64]");
  EXPECT_EQ(b.ShapeOf(ln[1]), "[b,s,1]");
}

TEST(SymbolicShapes, SplitIntoChunksFromOpset18) {
  Builder b(18);
  std::vector<int> parts =
      b.Node("Split", {b.Input("x", {"b", "s"})}, 3, {Int("axis", 1), Int("num_outputs", 3)});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(parts[0]), "[b,floor((s+2)/3)]");
  EXPECT_EQ(b.ShapeOf(parts[1]), "[b,floor((s+2)/3)]");
  EXPECT_EQ(b.ShapeOf(parts[2]), "[b,s-2*floor((s+2)/3)]");
}

TEST(SymbolicShapes, GatherWhereCastAndUnaryOps) {
  Builder b;
  int x = b.Input("x", {"b", "s", "8"});
  int picked = b.Op("Gather", {x, b.Input("i", {"k"}, DataType::kInt64)}, {Int("axis", 1)});
  int cast = b.Op("Cast", {picked}, {Int("to", 7)}, DataType::kInt64);
  int relu = b.Op("Relu", {cast});
  int where = b.Op("Where", {b.Input("m", {"1", "1", "8"}, DataType::kBool), x, b.Floats({})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(picked), "[b,k,8]");
  EXPECT_EQ(b.ShapeOf(cast), "[b,k,8]");
  EXPECT_EQ(b.ShapeOf(relu), "[b,k,8]");
  EXPECT_EQ(b.ShapeOf(where), "[b,s,8]");
}

TEST(SymbolicShapes, TileConstantOfShapeAndSize) {
  Builder b;
  int x = b.Input("x", {"b", "s", "4"});
  int y = b.Input("y", {"n", "2"});
  int repeats = b.IntOp("Concat", {b.Ints({3}), b.DimsOf(x, {1})}, {Int("axis", 0)});
  int tiled = b.Op("Tile", {y, repeats});
  int filled = b.Op("ConstantOfShape", {b.DimsOf(x, {0, 2})});
  int flat = b.Op("Reshape", {x, b.IntOp("Unsqueeze", {b.IntOp("Size", {x}), b.Ints({0})})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(tiled), "[3*n,2*s]");
  EXPECT_EQ(b.ShapeOf(filled), "[b,4]");
  EXPECT_EQ(b.ShapeOf(flat), "[4*b*s]");
}

TEST(SymbolicShapes, StaticDimsFromOnnxAreNeverChanged) {
  Builder b;
  int x = b.Input("x", {"b", "5"});
  int y = b.Op("Relu", {x});
  // ONNX's inference (or the model's value_info) said [?, 7]: the 7 stays.
  IrValue& v = b.g.values[static_cast<size_t>(y)];
  v.shape_known = true;
  v.shape = {-1, 7};
  v.dim_names = {"", ""};
  b.Infer();
  EXPECT_EQ(b.ShapeOf(y), "[b,7]");
}

TEST(SymbolicShapes, DeclaredOpenDimsAreNotMadeStatic) {
  Builder b;
  int x = b.Input("x", {"b", "seq"});
  int y = b.Op("Relu", {x});
  // Were ONNX (or a rule) to say y is [?, 1], y keeps its 1, but seq stays open elsewhere.
  IrValue& v = b.g.values[static_cast<size_t>(y)];
  v.shape_known = true;
  v.shape = {-1, 1};
  v.dim_names = {"", ""};
  int z = b.Op("Neg", {x});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(y), "[b,1]");
  EXPECT_EQ(b.ShapeOf(z), "[b,seq]");
}

TEST(SymbolicShapes, OnnxNamesAreUnifiedWithComputedDims) {
  Builder b;
  int x = b.Input("x", {"batch", "seq"});
  int n = b.IntOp("Squeeze", {b.DimsOf(x, {1}), b.Ints({0})});
  int range = b.IntOp("Range", {b.Scalar(0), n, b.Scalar(1)});
  int later = b.IntOp("Neg", {range});
  for (int v : {range, later}) {
    IrValue& value = b.g.values[static_cast<size_t>(v)];
    value.shape_known = true;
    value.shape = {-1};
    value.dim_names = {"unk__0"};
  }
  b.Infer();
  EXPECT_EQ(b.ShapeOf(range), "[seq]");
  EXPECT_EQ(b.ShapeOf(later), "[seq]");
}

TEST(SymbolicShapes, GraphInputsAndOutputsKeepTheirDeclarations) {
  Builder b;
  int x = b.Input("x", {"?", "4"});
  int y = b.Op("Relu", {x});
  int z = b.Op("Relu", {y});
  b.g.outputs.push_back(z);
  SymbolicShapeStats stats = b.Infer();
  EXPECT_EQ(b.ShapeOf(x), "[?,4]");
  EXPECT_EQ(b.ShapeOf(z), "?");
  EXPECT_EQ(b.ShapeOf(y).substr(b.ShapeOf(y).size() - 3), ",4]");
  EXPECT_TRUE(IsFresh(b.DimName(y, 0)));
  EXPECT_EQ(stats.values, 2);
  EXPECT_EQ(stats.unknown_rank_before, 2);
  EXPECT_EQ(stats.unknown_rank_after, 1);  // the graph output
}

TEST(SymbolicShapes, IfBodiesSeeCapturedShapesAndMergeBranches) {
  Builder b;
  int x = b.Input("x", {"batch", "seq", "128"});
  int r = b.Op("Reshape",
               {x, b.IntOp("Concat", {b.DimsOf(x, {0, 1}), b.Ints({2, 64})}, {Int("axis", 0)})});
  int cond = b.Input("cond", {}, DataType::kBool);
  auto branch = [&](const std::string& op) {
    auto body = std::make_shared<IrGraph>();
    body->name = op;
    body->opsets[""] = 17;
    IrValue captured;
    captured.name = "r";
    captured.dtype = DataType::kFloat32;  // imported before the outer shape was known
    int in = body->AddValue(captured);
    body->inputs.push_back(in);
    IrValue mid, out;
    mid.name = "mid";
    mid.dtype = out.dtype = DataType::kFloat32;
    out.name = "out";
    int m = body->AddValue(mid), o = body->AddValue(out);
    IrNode n1, n2;
    n1.op_type = op;
    n1.inputs = {in};
    n1.outputs = {m};
    n2.op_type = "Neg";
    n2.inputs = {m};
    n2.outputs = {o};
    body->nodes = {n1, n2};
    body->outputs.push_back(o);
    IrAttribute a;
    a.type = exec::AttrType::kGraph;
    a.body = body;
    return a;
  };
  IrAttribute then_branch = branch("Relu"), else_branch = branch("Sigmoid");
  then_branch.name = "then_branch";
  else_branch.name = "else_branch";
  std::vector<int> out = b.Node("If", {cond, r}, 1, {then_branch, else_branch});
  b.g.nodes.back().implicit_inputs = 1;
  b.Infer();
  const IrGraph& then_body = *b.g.nodes.back().attrs[0].body;
  EXPECT_EQ(then_body.values[1].shape, (std::vector<int64_t>{-1, -1, 2, 64}));
  EXPECT_EQ(then_body.values[1].dim_names, (std::vector<std::string>{"batch", "seq", "", ""}));
  EXPECT_EQ(b.ShapeOf(out[0]), "[batch,seq,2,64]");
}

TEST(SymbolicShapes, ConvAndPoolWindowsOfSymbolicSizes) {
  Builder b;
  int x = b.Input("x", {"n", "3", "h", "w"});
  int conv = b.Op("Conv", {x, b.Floats({8, 3, 3, 3})},
                  {IntsAttribute("pads", {1, 1, 1, 1}), IntsAttribute("strides", {2, 2})});
  int down = b.Op("Conv", {x, b.Floats({8, 3, 1, 1})}, {IntsAttribute("strides", {2, 2})});
  int same = b.Op("Conv", {x, b.Floats({8, 3, 3, 3})},
                  {Str("auto_pad", "SAME_UPPER"), IntsAttribute("strides", {2, 2})});
  int pool = b.Op("MaxPool", {conv},
                  {IntsAttribute("kernel_shape", {2, 2}), IntsAttribute("strides", {2, 2})});
  int global = b.Op("GlobalAveragePool", {conv});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(conv), "[n,8,floor((h+1)/2),floor((w+1)/2)]");
  // The strided 1x1 branch of a ResNet block has the same size.
  EXPECT_EQ(b.ShapeOf(down), b.ShapeOf(conv));
  EXPECT_EQ(b.ShapeOf(same), b.ShapeOf(conv));
  EXPECT_EQ(b.ShapeOf(pool), "[n,8,floor((floor((h+1)/2))/2),floor((floor((w+1)/2))/2)]");
  EXPECT_EQ(b.ShapeOf(global), "[n,8,1,1]");
}

TEST(SymbolicShapes, SqueezeWithoutAxesNeedsKnownOnes) {
  Builder b;
  int maybe = b.Op("Squeeze", {b.Input("x", {"1", "s"})});
  int known = b.Op("Squeeze", {b.Input("y", {"1", "5"})});
  int axes = b.Op("Squeeze", {b.Input("z", {"1", "s"}), b.Ints({0})});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(maybe), "?");  // s may be 1
  EXPECT_EQ(b.ShapeOf(known), "[5]");
  EXPECT_EQ(b.ShapeOf(axes), "[s]");
}

TEST(SymbolicShapes, ReductionsAndPads) {
  Builder b;
  int x = b.Input("x", {"b", "s", "8"});
  int sum = b.Op("ReduceSum", {x, b.Ints({1})}, {Int("keepdims", 0)});
  int mean = b.Op("ReduceMean", {x}, {IntsAttribute("axes", {-1})});
  int padded = b.Op("Pad", {x, b.Ints({0, 1, 0, 0, 2, 0})});
  int arg = b.Op("ArgMax", {x}, {Int("axis", 2), Int("keepdims", 0)}, DataType::kInt64);
  b.Infer();
  EXPECT_EQ(b.ShapeOf(sum), "[b,8]");
  EXPECT_EQ(b.ShapeOf(mean), "[b,s,1]");
  EXPECT_EQ(b.ShapeOf(padded), "[b,s+3,8]");
  EXPECT_EQ(b.ShapeOf(arg), "[b,s]");
}

TEST(SymbolicShapes, ArithmeticComparisonsAndSelectionOnShapeTensors) {
  Builder b;
  int x = b.Input("x", {"b", "seq"});
  int seq = b.DimsOf(x, {1});
  auto filled = [&](int shape) { return b.Op("ConstantOfShape", {shape}); };
  int negative = b.Op("Less", {seq, b.Ints({0})}, {}, DataType::kBool);
  int picked = filled(b.IntOp("Where", {negative, b.Ints({5}), seq}));
  int capped = filled(b.IntOp("Min", {seq, b.Ints({INT64_MAX})}));
  int floored = filled(b.IntOp("Max", {seq, b.Ints({0})}));
  int open = filled(b.IntOp("Max", {seq, b.Ints({1})}));
  int not_minus_one =
      b.Op("Not", {b.Op("Equal", {seq, b.Ints({-1})}, {}, DataType::kBool)}, {}, DataType::kBool);
  int kept = filled(b.IntOp("Where", {not_minus_one, seq, b.Ints({3})}));
  int halved = filled(b.IntOp("Div", {b.IntOp("Mul", {seq, b.Ints({2})}), b.Ints({2})}));
  int less_one = filled(b.IntOp("Sub", {seq, b.Ints({1})}));
  int sum = filled(b.IntOp("Add", {seq, b.DimsOf(x, {0})}));
  b.Infer();
  EXPECT_EQ(b.ShapeOf(picked), "[seq]");
  EXPECT_EQ(b.ShapeOf(capped), "[seq]");
  EXPECT_EQ(b.ShapeOf(floored), "[seq]");
  EXPECT_EQ(b.ShapeOf(open), "[max(1,seq)]");
  EXPECT_EQ(b.ShapeOf(kept), "[seq]");
  EXPECT_EQ(b.ShapeOf(halved), "[seq]");
  EXPECT_EQ(b.ShapeOf(less_one), "[seq-1]");
  EXPECT_EQ(b.ShapeOf(sum), "[b+seq]");
}

TEST(SymbolicShapes, MoreLayoutRules) {
  Builder b;
  int x = b.Input("x", {"n", "c", "h", "w"});
  int flat = b.Op("Flatten", {x}, {Int("axis", 2)});
  std::vector<int> top = b.Node("TopK", {x, b.Ints({3})}, 2, {Int("axis", 1)});
  int d2s = b.Op("DepthToSpace", {x}, {Int("blocksize", 2)});
  int sized = b.Op("Resize", {x, -1, -1, b.Ints({1, 3, 8, 8})});
  int nz = b.Op("NonZero", {x}, {}, DataType::kInt64);
  std::vector<int> drop = b.Node("Dropout", {x}, 2);
  int elements = b.Op("GatherElements", {x, b.Input("i", {"n", "c", "h", "k"}, DataType::kInt64)});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(flat), "[c*n,h*w]");
  EXPECT_EQ(b.ShapeOf(top[0]), "[n,3,h,w]");
  EXPECT_EQ(b.ShapeOf(top[1]), "[n,3,h,w]");
  EXPECT_EQ(b.ShapeOf(d2s), "[n,floor((c)/4),2*h,2*w]");
  EXPECT_EQ(b.ShapeOf(sized), "[1,3,8,8]");
  EXPECT_EQ(b.ShapeOf(nz).rfind("[4,sym", 0), 0u) << b.ShapeOf(nz);
  EXPECT_EQ(b.ShapeOf(drop[1]), "[n,c,h,w]");
  EXPECT_EQ(b.ShapeOf(elements), "[n,c,h,k]");
}

TEST(SymbolicShapes, UnknownOperatorsKeepWhatOnnxKnew) {
  Builder b;
  int x = b.Input("x", {"b", "4"});
  int y = b.Op("NotAnOnnxOp", {x});
  IrValue& v = b.g.values[static_cast<size_t>(y)];
  v.shape_known = true;
  v.shape = {-1, 3};
  v.dim_names = {"b", ""};
  int z = b.Op("Relu", {y});
  int w = b.Op("NotAnOnnxOp", {x});
  b.Infer();
  EXPECT_EQ(b.ShapeOf(y), "[b,3]");
  EXPECT_EQ(b.ShapeOf(z), "[b,3]");
  EXPECT_EQ(b.ShapeOf(w), "?");
}

}  // namespace
}  // namespace epctx::compile
