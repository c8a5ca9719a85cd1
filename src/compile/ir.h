// The compiler's graph IR: values (with inferred types and shapes, and data for constants), nodes
// in topological order, and the graph's inputs and outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "epctx/tensor.h"
#include "exec/attributes.h"
#include "exec/kernel.h"

namespace epctx {
class MappedFile;
}  // namespace epctx

namespace epctx::compile {

// Immutable bytes of a constant: an initializer (often a view into the model file's mapping or
// parsed protobuf), a folded value, or a packed weight.
//
// A packed weight is *deferred*: the passes decide its layout, dtype and shape, and `make` packs
// it only when the program builder hands it to the blob writer (Materialize), which writes it
// and lets it go; packing every weight while the passes run would hold them all in memory at
// once. Until then `bytes` is empty: a deferred constant is read by nothing but its kernel, and
// kernels read weights only when they run.
struct ConstantData {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> owner;  // keeps `bytes` alive
  uint32_t layout = 0;                // packing layout id (packing/layouts.h)
  // CPU features the packed bytes' kernel needs beyond the target's (VNNI for int8 weights that
  // only VNNI multiplies exactly): the blob's fingerprint requires them.
  uint64_t required_cpu_features = 0;
  // Set when every value is a float16 value widened to float32 (LiftFloat16's constants): the
  // packing may store them as float16 again, without loss, and a pattern whose constants they are
  // is matched within float16's precision (a float16 GELU's 1.4140625 is sqrt(2)).
  bool float16_values = false;
  // Set when `bytes` lie in this read-only file mapping (kept alive by `owner`): external data,
  // or an initializer read in place from the model file.
  const MappedFile* file = nullptr;
  // Set for a deferred constant: makes the bytes, a Tensor of exactly `dtype` and `shape`.
  std::function<Result<Tensor>()> make;

  bool deferred() const { return static_cast<bool>(make); }
  Tensor AsTensor() const { return Tensor::View(dtype, shape, bytes.data(), owner); }
  // Drops the pages of a file-backed constant from this process once they have been read (see
  // MappedFile::ReleasePages); nothing for other constants.
  void ReleasePages() const;
  static std::shared_ptr<ConstantData> FromTensor(const Tensor& t, uint32_t layout = 0);
  // Copies `values` into owned storage.
  template <typename T>
  static std::shared_ptr<ConstantData> FromVector(DataType dtype, std::vector<int64_t> shape,
                                                  std::vector<T> values);
  static std::shared_ptr<ConstantData> Deferred(DataType dtype, std::vector<int64_t> shape,
                                                uint32_t layout,
                                                std::function<Result<Tensor>()> make);
};

// `c` with its bytes: `c` itself, or what a deferred constant's `make` produces now (checked
// against its declared dtype and shape; the result owns the bytes).
Result<std::shared_ptr<const ConstantData>> Materialize(std::shared_ptr<const ConstantData> c);

struct IrValue {
  std::string name;
  // kTensor or kSequence (ONNX seq(tensor)); `optional`: ONNX optional(...) of that kind. For a
  // sequence, dtype is the element type and the shape is unknown.
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;
  DataType dtype = DataType::kUndefined;
  bool shape_known = false;
  std::vector<int64_t> shape;              // -1 for unknown dims
  std::vector<std::string> dim_names;      // symbolic names of unknown dims, "" when unnamed
  std::shared_ptr<ConstantData> constant;  // set for weights

  bool is_constant() const { return constant != nullptr; }
  bool is_plain_tensor() const { return kind == ValueKind::kTensor && !optional; }
  bool fully_static() const;
};

struct IrGraph;

struct IrAttribute {
  std::string name;
  exec::AttrType type = exec::AttrType::kUndefined;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::shared_ptr<ConstantData> tensor;
  std::shared_ptr<IrGraph> body;  // kGraph: the body (If branches, Loop and Scan bodies)
  int32_t graph = -1;             // kGraph: the body's program index, set by the program builder
};

struct IrNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<int> inputs;   // value indices, -1 for omitted optional inputs
  std::vector<int> outputs;  // value indices, -1 for omitted optional outputs
  std::vector<IrAttribute> attrs;
  // The last `implicit_inputs` inputs are values of the enclosing graph that the bodies read;
  // each body declares them, in the same order, after its own inputs.
  int implicit_inputs = 0;

  bool has_bodies() const;
  const IrAttribute* FindAttr(std::string_view attr_name) const;
  IrAttribute* FindAttr(std::string_view attr_name);
  // Sets attribute `attr_name` to an int, a float, a string or a list of ints or floats,
  // replacing one of that name.
  void SetInt(std::string_view attr_name, int64_t value);
  void SetFloat(std::string_view attr_name, float value);
  void SetString(std::string_view attr_name, std::string value);
  void SetInts(std::string_view attr_name, std::vector<int64_t> values);
  void SetFloats(std::string_view attr_name, std::vector<float> values);
  void RemoveAttr(std::string_view attr_name);
  // Whether the node is op `type` of `op_domain` ("" for ONNX's).
  bool IsOp(std::string_view op_domain, std::string_view type) const {
    return domain == op_domain && op_type == type;
  }
};

struct IrGraph {
  std::string name;
  std::vector<IrValue> values;
  std::vector<IrNode> nodes;  // topological order
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::map<std::string, int64_t> opsets;  // domain ("" = ONNX) -> version

  int64_t OpsetOf(const std::string& domain) const;
  // Records that the graph holds epctx's own ops (their domain and opset, epctx_ops.h).
  void DeclareEpctxOpset();
  int AddValue(IrValue value);
  // A new constant value named after `hint` (made unique).
  int AddConstant(const std::string& hint, std::shared_ptr<ConstantData> data);
  std::string UniqueName(const std::string& hint);

  // The views kernels are created from (attributes point into `node`).
  exec::Attributes AttributesOf(const IrNode& node) const;
  exec::NodeInfo NodeInfoOf(const IrNode& node, const exec::Attributes& attrs,
                            std::vector<Tensor>& constant_views) const;

 private:
  std::map<std::string, int> name_counts_;
};

// Number of uses of each value by nodes, plus one per appearance as a graph output.
std::vector<int> CountUses(const IrGraph& graph);
// The node producing each value (an index into graph.nodes), -1 for none.
std::vector<int> Producers(const IrGraph& graph);

}  // namespace epctx::compile
