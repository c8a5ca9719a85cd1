// Weight-only quantized matrix products (ONNX Runtime's com.microsoft MatMulNBits): the weight's
// geometry, the layout its kernel reads, and the packing from the operator's layout into it. The
// compiler packs at compile time and stores the result in the blob; the kernel reads it in place.
//
// Operator layout (ORT's specification): B uint8 [N, blocks, block_size * bits / 8], the codes of
// one block along K, two 4-bit codes a byte with the lower index in the low nibble; scales [N *
// blocks]; zero points optional: uint8 packed like the codes per column (4-bit: ceil(blocks / 2)
// bytes a column), or one float per block; a weight is (code - zero_point) * scale, with zero
// point 2^(bits - 1) when none is given.
//
// Packed layout (kNBitsCodes):
//  - 4-bit: [N, blocks, block_size / 2]; within a block, each group of 32 codes is 16 bytes whose
//    byte j holds code j in its low nibble and code j + 16 in its high nibble (a block of 16:
//    code j and j + 8), so that one 16-byte load splits by mask and shift into codes in order.
//  - 8-bit: [N, blocks, block_size] as int8, code - 128 (the AVX2 product instruction takes one
//    signed and one unsigned operand: the activation is the signed one, so the weight is made
//    signed and multiplied through its absolute value).
// Scales: float [N, blocks]. Zero points: int8 [N, blocks] (4-bit: the code 0..15; 8-bit: the
// code - 128), or float [N, blocks] (likewise shifted) for float zero points; absent when the
// operator had none (4-bit: 8 is implied; 8-bit: 0 after the shift).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "epctx/status.h"
#include "exec/kernel.h"

namespace epctx::exec::kernels {

// The op the compiler lowers MatMulNBits to (ops::kMatMulNBitsPacked, epctx_ops.h): inputs A,
// codes, scales, zero_points (optional), bias (optional), all in the packed layout; attributes as
// below.
namespace nbits_attr {
inline constexpr const char* kK = "K";
inline constexpr const char* kN = "N";
inline constexpr const char* kBits = "bits";
inline constexpr const char* kBlockSize = "block_size";
inline constexpr const char* kAccuracyLevel = "accuracy_level";
// Set when the node is several matmuls of one activation side by side (FuseSiblingNBitsMatMuls):
// the columns of each of its outputs, in order; they sum to N.
inline constexpr const char* kOutputColumns = "output_columns";
}  // namespace nbits_attr

// ORT's accuracy_level at which activations are quantized to int8 (per block) for the product.
inline constexpr int64_t kAccuracyInt8 = 4;

struct NBitsGeometry {
  int64_t k = 0;
  int64_t n = 0;
  int bits = 0;
  int64_t block_size = 0;
  int64_t blocks = 0;       // per column: ceil(k / block_size)
  int64_t block_bytes = 0;  // block_size * bits / 8

  int64_t code_bytes() const { return n * blocks * block_bytes; }
  int64_t block_count() const { return n * blocks; }
  // What a one-row product streams: the codes and a float32 scale per block.
  int64_t stream_bytes() const {
    return code_bytes() + block_count() * static_cast<int64_t>(sizeof(float));
  }
  // The zero point a block has when the operator gives none, in the packed layout's terms.
  int implied_zero_point() const { return bits == 4 ? 8 : 0; }
};

// Checks the attributes (bits 4 or 8, block_size a power of two from 16 to 256, K and N
// positive and not so large that sizes overflow); kInvalidArgument or kUnsupported naming
// the attribute.
Result<NBitsGeometry> MakeNBitsGeometry(int64_t k, int64_t n, int64_t bits, int64_t block_size);

// ORT's codes (code_bytes() bytes) into the packed layout.
std::vector<uint8_t> PackNBitsCodes(const NBitsGeometry& g, std::span<const uint8_t> codes);

// ORT's uint8 zero points (4-bit: n * ceil(blocks / 2) bytes; 8-bit: n * blocks) as packed
// int8 zero points; kInvalidArgument when the byte count differs.
Result<std::vector<int8_t>> UnpackNBitsZeroPoints(const NBitsGeometry& g,
                                                  std::span<const uint8_t> packed);

// The number of bytes ORT's uint8 zero points take.
int64_t NBitsZeroPointBytes(const NBitsGeometry& g);

// What the compiler needs to pack a com.microsoft MatMulNBits node: its geometry and which
// optional inputs it has. B, scales and zero_points must be constants of the sizes the geometry
// gives (B uint8, scales float32, zero_points uint8 or float32), A float32; g_idx is not
// supported. kUnsupported or kInvalidArgument saying what stands in the way otherwise.
struct NBitsPlan {
  NBitsGeometry g;
  int64_t accuracy_level = 0;
  bool has_zero_points = false;
  bool float_zero_points = false;
  bool has_bias = false;
};
Result<NBitsPlan> PlanMatMulNBits(const NodeInfo& node);

}  // namespace epctx::exec::kernels
