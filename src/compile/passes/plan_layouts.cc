// The activation layout plan: which values live in the channel-blocked layout
// (exec/kernels/onednn/activation_layout.h) and where Reorder nodes move a value between layouts.
//
// One walk in execution order. A DnnlConv writes the blocked layout when one of its consumers
// can read it or its input has a block's channels or more (see PlanConv); pooling, Concat along
// whole channel blocks and element-wise ops whose operands are blocked keep the layout
// (element-wise kernels work on the physical shape unchanged); any other reader gets a plain copy
// made by a Reorder just before its first reader. The blocked layout pads channels with zeros up to
// a multiple of 16, so an element-wise op may keep it only when it maps zeros to zeros or the
// channel count has no padding. Graph inputs and outputs stay plain (a convolution writing a graph
// output writes a blocked copy that a Reorder after it makes plain).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "compile/packing/pack_weights.h"
#include "compile/passes/passes.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/activation_layout.h"
#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/isa.h"
#include "exec/kernels/onednn/post_ops.h"
#include "util/status_macros.h"

namespace epctx::compile {
namespace {

using exec::kernels::onednn::ActivationLayout;
using exec::kernels::onednn::PhysicalShape;

bool IsUnaryKeepingZero(std::string_view op) {
  for (std::string_view z :
       {"Relu", "LeakyRelu", "Tanh", "HardSwish", "Elu", "Neg", "Abs", "Sqrt", "Identity", "Sign",
        "Ceil", "Floor", "Round", "Selu", "ThresholdedRelu", "Gelu", "Mish"}) {
    if (op == z) return true;
  }
  return false;
}

bool IsUnaryOther(std::string_view op) {
  for (std::string_view z : {"Sigmoid", "HardSigmoid", "Exp", "Softplus", "Softsign", "Cos", "Erf",
                             "Reciprocal", "Log"}) {
    if (op == z) return true;
  }
  return false;
}

bool IsBinary(std::string_view op) {
  for (std::string_view z : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    if (op == z) return true;
  }
  return false;
}

bool IsPool(const IrNode& n) {
  return n.domain.empty() && (n.op_type == "MaxPool" || n.op_type == "AveragePool" ||
                              n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool");
}

bool IsDnnlConv(const IrNode& n) {
  return n.IsOp(ops::kDomain, ops::kDnnlConv);
}

class Planner {
 public:
  Planner(IrGraph& g, ActivationLayout blocked)
      : g_(g),
        blocked_(blocked),
        block_(exec::kernels::onednn::ChannelBlock(blocked)),
        is_blocked_(g.values.size(), false),
        other_(g.values.size(), -1),
        channels_(g.values.size(), 0),
        consumers_(g.values.size()) {
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      for (int i : g.nodes[k].inputs) {
        if (i >= 0) consumers_[static_cast<size_t>(i)].push_back(static_cast<int>(k));
      }
    }
  }

  PassStats Run() {
    PassStats stats{"plan-layouts", 0};
    std::vector<IrNode> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    absorbed_.assign(nodes.size(), false);
    for (IrNode& n : nodes) {
      if (absorbed_[static_cast<size_t>(&n - nodes.data())]) continue;
      if (Plan(n)) stats.changed++;
      g_.nodes.push_back(std::move(n));
      for (IrNode& r : after_) g_.nodes.push_back(std::move(r));
      after_.clear();
    }
    stats.changed += reorders_;
    if (stats.changed > 0) g_.DeclareEpctxOpset();
    return stats;
  }

 private:
  const IrValue& V(int v) const { return g_.values[static_cast<size_t>(v)]; }
  bool Blocked(int v) const {
    return v >= 0 && static_cast<size_t>(v) < is_blocked_.size() &&
           is_blocked_[static_cast<size_t>(v)];
  }
  // Keeps the per-value tables as long as the value list (constants are added on the way).
  void Grow() {
    is_blocked_.resize(g_.values.size(), false);
    other_.resize(g_.values.size(), -1);
    channels_.resize(g_.values.size(), 0);
  }

  // A value that may be stored blocked: float32 activations of rank 3 to 5 with a known channel
  // count, not a graph output.
  bool Eligible(int v) const {
    if (v < 0 || IsGraphOutput(g_, v)) return false;
    const IrValue& x = V(v);
    return x.dtype == DataType::kFloat32 && !x.is_constant() && x.shape_known &&
           x.shape.size() >= 3 && x.shape.size() <= 5 && x.shape[1] >= 1;
  }
  // A value a Reorder can copy into the blocked layout: a float32 activation of rank 3 to 5 with a
  // known channel count (a graph input or output too: the copy is another value).
  bool Convertible(int v) const {
    if (v < 0) return false;
    if (Blocked(v)) return true;
    const IrValue& x = V(v);
    return x.dtype == DataType::kFloat32 && !x.is_constant() && x.shape_known &&
           x.shape.size() >= 3 && x.shape.size() <= 5 && x.shape[1] >= 1;
  }
  // The logical channel count of a value (plain or blocked).
  int64_t Channels(int v) const {
    return Blocked(v) ? channels_[static_cast<size_t>(v)] : V(v).shape[1];
  }
  bool Padded(int v) const { return Channels(v) % block_ != 0; }

  // Whether some reader of `v` can take the blocked layout.
  bool ReadersTakeBlocked(int v) const {
    for (int k : consumers_[static_cast<size_t>(v)]) {
      const IrNode& n = original_node(k);
      if (IsDnnlConv(n) || IsPool(n) ||
          (n.domain.empty() && (IsBinary(n.op_type) || IsUnaryKeepingZero(n.op_type) ||
                                n.op_type == "Concat" || n.op_type == "BatchNormalization"))) {
        return true;
      }
    }
    return false;
  }
  const IrNode& original_node(int k) const;

  void MarkBlocked(int v) {
    IrValue& x = g_.values[static_cast<size_t>(v)];
    channels_[static_cast<size_t>(v)] = x.shape[1];
    x.shape = PhysicalShape(x.shape, blocked_);
    x.dim_names.resize(x.shape.size() - 1);
    x.dim_names.push_back("");
    is_blocked_[static_cast<size_t>(v)] = true;
  }

  // A Reorder node writing `to` (in layout `to_layout`) from `from`, of `channels` channels.
  IrNode ReorderNode(int from, int to, ActivationLayout to_layout, ActivationLayout from_layout,
                     int64_t channels) {
    IrNode r;
    r.name = g_.UniqueName(V(from).name + "_reorder");
    r.op_type = ops::kReorder;
    r.domain = ops::kDomain;
    r.inputs = {from};
    r.outputs = {to};
    r.SetInt(ops::kToLayout, static_cast<int64_t>(to_layout));
    r.SetInt(ops::kFromLayout, static_cast<int64_t>(from_layout));
    r.SetInt("channels", channels);
    return r;
  }

  // A blocked value for the node being planned to write instead of the plain graph output `y`,
  // which a Reorder after the node fills from it.
  int BlockedCopyOfOutput(int y) {
    IrValue copy;
    copy.name = g_.UniqueName(V(y).name + "_blocked");
    copy.dtype = DataType::kFloat32;
    copy.shape_known = true;
    const int64_t c = V(y).shape[1];
    copy.shape = PhysicalShape(V(y).shape, blocked_);
    copy.dim_names = V(y).dim_names;
    copy.dim_names.resize(copy.shape.size());
    const int out = g_.AddValue(std::move(copy));
    Grow();
    is_blocked_[static_cast<size_t>(out)] = true;
    channels_[static_cast<size_t>(out)] = c;
    other_[static_cast<size_t>(out)] = y;
    other_[static_cast<size_t>(y)] = out;
    after_.push_back(ReorderNode(out, y, ActivationLayout::kPlain, blocked_, c));
    reorders_++;
    return out;
  }

  // `v` in the other layout, made by a Reorder inserted now (before the node being planned).
  int Convert(int v) {
    if (other_[static_cast<size_t>(v)] >= 0) return other_[static_cast<size_t>(v)];
    const bool to_blocked = !Blocked(v);
    IrValue copy;
    copy.name = g_.UniqueName(V(v).name + (to_blocked ? "_blocked" : "_plain"));
    copy.dtype = DataType::kFloat32;
    copy.shape_known = true;
    const int64_t c = Channels(v);
    if (to_blocked) {
      copy.shape = PhysicalShape(V(v).shape, blocked_);
      copy.dim_names = V(v).dim_names;
      copy.dim_names.resize(copy.shape.size());
    } else {
      copy.shape = V(v).shape;
      copy.shape.pop_back();
      copy.shape[1] = c;
      copy.dim_names = V(v).dim_names;
      copy.dim_names.resize(copy.shape.size());
    }
    const int out = g_.AddValue(std::move(copy));
    Grow();
    is_blocked_[static_cast<size_t>(out)] = to_blocked;
    other_[static_cast<size_t>(out)] = v;
    channels_[static_cast<size_t>(out)] = c;
    other_[static_cast<size_t>(v)] = out;
    g_.nodes.push_back(ReorderNode(v, out, to_blocked ? blocked_ : ActivationLayout::kPlain,
                                   to_blocked ? ActivationLayout::kPlain : blocked_, c));
    reorders_++;
    return out;
  }
  int PlainOf(int v) { return Blocked(v) ? Convert(v) : v; }
  int BlockedOf(int v) { return Blocked(v) ? v : Convert(v); }
  // The blocked form of `v` without making one: itself or an existing copy.
  std::optional<int> ExistingBlocked(int v) const {
    if (v < 0 || static_cast<size_t>(v) >= other_.size()) return std::nullopt;
    if (Blocked(v)) return v;
    const int o = other_[static_cast<size_t>(v)];
    if (o >= 0 && Blocked(o)) return o;
    return std::nullopt;
  }

  // Every blocked input gets its plain copy.
  void AllPlain(IrNode& n) {
    for (int& i : n.inputs) {
      if (Blocked(i)) i = PlainOf(i);
    }
  }

  bool Plan(IrNode& n);
  bool PlanConv(IrNode& n);
  // Whether oneDNN convolves `n` with these layouts by an optimized implementation (unknown dims
  // taken as the packing takes them); nullopt when it cannot tell (an input of unknown rank).
  std::optional<bool> ConvRunsOptimized(const IrNode& n, bool src_blocked, bool dst_blocked) const;
  bool PlanPool(IrNode& n);
  bool PlanUnary(IrNode& n);
  bool PlanBinary(IrNode& n);
  bool PlanConcat(IrNode& n);
  bool PlanBatchNorm(IrNode& n);
  // The index in g_.nodes of the blocked channel Concat writing `v` when nothing else reads `v`.
  std::optional<size_t> ConcatOnlyFeeding(int v) const;
  // A constant operand of a binary op with a blocked tensor of `c` channels, in the physical
  // form; nullopt when its shape does not broadcast per channel or as a scalar.
  std::optional<int> BlockedConstant(int v, int64_t c, size_t rank, float pad);

  IrGraph& g_;
  const ActivationLayout blocked_;  // the blocked layout of this target (16 or 8 channels)
  const int64_t block_;
  std::vector<bool> is_blocked_;
  std::vector<int> other_;  // the same value in the other layout, or -1
  std::vector<int64_t> channels_;
  std::vector<std::vector<int>> consumers_;
  std::vector<IrNode>* original_ = nullptr;
  std::vector<bool> absorbed_;  // nodes another node took over (a Relu after a BatchNormalization)
  std::vector<IrNode> after_;   // nodes to follow the node being planned
  int reorders_ = 0;

 public:
  void SetOriginal(std::vector<IrNode>* nodes) { original_ = nodes; }
};

const IrNode& Planner::original_node(int k) const {
  return (*original_)[static_cast<size_t>(k)];
}

bool Planner::Plan(IrNode& n) {
  if (IsDnnlConv(n)) return PlanConv(n);
  if (IsPool(n)) return PlanPool(n);
  if (n.domain.empty() && n.op_type == "BatchNormalization" && PlanBatchNorm(n)) return true;
  if (n.domain.empty() && n.inputs.size() >= 1 && n.outputs.size() == 1) {
    if ((IsUnaryKeepingZero(n.op_type) || IsUnaryOther(n.op_type) || n.op_type == "Clip") &&
        PlanUnary(n)) {
      return true;
    }
    if (IsBinary(n.op_type) && n.inputs.size() == 2 && PlanBinary(n)) return true;
    if (n.op_type == "Concat" && PlanConcat(n)) return true;
  }
  AllPlain(n);
  return false;
}

// oneDNN's direct convolutions write the blocked layout, reading it or, with fewer channels than
// a block (an image's), the plain one; its plain-to-plain convolution is im2col and GEMM. Other
// pairs of layouts, and some problems in the blocked layout (groups of a few channels, asymmetric
// padding larger than a stride), get its reference implementation, hundreds of times slower:
// measured on AVX-512, a 3x3 convolution of 64 to 64 channels over 32x32 into a plain output took
// 1.4 s, one of 128 to 256 channels over 64x64 21 s. So a convolution writes the blocked layout
// when a reader takes it or its input has a block's channels or more (reading a blocked copy of a
// plain input); its plain readers get a plain copy, and a graph output is written blocked and
// copied into the plain output by a Reorder after it. Among the pairs that allows, in that order
// of preference, the first one oneDNN convolves with an optimized implementation is taken
// (plain-to-plain last); an input of few channels whose readers all want the plain layout stays
// plain-to-plain.
bool Planner::PlanConv(IrNode& n) {
  const int x = n.inputs[0];
  const int y = n.outputs[0];
  std::optional<int> xb = ExistingBlocked(x);
  const bool few_channels = Convertible(x) && Channels(x) < block_;
  const bool output_copy = !Eligible(y) && IsGraphOutput(g_, y) && Convertible(y);
  const bool dst_can_block = Eligible(y) || output_copy;
  const bool want_blocked = ReadersTakeBlocked(y) || xb.has_value() || !few_channels;
  // (src blocked, dst blocked) pairs in order of preference.
  std::vector<std::pair<bool, bool>> pairs;
  if (dst_can_block && want_blocked) {
    // A plain input of few channels is read as it is; a blocked one too, when it can be.
    if (few_channels && !xb) pairs.emplace_back(false, true);
    if (xb || Convertible(x)) pairs.emplace_back(true, true);
    if (few_channels && xb) pairs.emplace_back(false, true);
  }
  pairs.emplace_back(false, false);
  std::pair<bool, bool> chosen = pairs.back();
  for (const auto& pair : pairs) {
    if (ConvRunsOptimized(n, pair.first, pair.second).value_or(true)) {
      chosen = pair;
      break;
    }
  }
  const auto [src_blocked, dst_blocked] = chosen;
  bool changed = false;
  if (src_blocked) {
    n.inputs[0] = BlockedOf(x);
    n.SetInt(ops::kSrcLayout, static_cast<int64_t>(blocked_));
    changed = true;
  } else if (Blocked(x)) {
    n.inputs[0] = PlainOf(x);
  }
  if (dst_blocked) {
    if (output_copy) {
      n.outputs[0] = BlockedCopyOfOutput(y);
    } else {
      MarkBlocked(y);
    }
    n.SetInt(ops::kDstLayout, static_cast<int64_t>(blocked_));
    changed = true;
  }
  if (n.inputs.size() > 3 && n.inputs[3] >= 0) {
    n.inputs[3] = dst_blocked ? BlockedOf(n.inputs[3]) : PlainOf(n.inputs[3]);
  }
  for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
    if (Blocked(n.inputs[i])) n.inputs[i] = PlainOf(n.inputs[i]);
  }
  return changed;
}

std::optional<bool> Planner::ConvRunsOptimized(const IrNode& n, bool src_blocked,
                                               bool dst_blocked) const {
  namespace onednn = exec::kernels::onednn;
  const int x = n.inputs[0];
  if (!Convertible(x)) return std::nullopt;
  // The logical input dims, whichever layout x is in now.
  std::vector<int64_t> src = V(x).shape;
  if (Blocked(x)) {
    src.pop_back();
    src[1] = Channels(x);
  }
  auto problem = CompileTimeConvOf(g_, n, std::move(src));
  if (!problem.ok()) return std::nullopt;
  problem->config.src_layout = src_blocked ? blocked_ : ActivationLayout::kPlain;
  problem->config.dst_layout = dst_blocked ? blocked_ : ActivationLayout::kPlain;
  auto optimized = onednn::ConvIsOptimized(problem->geometry, problem->config);
  if (!optimized.ok()) return std::nullopt;
  return *optimized;
}

bool Planner::PlanPool(IrNode& n) {
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  if (!Blocked(x) || n.outputs.size() != 1 || !Eligible(n.outputs[0])) {
    AllPlain(n);
    return false;
  }
  const bool global = n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool";
  const bool max = n.op_type == "MaxPool" || n.op_type == "GlobalMaxPool";
  if (n.op_type == "MaxPool" && IntAttr(n, "storage_order", 0) != 0) {
    AllPlain(n);
    return false;
  }
  if (n.op_type == "AveragePool" && IntAttr(n, "ceil_mode", 0) != 0 &&
      IntAttr(n, "count_include_pad", 0) != 0) {
    AllPlain(n);  // padding counted past the pads: oneDNN has no such mode
    return false;
  }
  const int64_t c = Channels(x);
  n.op_type = ops::kDnnlPool;
  n.domain = ops::kDomain;
  n.SetString("pool", max ? "max" : "avg");
  n.SetInt("global", global ? 1 : 0);
  n.SetInt("layout", static_cast<int64_t>(blocked_));
  n.SetInt("channels", c);
  MarkBlocked(n.outputs[0]);
  return true;
}

bool Planner::PlanUnary(IrNode& n) {
  const int x = n.inputs[0];
  const int y = n.outputs[0];
  if (!Blocked(x) || !Eligible(y) || V(y).shape.size() + 1 != V(x).shape.size()) return false;
  bool keeps_zero = IsUnaryKeepingZero(n.op_type);
  if (n.op_type == "Clip") {
    // Bounds must not move zero: a Clip whose bounds exclude 0 writes them into the padding.
    keeps_zero = false;
    float lo = -1, hi = 1;
    bool known = true;
    for (size_t k = 1; k < n.inputs.size() && k < 3; ++k) {
      if (n.inputs[k] < 0) continue;
      const IrValue& b = V(n.inputs[k]);
      if (!b.constant || b.constant->dtype != DataType::kFloat32 ||
          b.constant->bytes.size() != sizeof(float)) {
        known = false;
        continue;
      }
      (k == 1 ? lo : hi) = *reinterpret_cast<const float*>(b.constant->bytes.data());
    }
    if (const IrAttribute* a = n.FindAttr("min")) lo = a->f;
    if (const IrAttribute* a = n.FindAttr("max")) hi = a->f;
    keeps_zero = known && lo <= 0 && hi >= 0;
  }
  if (!keeps_zero && Padded(x)) return false;
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    if (Blocked(n.inputs[k])) n.inputs[k] = PlainOf(n.inputs[k]);
  }
  MarkBlocked(y);
  return true;
}

std::optional<int> Planner::BlockedConstant(int v, int64_t c, size_t rank, float pad) {
  const IrValue& k = V(v);
  if (!k.constant || k.constant->dtype != DataType::kFloat32) return std::nullopt;
  const std::vector<int64_t>& s = k.shape;
  int64_t count = 1;
  for (int64_t d : s) count *= d;
  if (count == 1 && s.size() <= rank + 1) return v;  // a scalar broadcasts over anything
  // Per channel: [C, 1, ...] or [1, C, 1, ...] right-aligned against [N, C, spatial...].
  if (s.size() > rank || s.size() < rank - 1) return std::nullopt;
  const size_t channel_axis = s.size() - (rank - 1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == channel_axis ? s[i] != c : s[i] != 1) return std::nullopt;
  }
  const int64_t blocks = (c + block_ - 1) / block_;
  std::vector<float> packed(static_cast<size_t>(blocks * block_), pad);
  const float* src = reinterpret_cast<const float*>(k.constant->bytes.data());
  std::copy(src, src + c, packed.begin());
  std::vector<int64_t> shape(rank + 1, 1);
  shape[1] = blocks;
  shape[rank] = block_;
  const int out = g_.AddConstant(
      k.name + "_blocked",
      ConstantData::FromVector<float>(DataType::kFloat32, std::move(shape), std::move(packed)));
  Grow();
  return out;
}

bool Planner::PlanBinary(IrNode& n) {
  const int a = n.inputs[0], b = n.inputs[1], y = n.outputs[0];
  if (!(Blocked(a) || Blocked(b)) || !Eligible(y)) return false;
  const std::string& op = n.op_type;
  const size_t rank = V(y).shape.size();
  const int64_t c = V(y).shape[1];
  auto activation = [&](int v) {
    return v >= 0 && !V(v).is_constant() && V(v).dtype == DataType::kFloat32 &&
           (Blocked(v) || Eligible(v) || (V(v).shape_known && V(v).shape.size() == rank));
  };
  auto same_channels = [&](int v) {
    if (Blocked(v)) return channels_[static_cast<size_t>(v)] == c && V(v).shape.size() == rank + 1;
    return V(v).shape_known && V(v).shape.size() == rank && V(v).shape[1] == c;
  };
  if (activation(a) && activation(b)) {
    if (!same_channels(a) || !same_channels(b)) return false;
    if ((op == "Div") && c % block_ != 0) return false;
    n.inputs[0] = BlockedOf(a);
    n.inputs[1] = BlockedOf(b);
    MarkBlocked(y);
    return true;
  }
  const int t = Blocked(a) ? a : b;  // the blocked activation
  const int k = t == a ? b : a;      // the constant
  if (!Blocked(t) || !same_channels(t) || k < 0 || !V(k).is_constant()) return false;
  const bool padded = c % block_ != 0;
  float pad = 0;
  const IrValue& kv = V(k);
  const bool scalar = kv.constant && kv.constant->bytes.size() == sizeof(float);
  if (op == "Div") {
    if (t != a) return false;  // constant / activation would divide by the zero padding
    pad = 1;
  } else if (op == "Add" || op == "Sub" || op == "Max" || op == "Min") {
    if (scalar && padded) return false;
  } else if (op != "Mul") {
    return false;
  }
  std::optional<int> kb = BlockedConstant(k, c, rank, pad);
  if (!kb) return false;
  n.inputs[t == a ? 1 : 0] = *kb;
  MarkBlocked(y);
  return true;
}

bool Planner::PlanConcat(IrNode& n) {
  const int y = n.outputs[0];
  if (!Eligible(y)) return false;
  const size_t rank = V(y).shape.size();
  int64_t axis = IntAttr(n, "axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != 1) return false;
  bool any_blocked = false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const int v = n.inputs[i];
    if (v < 0) return false;
    any_blocked |= Blocked(v);
    const bool last = i + 1 == n.inputs.size();
    if (!Blocked(v) && !Eligible(v) && !(V(v).is_constant())) return false;
    if (V(v).is_constant() || V(v).dtype != DataType::kFloat32) return false;
    if (!Blocked(v) && V(v).shape.size() != rank) return false;
    if (!last && Channels(v) % block_ != 0) return false;
  }
  if (!any_blocked) return false;
  for (int& v : n.inputs) v = BlockedOf(v);
  n.SetInt("axis", 1);  // a negative axis would count from the physical rank's end
  MarkBlocked(y);
  return true;
}

std::optional<size_t> Planner::ConcatOnlyFeeding(int v) const {
  if (!Blocked(v) || IsGraphOutput(g_, v) || consumers_[static_cast<size_t>(v)].size() != 1) {
    return std::nullopt;
  }
  for (size_t k = g_.nodes.size(); k-- > 0;) {
    const IrNode& p = g_.nodes[k];
    if (p.outputs.size() != 1 || p.outputs[0] != v) continue;
    if (!p.domain.empty() || p.op_type != "Concat" || p.inputs.empty()) return std::nullopt;
    for (int i : p.inputs) {
      if (!Blocked(i)) return std::nullopt;
    }
    return k;
  }
  return std::nullopt;
}

// Inference BatchNormalization of a blocked tensor with constant statistics becomes ChannelAffine
// (scale and shift precomputed, zero in the padding lanes), taking over a Relu that follows.
bool Planner::PlanBatchNorm(IrNode& n) {
  const int x = n.inputs.empty() ? -1 : n.inputs[0];
  if (!Blocked(x) || n.inputs.size() != 5 || n.outputs.empty() || !Eligible(n.outputs[0])) {
    return false;
  }
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (n.outputs[o] >= 0) return false;
  }
  if (IntAttr(n, "training_mode", 0) != 0 || IntAttr(n, "spatial", 1) == 0) return false;
  if (g_.OpsetOf("") < 7 && IntAttr(n, "is_test", 0) == 0) return false;
  const int64_t c = Channels(x);
  std::vector<const float*> params;
  for (size_t i = 1; i < 5; ++i) {
    const IrValue& p = V(n.inputs[i]);
    if (!p.constant || p.constant->dtype != DataType::kFloat32 ||
        p.constant->bytes.size() != static_cast<size_t>(c) * sizeof(float)) {
      return false;
    }
    params.push_back(reinterpret_cast<const float*>(p.constant->bytes.data()));
  }
  const IrAttribute* eps_attr = n.FindAttr("epsilon");
  const double eps = eps_attr != nullptr ? eps_attr->f : 1e-5;
  const int64_t padded = (c + block_ - 1) / block_ * block_;
  std::vector<float> scale(static_cast<size_t>(padded), 0.0f),
      shift(static_cast<size_t>(padded), 0.0f);
  for (int64_t i = 0; i < c; ++i) {
    const double s = params[0][i] / std::sqrt(static_cast<double>(params[3][i]) + eps);
    scale[static_cast<size_t>(i)] = static_cast<float>(s);
    shift[static_cast<size_t>(i)] = static_cast<float>(params[1][i] - params[2][i] * s);
  }
  const std::string base = V(x).name;
  const int s_value = g_.AddConstant(
      base + "_bn_scale",
      ConstantData::FromVector<float>(DataType::kFloat32, {padded}, std::move(scale)));
  const int t_value = g_.AddConstant(
      base + "_bn_shift",
      ConstantData::FromVector<float>(DataType::kFloat32, {padded}, std::move(shift)));
  Grow();
  IrNode affine;
  affine.name = n.name;
  affine.op_type = ops::kChannelAffine;
  affine.domain = ops::kDomain;
  affine.inputs = {x, s_value, t_value};
  affine.outputs = {n.outputs[0]};
  // A blocked channel Concat that only this normalization reads is done in the same pass: the
  // concatenation is then never written (DenseNet).
  if (std::optional<size_t> cat = ConcatOnlyFeeding(x)) {
    affine.op_type = ops::kConcatChannelAffine;
    affine.inputs = {s_value, t_value};
    const std::vector<int>& parts = g_.nodes[*cat].inputs;
    affine.inputs.insert(affine.inputs.end(), parts.begin(), parts.end());
    g_.nodes.erase(g_.nodes.begin() + static_cast<std::ptrdiff_t>(*cat));
  }
  affine.SetInt("layout", static_cast<int64_t>(blocked_));
  affine.SetInt("channels", c);
  // A Relu reading only this output is applied in the same pass over the data.
  const int y = n.outputs[0];
  const std::vector<int>& readers = consumers_[static_cast<size_t>(y)];
  if (readers.size() == 1 && !IsGraphOutput(g_, y)) {
    const IrNode& relu = original_node(readers[0]);
    if (relu.domain.empty() && relu.op_type == "Relu" && relu.outputs.size() == 1 &&
        Eligible(relu.outputs[0])) {
      IrAttribute kinds, alpha, beta;
      kinds.name = ops::kPostOps;
      kinds.type = exec::AttrType::kInts;
      kinds.ints = {static_cast<int64_t>(exec::kernels::onednn::PostOpKind::kRelu)};
      alpha.name = ops::kPostOpAlpha;
      alpha.type = exec::AttrType::kFloats;
      alpha.floats = {0.0f};
      beta.name = ops::kPostOpBeta;
      beta.type = exec::AttrType::kFloats;
      beta.floats = {0.0f};
      affine.attrs.push_back(kinds);
      affine.attrs.push_back(alpha);
      affine.attrs.push_back(beta);
      affine.outputs = {relu.outputs[0]};
      absorbed_[static_cast<size_t>(readers[0])] = true;
    }
  }
  MarkBlocked(affine.outputs[0]);
  n = std::move(affine);
  return true;
}

}  // namespace

Result<PassStats> PlanActivationLayouts(IrGraph& graph) {
  bool any_conv = false;
  for (const IrNode& n : graph.nodes) any_conv |= IsDnnlConv(n);
  if (!any_conv) return PassStats{"plan-layouts", 0};
  std::vector<IrNode> original = graph.nodes;  // consumers' op types, for look-ahead
  Planner planner(graph, exec::kernels::onednn::PlannedBlockedLayout());
  planner.SetOriginal(&original);
  return planner.Run();
}

}  // namespace epctx::compile
