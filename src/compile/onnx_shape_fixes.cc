#include "compile/onnx_shape_fixes.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <vector>

#include "compile/onnx_tensor.h"

namespace epctx::compile {
namespace {

// The value of a one-element int32 or int64 initializer or Constant; nullopt when it is not one.
// A tensor that does not decode is not a scalar here; the import reports it, naming the tensor.
std::optional<int64_t> ScalarInt(const onnx::TensorProto* t) {
  if (t == nullptr) return std::nullopt;
  auto no_external = ExternalDataFiles::Refusing("shape inference reads no external data");
  auto c = ConstantFromTensorProto(*t, nullptr, no_external, "");
  if (!c.ok()) return std::nullopt;
  const ConstantData& scalar = **c;
  if (scalar.dtype == DataType::kInt64 && scalar.bytes.size() == sizeof(int64_t)) {
    int64_t v;
    std::memcpy(&v, scalar.bytes.data(), sizeof v);
    return v;
  }
  if (scalar.dtype == DataType::kInt32 && scalar.bytes.size() == sizeof(int32_t)) {
    int32_t v;
    std::memcpy(&v, scalar.bytes.data(), sizeof v);
    return v;
  }
  return std::nullopt;
}

bool HasInput(onnx::InferenceContext& ctx, size_t n) {
  return ctx.getNumInputs() > n && ctx.getInputType(n) != nullptr;
}

// STFT-17: signal [batch, length, 1 | 2], frame_step, window [frame]?, frame_length?
//   -> [batch, frames, bins, 2].
void InferStft(onnx::InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const onnx::TensorShapeProto& signal = onnx::getInputShape(ctx, 0);
  if (signal.dim_size() != 3) {
    fail_shape_inference("STFT: the signal must have rank 3 ([batch, length, 1 or 2]), not ",
                         signal.dim_size());
  }
  const int64_t onesided = onnx::getAttribute(ctx, "onesided", 1);
  if (onesided != 0 && signal.dim(2).has_dim_value() && signal.dim(2).dim_value() == 2) {
    fail_shape_inference("STFT: a onesided transform needs a real signal (last dim 1)");
  }
  std::optional<int64_t> step = ScalarInt(ctx.getInputData(1));
  if (step && *step <= 0) fail_shape_inference("STFT: frame_step must be positive, not ", *step);

  std::optional<int64_t> window;
  if (HasInput(ctx, 2) && onnx::hasInputShape(ctx, 2)) {
    const onnx::TensorShapeProto& w = onnx::getInputShape(ctx, 2);
    if (w.dim_size() != 1) fail_shape_inference("STFT: the window must have rank 1");
    if (w.dim(0).has_dim_value()) window = w.dim(0).dim_value();
  }
  std::optional<int64_t> frame = HasInput(ctx, 3) ? ScalarInt(ctx.getInputData(3)) : std::nullopt;
  if (frame && window && *frame != *window) {
    fail_shape_inference("STFT: frame_length ", *frame, " differs from the window's length ",
                         *window);
  }
  if (!frame) frame = window;
  if (frame && *frame <= 0) fail_shape_inference("STFT: the frame length must be positive");

  onnx::TensorShapeProto* out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  *out->add_dim() = signal.dim(0);
  onnx::TensorShapeProto::Dimension* frames = out->add_dim();
  if (frame && step && signal.dim(1).has_dim_value()) {
    const int64_t length = signal.dim(1).dim_value();
    if (*frame > length) {
      fail_shape_inference("STFT: the frame length ", *frame, " exceeds the signal length ",
                           length);
    }
    frames->set_dim_value((length - *frame) / *step + 1);
  }
  onnx::TensorShapeProto::Dimension* bins = out->add_dim();
  if (frame) bins->set_dim_value(onesided != 0 ? *frame / 2 + 1 : *frame);
  out->add_dim()->set_dim_value(2);
}

// Convolutions: onnx 1.12 takes one kernel dim per weight dim after the second and indexes the
// input's spatial dims, pads and strides with them (convPoolShapeInference,
// convTransposeShapeInference) without checking that the weight has the input's rank; a weight
// of another rank read past the end (SIGSEGV). It also reads the input and the weight as dense
// tensors once they have a shape: a weight declared a sparse tensor (with a shape) read the empty
// dims of its dense type (SIGSEGV, found by tests/fuzz/onnx_import_fuzzer). Ours refuses both,
// then runs onnx's.
struct WeightedOp {
  const char* op;
  int weight_input;
};
constexpr WeightedOp kWeightedOps[] = {
    {"Conv", 1}, {"ConvInteger", 1}, {"QLinearConv", 3}, {"ConvTranspose", 1}};

// A check that fails the node's inference (fail_shape_inference) before onnx's runs.
using Precheck = std::function<void(onnx::InferenceContext&)>;

// Fails when one of `inputs` has a type other than a dense tensor (onnx's inference reads a sparse
// tensor's shape as a dense one's, past the checks below).
void RequireDenseInputs(const char* op, onnx::InferenceContext& ctx,
                        std::initializer_list<size_t> inputs) {
  for (size_t input : inputs) {
    const onnx::TypeProto* type = input < ctx.getNumInputs() ? ctx.getInputType(input) : nullptr;
    if (type != nullptr && type->value_case() != onnx::TypeProto::kTensorType &&
        type->value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      fail_shape_inference(op, ": input ", input, " is not a dense tensor");
    }
  }
}

void CheckWeightRank(WeightedOp op, onnx::InferenceContext& ctx) {
  const size_t w = static_cast<size_t>(op.weight_input);
  RequireDenseInputs(op.op, ctx, {size_t{0}, w});
  if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, w) &&
      ctx.getInputType(0)->has_tensor_type() && ctx.getInputType(w)->has_tensor_type()) {
    const int x_rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
    const int w_rank = ctx.getInputType(w)->tensor_type().shape().dim_size();
    if (x_rank != w_rank) {
      fail_shape_inference(op.op, ": the weight has rank ", w_rank, ", the input ", x_rank,
                           "; they must be equal");
    }
  }
}

// Recurrent layers: onnx 1.12's inference for RNN and LSTM 1-6 and GRU 3-6 (RNNShapeInference1)
// reads the input's first two dims without checking its rank; an input of rank 1 read past the
// end (SIGSEGV, found by tests/fuzz/run_fuzzer). Ours refuses an input that is not a dense tensor
// of rank 3, then runs onnx's.
constexpr const char* kRecurrentOps[] = {"RNN", "GRU", "LSTM"};

void CheckRecurrentInputRank(const char* op, onnx::InferenceContext& ctx) {
  // A sparse X of rank 1 took the same path (compile_fuzzer, an LSTM-5).
  RequireDenseInputs(op, ctx, {size_t{0}});
  if (onnx::hasInputShape(ctx, 0) && ctx.getInputType(0)->has_tensor_type()) {
    const int rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
    if (rank != 3) {
      fail_shape_inference(op, ": the input X has rank ", rank,
                           "; it must be 3 ([seq_length, batch_size, input_size])");
    }
  }
}

// The last opset version of the default domain this onnx knows.
int LastOnnxOpset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto onnx_range = ranges.find(onnx::ONNX_DOMAIN);
  return onnx_range != ranges.end() ? onnx_range->second.second : 0;
}

// Every version of `op` in the default domain. Schemas live in a static, non-const registry map;
// the registry hands out const pointers.
std::vector<onnx::OpSchema*> MutableSchemas(const char* op) {
  const int last = LastOnnxOpset();
  std::vector<onnx::OpSchema*> schemas;
  for (int version = 1; version <= last; ++version) {
    auto* schema = const_cast<onnx::OpSchema*>(onnx::OpSchemaRegistry::Schema(op, version, ""));
    if (schema != nullptr && schema->SinceVersion() == version) schemas.push_back(schema);
  }
  return schemas;
}

// Every version of `op` runs `check` before its own inference.
void GuardInference(const char* op, const Precheck& check) {
  for (onnx::OpSchema* schema : MutableSchemas(op)) {
    onnx::InferenceFunction onnx_inference = schema->GetTypeAndShapeInferenceFunction();
    schema->TypeAndShapeInferenceFunction([check, onnx_inference](onnx::InferenceContext& ctx) {
      check(ctx);
      if (onnx_inference) onnx_inference(ctx);
    });
  }
}

// Data propagation (the partial values of shape tensors, ShapeInferenceOptions'
// enable_data_propagation): onnx 1.12's propagators read their first input's type without
// checking that there is one, and a value whose producer's inference failed has none: Shape of
// a Concat of mismatched shapes crashed the process (SIGSEGV, found by
// tests/fuzz/onnx_import_fuzzer from a com.microsoft Attention seed whose past had another head
// size). Ours skips the propagation when the first input, or any input of a Concat (all of which
// are required), has no type; the values then stay unknown, as for any value onnx cannot follow.
void GuardDataPropagation() {
  const int last = LastOnnxOpset();
  for (const onnx::OpSchema& listed : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (listed.domain() != onnx::ONNX_DOMAIN || !listed.has_data_propagation_function() ||
        listed.SinceVersion() > last) {
      continue;
    }
    auto* schema = const_cast<onnx::OpSchema*>(
        onnx::OpSchemaRegistry::Schema(listed.Name(), listed.SinceVersion(), listed.domain()));
    if (schema == nullptr || schema->SinceVersion() != listed.SinceVersion()) continue;
    const bool every_input = listed.Name() == "Concat";
    onnx::DataPropagationFunction propagate = schema->GetDataPropagationFunction();
    schema->PartialDataPropagationFunction(
        [propagate, every_input](onnx::DataPropagationContext& ctx) {
          const size_t checked = every_input ? ctx.getNumInputs() : 1;
          for (size_t i = 0; i < checked && i < ctx.getNumInputs(); ++i) {
            if (ctx.getInputType(i) == nullptr) return;
          }
          propagate(ctx);
        });
  }
}

// A correction that runs after onnx's inference and mends the shape it wrote.
using Amendment = std::function<void(onnx::InferenceContext&)>;

// Every version of `op` from `since` on runs `amend` after its own inference.
void AmendInference(const char* op, int since, const Amendment& amend) {
  for (onnx::OpSchema* schema : MutableSchemas(op)) {
    if (schema->SinceVersion() < since) continue;
    onnx::InferenceFunction onnx_inference = schema->GetTypeAndShapeInferenceFunction();
    schema->TypeAndShapeInferenceFunction([amend, onnx_inference](onnx::InferenceContext& ctx) {
      if (onnx_inference) onnx_inference(ctx);
      amend(ctx);
    });
  }
}

// Output `n`'s dims when onnx gave it a tensor shape; nullptr otherwise.
onnx::TensorShapeProto* OutputShape(onnx::InferenceContext& ctx, size_t n) {
  if (ctx.getNumOutputs() <= n) return nullptr;
  onnx::TypeProto* type = ctx.getOutputType(n);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return nullptr;
  }
  return type->mutable_tensor_type()->mutable_shape();
}

// Input 0's static dim `i`; nullopt when unknown.
std::optional<int64_t> InputDim(onnx::InferenceContext& ctx, int i) {
  if (!onnx::hasInputShape(ctx, 0) || !ctx.getInputType(0)->has_tensor_type()) return std::nullopt;
  const onnx::TensorShapeProto& shape = ctx.getInputType(0)->tensor_type().shape();
  if (i >= shape.dim_size() || !shape.dim(i).has_dim_value()) return std::nullopt;
  return shape.dim(i).dim_value();
}

// Pools in ceil mode (MaxPool, AveragePool from version 10): a last window that would start in
// the end padding sees no input and is dropped, by PyTorch, ONNX Runtime and epctx's kernels;
// onnx 1.12 keeps it, and the model was refused at load (the kernel's output had one row less
// than the program declared).
void DropWindowsStartingInThePadding(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* ceil_mode = ctx.getAttribute("ceil_mode");
  const onnx::AttributeProto* auto_pad = ctx.getAttribute("auto_pad");
  if (ceil_mode == nullptr || ceil_mode->i() == 0) return;
  if (auto_pad != nullptr && !auto_pad->s().empty() && auto_pad->s() != "NOTSET") return;
  const onnx::AttributeProto* strides = ctx.getAttribute("strides");
  const onnx::AttributeProto* pads = ctx.getAttribute("pads");
  for (size_t output = 0; output < ctx.getNumOutputs(); ++output) {
    onnx::TensorShapeProto* shape = OutputShape(ctx, output);
    if (shape == nullptr || shape->dim_size() < 3) continue;
    const int spatial = shape->dim_size() - 2;
    for (int i = 0; i < spatial; ++i) {
      std::optional<int64_t> in = InputDim(ctx, i + 2);
      onnx::TensorShapeProto::Dimension* out = shape->mutable_dim(i + 2);
      if (!in || !out->has_dim_value() || out->dim_value() < 1) continue;
      const int64_t stride = strides != nullptr && i < strides->ints_size() ? strides->ints(i) : 1;
      const int64_t pad_begin = pads != nullptr && i < pads->ints_size() ? pads->ints(i) : 0;
      if ((out->dim_value() - 1) * stride >= *in + pad_begin)
        out->set_dim_value(out->dim_value() - 1);
    }
  }
}

void Install() {
  GuardDataPropagation();
  for (onnx::OpSchema* stft : MutableSchemas("STFT")) {
    if (stft->SinceVersion() == 17) stft->TypeAndShapeInferenceFunction(InferStft);
  }
  for (const WeightedOp& op : kWeightedOps) {
    GuardInference(op.op, [op](onnx::InferenceContext& ctx) { CheckWeightRank(op, ctx); });
  }
  for (const char* op : kRecurrentOps) {
    GuardInference(op, [op](onnx::InferenceContext& ctx) { CheckRecurrentInputRank(op, ctx); });
  }
  AmendInference("MaxPool", 10, DropWindowsStartingInThePadding);
  AmendInference("AveragePool", 10, DropWindowsStartingInThePadding);
}

}  // namespace

void InstallShapeInferenceFixes() {
  static std::once_flag once;
  std::call_once(once, Install);
}

}  // namespace epctx::compile
