#include "exec/kernels/quant/nbits_layout.h"

#include <limits>

#include "exec/kernels/common/shape.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {

Result<NBitsGeometry> MakeNBitsGeometry(int64_t k, int64_t n, int64_t bits, int64_t block_size) {
  if (bits != 4 && bits != 8) {
    return EPCTX_ERROR(kUnsupported, "attribute 'bits' is {}; 4 and 8 are supported", bits);
  }
  if (block_size < 16 || block_size > 256 || (block_size & (block_size - 1)) != 0) {
    return EPCTX_ERROR(kInvalidArgument,
                       "attribute 'block_size' is {}; it must be a power of two from 16 to 256",
                       block_size);
  }
  // Sizes are products of these; 2^40 elements is far past any weight a blob can hold.
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  if (k <= 0 || k > kMaxDim) {
    return EPCTX_ERROR(kInvalidArgument, "attribute 'K' is {}; it must be from 1 to 2^40", k);
  }
  if (n <= 0 || n > kMaxDim) {
    return EPCTX_ERROR(kInvalidArgument, "attribute 'N' is {}; it must be from 1 to 2^40", n);
  }
  NBitsGeometry g;
  g.k = k;
  g.n = n;
  g.bits = static_cast<int>(bits);
  g.block_size = block_size;
  g.blocks = (k + block_size - 1) / block_size;
  g.block_bytes = block_size * bits / 8;
  int64_t total = 0;
  if (__builtin_mul_overflow(g.n, g.blocks, &total) ||
      __builtin_mul_overflow(total, g.block_size, &total)) {
    return EPCTX_ERROR(kInvalidArgument, "a weight of K {} by N {} has too many elements", k, n);
  }
  return g;
}

std::vector<uint8_t> PackNBitsCodes(const NBitsGeometry& g, std::span<const uint8_t> codes) {
  std::vector<uint8_t> out(static_cast<size_t>(g.code_bytes()));
  if (g.bits == 8) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = codes[i] ^ 0x80;  // code - 128 as int8
    return out;
  }
  const int64_t group = g.block_size >= 32 ? 32 : 16;
  const int64_t half = group / 2;
  std::vector<uint8_t> block(static_cast<size_t>(g.block_size));
  for (int64_t b = 0; b < g.block_count(); ++b) {
    const uint8_t* src = codes.data() + b * g.block_bytes;
    uint8_t* dst = out.data() + b * g.block_bytes;
    for (int64_t i = 0; i < g.block_bytes; ++i) {
      block[static_cast<size_t>(2 * i)] = src[i] & 0x0f;
      block[static_cast<size_t>(2 * i + 1)] = src[i] >> 4;
    }
    for (int64_t start = 0; start < g.block_size; start += group) {
      for (int64_t j = 0; j < half; ++j) {
        dst[start / 2 + j] =
            static_cast<uint8_t>(block[static_cast<size_t>(start + j)] |
                                 block[static_cast<size_t>(start + half + j)] << 4);
      }
    }
  }
  return out;
}

int64_t NBitsZeroPointBytes(const NBitsGeometry& g) {
  return g.bits == 8 ? g.block_count() : g.n * ((g.blocks + 1) / 2);
}

Result<std::vector<int8_t>> UnpackNBitsZeroPoints(const NBitsGeometry& g,
                                                  std::span<const uint8_t> packed) {
  const int64_t want = NBitsZeroPointBytes(g);
  if (static_cast<int64_t>(packed.size()) != want) {
    return EPCTX_ERROR(kInvalidArgument,
                       "zero_points has {} bytes; {} expected for N {}, {} blocks", packed.size(),
                       want, g.n, g.blocks);
  }
  std::vector<int8_t> out(static_cast<size_t>(g.block_count()));
  if (g.bits == 8) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int8_t>(packed[i] ^ 0x80);
    return out;
  }
  const int64_t row = (g.blocks + 1) / 2;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t b = 0; b < g.blocks; ++b) {
      const uint8_t byte = packed[static_cast<size_t>(n * row + b / 2)];
      out[static_cast<size_t>(n * g.blocks + b)] =
          static_cast<int8_t>((b & 1) ? byte >> 4 : byte & 0x0f);
    }
  }
  return out;
}

namespace {

Status ExpectConstant(const NodeInfo& node, size_t index, const char* name, DataType dtype,
                      int64_t elements) {
  const ValueDesc& d = node.inputs[index];
  if (d.constant == nullptr) {
    return EPCTX_ERROR(kUnsupported,
                       "input {} is computed while the model runs; it must be an initializer "
                       "(the weights are packed when the model is compiled)",
                       name);
  }
  if (d.constant->dtype() != dtype || d.constant->element_count() != elements) {
    return EPCTX_ERROR(kInvalidArgument, "input {} is {} {}; the attributes need {} {} elements",
                       name, DataTypeName(d.constant->dtype()), ShapeToString(d.constant->shape()),
                       DataTypeName(dtype), elements);
  }
  return Status::Ok();
}

}  // namespace

Result<NBitsPlan> PlanMatMulNBits(const NodeInfo& node) {
  const Attributes& attrs = *node.attrs;
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* k, attrs.Require(nbits_attr::kK, AttrType::kInt));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* n, attrs.Require(nbits_attr::kN, AttrType::kInt));
  EPCTX_ASSIGN_OR_RETURN(int64_t bits, attrs.GetInt(nbits_attr::kBits, 4));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* block_size,
                         attrs.Require(nbits_attr::kBlockSize, AttrType::kInt));
  NBitsPlan plan;
  EPCTX_ASSIGN_OR_RETURN(plan.accuracy_level, attrs.GetInt(nbits_attr::kAccuracyLevel, 0));
  EPCTX_ASSIGN_OR_RETURN(plan.g, MakeNBitsGeometry(k->i, n->i, bits, block_size->i));
  if (node.inputs.size() < 3 || !InputPresent(node, 0) || !InputPresent(node, 1) ||
      !InputPresent(node, 2)) {
    return EPCTX_ERROR(kInvalidArgument, "A, B and scales are required");
  }
  if (InputPresent(node, 4)) {
    return EPCTX_ERROR(kUnsupported, "g_idx (a block index per row of B) is not supported");
  }
  EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 0, DataType::kFloat32, "A"));
  EPCTX_RETURN_IF_ERROR(ExpectConstant(node, 1, "B", DataType::kUint8, plan.g.code_bytes()));
  EPCTX_RETURN_IF_ERROR(
      ExpectConstant(node, 2, "scales", DataType::kFloat32, plan.g.block_count()));
  if (InputPresent(node, 3)) {
    plan.has_zero_points = true;
    const Tensor* zp = node.inputs[3].constant;
    plan.float_zero_points = zp != nullptr && zp->dtype() == DataType::kFloat32;
    if (plan.float_zero_points) {
      EPCTX_RETURN_IF_ERROR(
          ExpectConstant(node, 3, "zero_points", DataType::kFloat32, plan.g.block_count()));
    } else {
      EPCTX_RETURN_IF_ERROR(
          ExpectConstant(node, 3, "zero_points", DataType::kUint8, NBitsZeroPointBytes(plan.g)));
    }
  }
  if (InputPresent(node, 5)) {
    plan.has_bias = true;
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, 5, DataType::kFloat32, "bias"));
  }
  return plan;
}

}  // namespace epctx::exec::kernels
