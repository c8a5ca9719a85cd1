// The kernel interface: a kernel is created once per node when a session binds its program
// (decoding attributes, checking static facts), then run many times.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"
#include "exec/attributes.h"

namespace epctx::exec {

// What is known about a node input or output before running: its type, its shape when the
// compiler could infer it, and its data when it is a weight (constant).
struct ValueDesc {
  bool present = true;  // false for an omitted optional input
  // Declared kind (kTensor or kSequence) and whether it is an ONNX optional of it (which may be
  // ValueKind::kNone at run time). dtype: for a sequence, its element type.
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;
  DataType dtype = DataType::kUndefined;
  bool shape_known = false;
  std::vector<int64_t> shape;  // -1 for unknown dims when shape_known
  const Tensor* constant = nullptr;
};

class BoundProgram;

// Binds body program `index` of the node's model (the graph attributes of If, Loop and Scan).
using BodyBinder = std::function<Result<std::unique_ptr<BoundProgram>>(int32_t index)>;

struct NodeInfo {
  std::string_view name;
  std::string_view op_type;
  std::string_view domain;  // "" for the ONNX domain
  int64_t opset = 0;        // version of the node's domain imported by the model
  const Attributes* attrs = nullptr;
  std::vector<ValueDesc> inputs;
  std::vector<ValueDesc> outputs;
  // The last `implicit_inputs` of `inputs` are values the node's bodies capture from the
  // enclosing graph; each body takes them, in order, after its own inputs.
  size_t implicit_inputs = 0;
  // Null where bodies cannot be bound (constant folding, RunNodeOnce).
  const BodyBinder* bind_body = nullptr;
};

// What bounds one run: a flag another thread may set to stop it (RunOptions::SetTerminate), the
// most iterations one Loop may run, so that no model can keep a process busy forever, and the
// most bytes one value made at run time may take, so that a small model cannot ask for any amount
// of memory (a ReduceSum over an empty axis of [0, 2^32] keeps 2^32 zeros).
struct RunControl {
  const std::atomic<bool>* terminate = nullptr;
  int64_t max_loop_iterations = 0;  // 0: no limit
  int64_t max_value_bytes = 0;      // 0: no limit

  bool terminated() const {
    return terminate != nullptr && terminate->load(std::memory_order_relaxed);
  }
  // kCancelled when the flag is set; `where` names what stopped.
  Status CheckTerminate(std::string_view where) const;
};

// What a kernel sees while running.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual size_t input_count() const = 0;
  // nullptr for an omitted optional input.
  virtual const Tensor* input(size_t index) const = 0;
  virtual size_t output_count() const = 0;
  // Memory for output `index`: arena memory when the plan reserved enough, heap otherwise.
  // Contents are unspecified; the kernel must write every element.
  virtual Result<Tensor*> AllocateOutput(size_t index, DataType type,
                                         std::vector<int64_t> shape) = 0;
  // Makes output `index` the value `value` (a sequence, an empty optional, or a tensor the kernel
  // did not get from AllocateOutput). The value must own its memory or view memory that outlives
  // the run (sequence elements always own theirs: see Tensor::Clone).
  virtual Status SetOutput(size_t index, Tensor value) = 0;
  // Threads the kernel may use (ParallelFor's thread count).
  virtual int num_threads() const = 0;
  // Makes output `output` the memory of input `input` seen with `shape` (same element count),
  // with no copy, when the executor can keep that memory unchanged for as long as the output
  // lives; false when it cannot (the kernel then copies).
  virtual bool ShareInput(size_t output, size_t input, const std::vector<int64_t>& shape) {
    (void)output;
    (void)input;
    (void)shape;
    return false;
  }

  // The run's limits; control-flow kernels pass them to their bodies.
  virtual const RunControl& run_control() const {
    static const RunControl kNone;
    return kNone;
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status Run(KernelContext& ctx) = 0;
  // Whose code computes the node ("epctx" for our own kernels; a kernel built on a library names
  // it). Profiles report it per node.
  virtual std::string_view implementation() const { return "epctx"; }
  // Makes ahead of time what a run with inputs of these shapes (null: not known before the run)
  // and this many threads would make first (oneDNN primitives), so that the first run does not
  // wait for it. Best effort: a failure is left for the run to report. May be called while
  // another thread runs the kernel.
  virtual void Prepare(std::span<const std::vector<int64_t>* const> input_shapes, int threads) {
    (void)input_shapes;
    (void)threads;
  }
  // Whether the kernel computes correctly when the memory of output i is exactly the memory of
  // its input `input_of_output[i]` (-1: memory of its own), as when a caller binds an input and
  // an output to one buffer (ONNX Runtime's shared past/present KV cache). Kernels that read an
  // input while writing an output do not, so the default is no: the executor then computes such
  // outputs in memory of its own and copies them into the caller's after the last node.
  virtual bool WritesInPlace(std::span<const int32_t> input_of_output) const {
    (void)input_of_output;
    return false;
  }
};

// Makes the kernel of one node, refusing at creation what it can tell is wrong. One factory
// serves every opset of its op from its table row's since_version on; where semantics changed
// between opsets, it reads node.opset.
using KernelCreateFn = Result<std::unique_ptr<Kernel>>(const NodeInfo& node);

// What a kernel accepts beyond numeric tensors (KernelEntry::accepts); the registry refuses a
// node whose inputs or outputs are of another sort before its factory sees it.
enum KernelAccepts : uint8_t {
  kNumericTensors = 0,
  kStringTensors = 1,  // string tensors in any input or output
  kAnyValueKind = 2,   // sequences and optionals in any input or output
};

// A set of element types: bit i is DataType i. A value outside the enum (a forged blob's) is in
// no set: its bit is 0.
using ElementTypes = uint32_t;
constexpr ElementTypes TypeBit(DataType t) {
  const int bit = static_cast<int>(t);
  return bit >= 0 && bit < 32 ? ElementTypes{1} << bit : ElementTypes{0};
}
inline constexpr ElementTypes kFloatTypes =
    TypeBit(DataType::kFloat32) | TypeBit(DataType::kFloat64) | TypeBit(DataType::kFloat16) |
    TypeBit(DataType::kBFloat16);
inline constexpr ElementTypes kSignedIntTypes =
    TypeBit(DataType::kInt8) | TypeBit(DataType::kInt16) | TypeBit(DataType::kInt32) |
    TypeBit(DataType::kInt64);
inline constexpr ElementTypes kUnsignedIntTypes =
    TypeBit(DataType::kUint8) | TypeBit(DataType::kUint16) | TypeBit(DataType::kUint32) |
    TypeBit(DataType::kUint64);
inline constexpr ElementTypes kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
inline constexpr ElementTypes kNumericTypes = kFloatTypes | kIntTypes;
// Every element type: kernels that move elements without computing on them. Strings still
// need the row's kStringTensors.
inline constexpr ElementTypes kEveryType =
    kNumericTypes | TypeBit(DataType::kBool) | TypeBit(DataType::kString);

// Which value of a node decides the element type a kernel computes on, and the types it takes
// there: input 0 for most ops (Where's is input 1, the values it selects from; an op whose output
// type is an attribute names output 0).
struct TypedValue {
  bool output = false;
  int8_t index = 0;
  ElementTypes types = kEveryType;
  // Input 0 of one of `types` (the usual row).
  constexpr TypedValue(ElementTypes t) : types(t) {}
  constexpr TypedValue(bool is_output, int8_t i, ElementTypes t)
      : output(is_output), index(i), types(t) {}
};
constexpr TypedValue Input(int8_t index, ElementTypes types) {
  return {false, index, types};
}
constexpr TypedValue Output(int8_t index, ElementTypes types) {
  return {true, index, types};
}

// A row of a kernel family's registration table (src/exec/kernels/register_all.cc).
struct KernelEntry {
  std::string_view op_type;
  int64_t since_version = 0;  // the first opset of `domain` that `create` implements
  KernelCreateFn* create = nullptr;
  // The registry refuses a node whose typed value has another element type before `create`
  // sees it; `epctx compile --list` shows the types.
  TypedValue typed = kEveryType;
  std::string_view domain = {};       // "" for the ONNX domain
  uint8_t accepts = kNumericTensors;  // KernelAccepts flags
  // What `typed` does not say: types refused for some attributes (the kernel refuses them when
  // created or run), as `epctx compile --list` shows it.
  std::string_view limits = {};
};

// One operator of the registry, as `epctx compile --list` shows it.
struct RegisteredOp {
  std::string domain;  // "" for the ONNX domain
  std::string op_type;
  std::vector<int64_t> since_versions;  // ascending: the first opset of each kernel row
  uint8_t accepts = kNumericTensors;    // of the newest row
  std::vector<TypedValue> typed;        // of each row, in since_versions' order
  std::string limits;                   // of the newest row (KernelEntry::limits)
};

// "float32, float16" (DataType order, float32 first and the 16-bit floats after float64), or a
// set's name where `types` is one: "every type", "numeric types", "float types", ...
std::string ElementTypesName(ElementTypes types);

class KernelRegistry {
 public:
  // The registry holding every built-in kernel.
  static const KernelRegistry& Global();

  // Adds a family's table. Create() picks, for a node, the row of its op with the highest
  // since_version not above the node's opset.
  void Register(std::span<const KernelEntry> table);

  // kUnsupported naming the op, domain and opset when no kernel implements it.
  Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) const;
  bool Supports(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // Every operator, sorted by domain, then op type.
  std::vector<RegisteredOp> Ops() const;

 private:
  struct Factory {
    KernelCreateFn* create = nullptr;
    uint8_t accepts = kNumericTensors;
    TypedValue typed = kEveryType;
    std::string_view limits;
  };
  // "domain/op_type" -> since_version -> factory
  std::map<std::string, std::map<int64_t, Factory>, std::less<>> factories_;
};

// Runs one node on given inputs with heap outputs; used by constant folding and tests.
Result<std::vector<Tensor>> RunNodeOnce(const NodeInfo& node, std::span<const Tensor* const> inputs,
                                        int num_threads = 1);

// Registers every kernel family's table (src/exec/kernels/register_all.cc).
void RegisterAllKernels(KernelRegistry& registry);

}  // namespace epctx::exec
