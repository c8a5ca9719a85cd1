// com.microsoft GatherBlockQuantized: rows of a block-quantized table, dequantized (the int4 or
// int8 token embeddings ONNX Runtime GenAI writes, often sharing their weights with the
// MatMulNBits of the output projection). With ONNX Runtime 1.30's CPU semantics for the form it
// writes: data uint8 [N, K * bits / 8] (bits 4: two values a byte, the low nibble first), gathered
// along axis 0 and quantized along axis 1 in blocks of block_size (a power of 2, 16 or more);
// scales float32 [N, ceil(K / block_size)]; zero_points uint8 of one per block, packed like data
// (optional: 8 for 4 bits, 128 for 8 bits). Output indices' shape + [K]:
//   y[t, j] = float(q[row, j] - zero_point[row, j / block_size]) * scale[row, j / block_size]
// with row = indices[t] (negative indices count from the end). float16 scales arrive lifted to
// float32 (passes/lift_float16.cc). ORT's int4/uint4 element types cannot reach this kernel
// (onnx 1.12 does not know them); other axes are refused, naming them.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Value j of a packed row of `kBits`-bit values: a byte, or one of its nibbles, the low one first.
template <int kBits>
int32_t PackedValue(const uint8_t* packed, int64_t j) {
  if constexpr (kBits == 8) {
    return packed[j];
  } else {
    const uint8_t byte = packed[j / 2];
    return (j & 1) != 0 ? byte >> 4 : byte & 15;
  }
}

// dst[j] = float(q[j] - zero of j's block) * scale of j's block, for the k values of one row;
// zeros null: the implied zero point (8 for 4 bits, 128 for 8).
template <int kBits>
void DequantizeRow(const uint8_t* row, const float* scales, const uint8_t* zeros, int64_t k,
                   int64_t block_size, float* dst) {
  constexpr int32_t kImpliedZero = kBits == 4 ? 8 : 128;
  const int64_t blocks = (k + block_size - 1) / block_size;
  for (int64_t b = 0; b < blocks; ++b) {
    const float scale = scales[b];
    const int32_t zero = zeros != nullptr ? PackedValue<kBits>(zeros, b) : kImpliedZero;
    const int64_t last = std::min(k, (b + 1) * block_size);
    for (int64_t j = b * block_size; j < last; ++j) {
      dst[j] = static_cast<float>(PackedValue<kBits>(row, j) - zero) * scale;
    }
  }
}

class GatherBlockQuantizedKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<GatherBlockQuantizedKernel>(new GatherBlockQuantizedKernel());
    EPCTX_ASSIGN_OR_RETURN(kernel->bits_, node.attrs->GetInt("bits", 4));
    EPCTX_ASSIGN_OR_RETURN(kernel->block_size_, node.attrs->GetInt("block_size", 128));
    EPCTX_ASSIGN_OR_RETURN(int64_t gather_axis, node.attrs->GetInt("gather_axis", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t quantize_axis, node.attrs->GetInt("quantize_axis", 1));
    if (kernel->bits_ != 4 && kernel->bits_ != 8) {
      return EPCTX_ERROR(kInvalidArgument, "attribute bits is {}; 4 and 8 are supported",
                         kernel->bits_);
    }
    const int64_t b = kernel->block_size_;
    if (b < 16 || (b & (b - 1)) != 0) {
      return EPCTX_ERROR(kInvalidArgument,
                         "attribute block_size is {}; it must be a power of 2, 16 or more", b);
    }
    if (gather_axis != 0 || (quantize_axis != 1 && quantize_axis != -1)) {
      return EPCTX_ERROR(kUnsupported,
                         "gather_axis {} and quantize_axis {}: only rows of a 2-D table "
                         "(gather_axis 0, quantize_axis 1) are supported",
                         gather_axis, quantize_axis);
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kUint8, "data"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 2, DataType::kFloat32, "scales"));
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 3, DataType::kUint8, "zero_points"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "data"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "indices"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* scales, RequiredInput(ctx, 2, "scales"));
    const Tensor* zero_points = ctx.input(3);
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*data, DataType::kUint8, "data"));
    EPCTX_RETURN_IF_ERROR(ExpectDtype(*scales, DataType::kFloat32, "scales"));
    if (indices->dtype() != DataType::kInt32 && indices->dtype() != DataType::kInt64) {
      return EPCTX_ERROR(kInvalidArgument, "input indices has type {}, expected int32 or int64",
                         DataTypeName(indices->dtype()));
    }
    if (data->shape().size() != 2) {
      return EPCTX_ERROR(kUnsupported, "input data has shape {}; only a 2-D table is supported",
                         ShapeToString(data->shape()));
    }
    const int64_t rows = data->shape()[0];
    const int64_t per_byte = 8 / bits_;
    const int64_t k = data->shape()[1] * per_byte;
    const int64_t blocks = (k + block_size_ - 1) / block_size_;
    if (scales->shape() != std::vector<int64_t>{rows, blocks}) {
      return EPCTX_ERROR(kInvalidArgument,
                         "input scales has shape {}, expected [{}, {}] (a scale per block of {})",
                         ShapeToString(scales->shape()), rows, blocks, block_size_);
    }
    const int64_t zp_cols = (blocks + per_byte - 1) / per_byte;
    if (zero_points != nullptr) {
      EPCTX_RETURN_IF_ERROR(ExpectDtype(*zero_points, DataType::kUint8, "zero_points"));
      if (zero_points->shape() != std::vector<int64_t>{rows, zp_cols}) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input zero_points has shape {}, expected [{}, {}] (one per block, "
                           "packed like data)",
                           ShapeToString(zero_points->shape()), rows, zp_cols);
      }
    }
    const int64_t count = indices->element_count();
    std::vector<int64_t> picked(static_cast<size_t>(count));
    for (int64_t t = 0; t < count; ++t) {
      const int64_t i = indices->dtype() == DataType::kInt32 ? indices->data_as<int32_t>()[t]
                                                             : indices->data_as<int64_t>()[t];
      if (i < -rows || i >= rows) {
        return EPCTX_ERROR(kInvalidArgument, "indices element {} is {}, outside [{}, {}]", t, i,
                           -rows, rows - 1);
      }
      picked[static_cast<size_t>(t)] = i < 0 ? i + rows : i;
    }
    std::vector<int64_t> out_shape = indices->shape();
    out_shape.push_back(k);
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kFloat32, out_shape));

    const uint8_t* q = data->data_as<uint8_t>();
    const float* s = scales->data_as<float>();
    const uint8_t* zp = zero_points != nullptr ? zero_points->data_as<uint8_t>() : nullptr;
    float* y = out->mutable_data_as<float>();
    const int64_t row_bytes = data->shape()[1];
    auto* dequantize_row = bits_ == 4 ? DequantizeRow<4> : DequantizeRow<8>;
    ParallelForRanges(
        ThreadsFor(ctx.num_threads(), count * k), count, 1, [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) {
            const int64_t r = picked[static_cast<size_t>(t)];
            dequantize_row(q + r * row_bytes, s + r * blocks,
                           zp != nullptr ? zp + r * zp_cols : nullptr, k, block_size_, y + t * k);
          }
        });
    return Status::Ok();
  }

 private:
  GatherBlockQuantizedKernel() = default;
  int64_t bits_ = 4;
  int64_t block_size_ = 128;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateGatherBlockQuantized(const NodeInfo& node) {
  return GatherBlockQuantizedKernel::Create(node);
}

}  // namespace epctx::exec::kernels
