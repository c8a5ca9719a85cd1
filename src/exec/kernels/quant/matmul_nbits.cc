// com.epctx MatMulNBitsPacked: A [..., K] (float32) times a weight-only quantized [K, N] weight in
// the packed layout of nbits_layout.h (int4 or int8 codes, a float scale per block, optional
// zero points), plus an optional bias; the compiler lowers ONNX Runtime's com.microsoft
// MatMulNBits to it. With output_columns, the node is several matmuls of A side by side
// (FuseSiblingNBitsMatMuls): output j holds its columns of the product, [..., output_columns[j]].
// And com.microsoft MatMulNBits itself, which only says why it was not lowered: its weights are
// packed at compile time, so a node the compiler could not pack (B, scales or zero points computed
// at run time, g_idx) cannot run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <memory>

#include "exec/kernels/common/scratch.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/quant/nbits_gemm.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class MatMulNBitsPackedKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<MatMulNBitsPackedKernel>(new MatMulNBitsPackedKernel());
    const Attributes& attrs = *node.attrs;
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* kk, attrs.Require(nbits_attr::kK, AttrType::kInt));
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* nn, attrs.Require(nbits_attr::kN, AttrType::kInt));
    EPCTX_ASSIGN_OR_RETURN(int64_t bits, attrs.GetInt(nbits_attr::kBits, 4));
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* bs,
                           attrs.Require(nbits_attr::kBlockSize, AttrType::kInt));
    EPCTX_ASSIGN_OR_RETURN(int64_t level, attrs.GetInt(nbits_attr::kAccuracyLevel, 0));
    EPCTX_ASSIGN_OR_RETURN(k->g_, MakeNBitsGeometry(kk->i, nn->i, bits, bs->i));
    k->int8_activations_ = level == kAccuracyInt8;
    if (attrs.Has(nbits_attr::kOutputColumns)) {
      EPCTX_ASSIGN_OR_RETURN(k->output_columns_, attrs.GetInts(nbits_attr::kOutputColumns));
      bool partition = k->output_columns_.size() == node.outputs.size();
      int64_t sum = 0;
      for (int64_t c : k->output_columns_) {
        partition = partition && c >= 1 && !__builtin_add_overflow(sum, c, &sum);
      }
      if (!partition || sum != k->g_.n) {
        return EPCTX_ERROR(kInvalidArgument,
                           "output_columns [{}] for {} outputs of {} columns: one positive "
                           "count per output, summing to N",
                           fmt::join(k->output_columns_, ","), node.outputs.size(), k->g_.n);
      }
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 1, DataType::kUint8, "codes"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "scales"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 4, DataType::kFloat32, "bias"));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, "A"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* codes, RequiredInput(ctx, 1, "codes"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(ctx, 2, "scales"));
    const Tensor* zero_points = ctx.input(3);
    const Tensor* bias = ctx.input(4);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*a, DataType::kFloat32, "A"));
    const std::vector<int64_t>& as = a->shape();
    if (as.empty() || as.back() != g_.k) {
      return EPCTX_ERROR(kInvalidArgument, "input A has shape {}, expected [..., {}]",
                         ShapeToString(as), g_.k);
    }
    NBitsWeights w;
    w.g = g_;
    EPCTX_RETURN_IF_ERROR(Expect(*codes, DataType::kUint8, g_.code_bytes(), "codes"));
    EPCTX_RETURN_IF_ERROR(Expect(*scales, DataType::kFloat32, g_.block_count(), "scales"));
    w.codes = codes->data_as<uint8_t>();
    w.scales = scales->data_as<float>();
    if (zero_points != nullptr) {
      if (zero_points->dtype() == DataType::kInt8) {
        EPCTX_RETURN_IF_ERROR(
            Expect(*zero_points, DataType::kInt8, g_.block_count(), "zero_points"));
        w.zero_points = zero_points->data_as<int8_t>();
      } else {
        EPCTX_RETURN_IF_ERROR(
            Expect(*zero_points, DataType::kFloat32, g_.block_count(), "zero_points"));
        w.float_zero_points = zero_points->data_as<float>();
      }
    }
    if (bias != nullptr) {
      EPCTX_RETURN_IF_ERROR(Expect(*bias, DataType::kFloat32, g_.n, "bias"));
      w.bias = bias->data_as<float>();
    }
    std::vector<int64_t> y_shape(as.begin(), as.end() - 1);
    const int64_t rows = a->element_count() / g_.k;
    if (!output_columns_.empty()) return RunSideBySide(ctx, w, *a, std::move(y_shape), rows);
    y_shape.push_back(g_.n);
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, DataType::kFloat32, y_shape));
    if (y->element_count() == 0) return Status::Ok();
    return NBitsMatMul(w, a->data_as<float>(), rows, y->mutable_data_as<float>(), int8_activations_,
                       ctx.num_threads());
  }

 private:
  MatMulNBitsPackedKernel() = default;

  // The product of all the columns into this thread's scratch, then each output's columns of
  // every row into it.
  Status RunSideBySide(KernelContext& ctx, const NBitsWeights& w, const Tensor& a,
                       std::vector<int64_t> leading, int64_t rows) {
    std::vector<float*> outputs;
    for (size_t j = 0; j < output_columns_.size(); ++j) {
      std::vector<int64_t> shape = leading;
      shape.push_back(output_columns_[j]);
      EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(j, DataType::kFloat32, shape));
      outputs.push_back(y->mutable_data_as<float>());
    }
    if (rows == 0) return Status::Ok();
    uint64_t count = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(rows), static_cast<uint64_t>(g_.n), &count)) {
      return EPCTX_ERROR(kInvalidArgument, "{} rows of {} columns overflow", rows, g_.n);
    }
    EPCTX_ASSIGN_OR_RETURN(float* all, ThreadScratchF32(count));
    EPCTX_RETURN_IF_ERROR(
        NBitsMatMul(w, a.data_as<float>(), rows, all, int8_activations_, ctx.num_threads()));
    int64_t first = 0;
    for (size_t j = 0; j < output_columns_.size(); ++j) {
      const int64_t width = output_columns_[j];
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(outputs[j] + r * width, all + r * g_.n + first,
                    static_cast<size_t>(width) * sizeof(float));
      }
      first += width;
    }
    return Status::Ok();
  }

  static Status Expect(const Tensor& t, DataType dtype, int64_t elements, const char* name) {
    if (t.dtype() != dtype || t.element_count() != elements) {
      return EPCTX_ERROR(kInvalidArgument, "input {} is {} {}; the weight's geometry needs {} {}",
                         name, DataTypeName(t.dtype()), ShapeToString(t.shape()),
                         DataTypeName(dtype), elements);
    }
    return Status::Ok();
  }

  NBitsGeometry g_;
  bool int8_activations_ = false;
  std::vector<int64_t> output_columns_;  // empty: one output of N columns
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMatMulNBitsPacked(const NodeInfo& node) {
  return MatMulNBitsPackedKernel::Create(node);
}

Result<std::unique_ptr<Kernel>> CreateMatMulNBits(const NodeInfo& node) {
  EPCTX_RETURN_IF_ERROR(PlanMatMulNBits(node).status());
  return EPCTX_ERROR(kUnsupported,
                     "the node was not packed when the model was compiled; it runs only as "
                     "com.epctx MatMulNBitsPacked");
}

}  // namespace epctx::exec::kernels
