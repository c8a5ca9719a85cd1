#include <utility>

#include "exec/kernel.h"
#include "util/status_macros.h"

namespace epctx::exec {
namespace {

std::string KeyOf(std::string_view domain, std::string_view op_type) {
  std::string key(domain);
  key += '/';
  key += op_type;
  return key;
}

}  // namespace

std::string ElementTypesName(ElementTypes types) {
  static constexpr std::pair<ElementTypes, std::string_view> kNamed[] = {
      {kEveryType, "every type"},
      {kEveryType & ~TypeBit(DataType::kString), "every type but string"},
      {kNumericTypes | TypeBit(DataType::kBool), "numeric and bool types"},
      {kNumericTypes, "numeric types"},
      {kFloatTypes | kSignedIntTypes, "float and signed integer types"},
      {kFloatTypes, "float types"},
      {kIntTypes, "integer types"},
  };
  for (const auto& [set, name] : kNamed) {
    if (types == set) return std::string(name);
  }
  // In DataType order but float32 first; the 16-bit floats after float64.
  static constexpr DataType kOrder[] = {DataType::kFloat32,  DataType::kFloat64, DataType::kFloat16,
                                        DataType::kBFloat16, DataType::kInt8,    DataType::kInt16,
                                        DataType::kInt32,    DataType::kInt64,   DataType::kUint8,
                                        DataType::kUint16,   DataType::kUint32,  DataType::kUint64,
                                        DataType::kBool,     DataType::kString};
  std::string out;
  for (DataType t : kOrder) {
    if ((types & TypeBit(t)) == 0) continue;
    if (!out.empty()) out += ", ";
    out += DataTypeName(t);
  }
  return out.empty() ? "no type" : out;
}

const KernelRegistry& KernelRegistry::Global() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterAllKernels(*r);
    return r;
  }();
  return *registry;
}

void KernelRegistry::Register(std::span<const KernelEntry> table) {
  for (const KernelEntry& row : table) {
    factories_[KeyOf(row.domain, row.op_type)][row.since_version] = {row.create, row.accepts,
                                                                     row.typed, row.limits};
  }
}

namespace {

// Why a kernel accepting `accepts` cannot take value `d` ("" when it can).
std::string_view RefusedSort(const ValueDesc& d, uint8_t accepts) {
  if (!d.present) return {};
  if ((d.kind != ValueKind::kTensor || d.optional) && !(accepts & kAnyValueKind)) {
    return d.kind == ValueKind::kSequence ? "sequence" : "optional";
  }
  if (d.dtype == DataType::kString && !(accepts & kStringTensors)) return "string";
  return {};
}

// The error for a node whose typed value has a type its kernel does not compute on; Ok when
// it has one it does, is omitted, or its type is not known before the run.
Status CheckElementType(const NodeInfo& node, const TypedValue& typed) {
  const std::vector<ValueDesc>& values = typed.output ? node.outputs : node.inputs;
  const size_t index = static_cast<size_t>(typed.index);
  if (index >= values.size() || !values[index].present) return Status::Ok();
  const DataType type = values[index].dtype;
  if (type == DataType::kUndefined || (typed.types & TypeBit(type)) != 0) return Status::Ok();
  return EPCTX_ERROR(kUnsupported,
                     "{} node '{}': {} {} has type {}, which {} does not run on (it takes {})",
                     node.op_type, node.name, typed.output ? "output" : "input", index,
                     DataTypeName(type), node.op_type, ElementTypesName(typed.types));
}

}  // namespace

Result<std::unique_ptr<Kernel>> KernelRegistry::Create(const NodeInfo& node) const {
  auto it = factories_.find(KeyOf(node.domain, node.op_type));
  if (it != factories_.end()) {
    auto version = it->second.upper_bound(node.opset);
    if (version != it->second.begin()) {
      --version;
      const Factory& factory = version->second;
      for (const auto* values : {&node.inputs, &node.outputs}) {
        for (size_t i = 0; i < values->size(); ++i) {
          std::string_view sort = RefusedSort((*values)[i], factory.accepts);
          if (sort.empty()) continue;
          return EPCTX_ERROR(kUnsupported,
                             "{} node '{}': {} {} is a {} value, which {} does not take",
                             node.op_type, node.name, values == &node.inputs ? "input" : "output",
                             i, sort, node.op_type);
        }
      }
      EPCTX_RETURN_IF_ERROR(CheckElementType(node, factory.typed));
      auto kernel = factory.create(node);
      if (!kernel.ok()) {
        return Status(kernel.status().code(), fmt::format("{} node '{}': {}", node.op_type,
                                                          node.name, kernel.status().message()));
      }
      return kernel;
    }
  }
  return EPCTX_ERROR(kUnsupported, "operator {}{}{} (opset {}) is not supported (node '{}')",
                     node.domain, node.domain.empty() ? "" : ".", node.op_type, node.opset,
                     node.name);
}

bool KernelRegistry::Supports(std::string_view domain, std::string_view op_type,
                              int64_t opset) const {
  auto it = factories_.find(KeyOf(domain, op_type));
  return it != factories_.end() && it->second.upper_bound(opset) != it->second.begin();
}

std::vector<RegisteredOp> KernelRegistry::Ops() const {
  std::vector<RegisteredOp> ops;
  ops.reserve(factories_.size());
  for (const auto& [key, versions] : factories_) {
    if (versions.empty()) continue;
    RegisteredOp op;
    const size_t slash = key.find('/');
    op.domain = key.substr(0, slash);
    op.op_type = key.substr(slash + 1);
    for (const auto& [since, factory] : versions) {
      op.since_versions.push_back(since);
      op.typed.push_back(factory.typed);
    }
    op.accepts = versions.rbegin()->second.accepts;
    op.limits = versions.rbegin()->second.limits;
    ops.push_back(std::move(op));
  }
  // The keys sort "domain/op" as strings; '/' sorts before letters, so the ONNX domain ("")
  // comes first and each domain's ops stay together.
  return ops;
}

namespace {

class HeapKernelContext final : public KernelContext {
 public:
  HeapKernelContext(std::span<const Tensor* const> inputs, size_t output_count, int threads)
      : inputs_(inputs), outputs_(output_count), threads_(threads) {}
  size_t input_count() const override { return inputs_.size(); }
  const Tensor* input(size_t index) const override {
    return index < inputs_.size() ? inputs_[index] : nullptr;
  }
  size_t output_count() const override { return outputs_.size(); }
  Result<Tensor*> AllocateOutput(size_t index, DataType type, std::vector<int64_t> shape) override {
    if (index >= outputs_.size()) {
      return EPCTX_ERROR(kInternal, "output {} of {} allocated", index, outputs_.size());
    }
    EPCTX_ASSIGN_OR_RETURN(outputs_[index], Tensor::Allocate(type, std::move(shape)));
    return &outputs_[index];
  }
  Status SetOutput(size_t index, Tensor value) override {
    if (index >= outputs_.size()) {
      return EPCTX_ERROR(kInternal, "output {} of {} set", index, outputs_.size());
    }
    outputs_[index] = std::move(value);
    return Status::Ok();
  }
  int num_threads() const override { return threads_; }
  std::vector<Tensor> TakeOutputs() { return std::move(outputs_); }

 private:
  std::span<const Tensor* const> inputs_;
  std::vector<Tensor> outputs_;
  int threads_;
};

}  // namespace

Result<std::vector<Tensor>> RunNodeOnce(const NodeInfo& node, std::span<const Tensor* const> inputs,
                                        int num_threads) {
  EPCTX_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, KernelRegistry::Global().Create(node));
  HeapKernelContext ctx(inputs, node.outputs.size(), num_threads);
  EPCTX_RETURN_IF_ERROR(kernel->Run(ctx));
  return ctx.TakeOutputs();
}

}  // namespace epctx::exec
