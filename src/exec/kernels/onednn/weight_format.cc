#include "exec/kernels/onednn/weight_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <numeric>

#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// Layout of an encoding: version, format kind, data type, ndims, dims[ndims],
// padded_dims[ndims], then for blocked: strides[ndims], inner_nblks, inner_blks[n],
// inner_idxs[n]; for Winograd: format, r, alpha, ic, oc, ic_block, oc_block, ic2_block,
// oc2_block, bits of adj_scale, size.
constexpr int64_t kKindBlocked = 1;
constexpr int64_t kKindWinograd = 2;
constexpr size_t kHeader = 4;

// Largest weight a layout may describe (bytes): well above any real layer, small enough that
// sizes computed from it cannot overflow.
constexpr int64_t kMaxWeightBytes = int64_t{1} << 40;

class Reader {
 public:
  explicit Reader(std::span<const int64_t> e) : e_(e) {}
  bool Take(int64_t* v) {
    if (pos_ >= e_.size()) return false;
    *v = e_[pos_++];
    return true;
  }
  bool done() const { return pos_ == e_.size(); }

 private:
  std::span<const int64_t> e_;
  size_t pos_ = 0;
};

Status Malformed(std::string_view why) {
  return EPCTX_ERROR(kCorrupt, "packed weight layout is malformed: {}", why);
}

}  // namespace

Result<std::vector<int64_t>> EncodeWeightFormat(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& md = desc.data;
  if (md.data_type != dnnl_f32 && md.data_type != dnnl_bf16 && md.data_type != dnnl_f16 &&
      md.data_type != dnnl_s8) {
    return EPCTX_ERROR(kUnsupported, "packed weights of oneDNN data type {} are not supported",
                       static_cast<int>(md.data_type));
  }
  if (md.extra.flags != 0 || md.offset0 != 0) {
    return EPCTX_ERROR(kUnsupported, "oneDNN chose a weight layout with extra flags or an offset");
  }
  std::vector<int64_t> e{kWeightFormatVersion, 0, static_cast<int64_t>(md.data_type), md.ndims};
  for (int i = 0; i < md.ndims; ++i) e.push_back(md.dims[i]);
  for (int i = 0; i < md.ndims; ++i) {
    if (md.padded_offsets[i] != 0) {
      return EPCTX_ERROR(kUnsupported, "oneDNN chose a weight layout with padded offsets");
    }
    e.push_back(md.padded_dims[i]);
  }
  if (md.format_kind == dnnl_blocked) {
    e[1] = kKindBlocked;
    const dnnl_blocking_desc_t& b = md.format_desc.blocking;
    for (int i = 0; i < md.ndims; ++i) e.push_back(b.strides[i]);
    e.push_back(b.inner_nblks);
    for (int i = 0; i < b.inner_nblks; ++i) e.push_back(b.inner_blks[i]);
    for (int i = 0; i < b.inner_nblks; ++i) e.push_back(b.inner_idxs[i]);
    return e;
  }
  if (md.format_kind == dnnl_format_kind_wino) {
    e[1] = kKindWinograd;
    const dnnl_wino_desc_t& w = md.format_desc.wino_desc;
    for (int64_t v :
         {static_cast<int64_t>(w.wino_format), int64_t{w.r}, int64_t{w.alpha}, int64_t{w.ic},
          int64_t{w.oc}, int64_t{w.ic_block}, int64_t{w.oc_block}, int64_t{w.ic2_block},
          int64_t{w.oc2_block}, static_cast<int64_t>(std::bit_cast<uint32_t>(w.adj_scale)),
          static_cast<int64_t>(w.size)}) {
      e.push_back(v);
    }
    return e;
  }
  return EPCTX_ERROR(kUnsupported, "oneDNN chose a weight layout of kind {} the blob cannot record",
                     static_cast<int>(md.format_kind));
}

int64_t WinogradTile(std::span<const int64_t> encoding) {
  if (encoding.size() < 4 || encoding[1] != kKindWinograd || encoding[3] < 0) return 0;
  // Version, kind, type, ndims, dims, padded dims, then wino_format, r, alpha.
  const size_t alpha = 4 + 2 * static_cast<size_t>(encoding[3]) + 2;
  return alpha < encoding.size() ? encoding[alpha] : 0;
}

Result<dnnl::memory::desc> DecodeBlockedWeightFormat(std::span<const int64_t> encoding) {
  Reader r(encoding);
  int64_t version = 0, kind = 0, dtype = 0, ndims = 0;
  if (!r.Take(&version) || !r.Take(&kind) || !r.Take(&dtype) || !r.Take(&ndims)) {
    return Malformed("too short");
  }
  if (version != kWeightFormatVersion) {
    return Malformed(
        fmt::format("encoding version {} (expected {})", version, kWeightFormatVersion));
  }
  if (kind == kKindWinograd) {
    return EPCTX_ERROR(kUnsupported,
                       "a Winograd weight layout only serves the input shape it was packed for");
  }
  if (kind != kKindBlocked) return Malformed(fmt::format("unknown kind {}", kind));
  if (dtype != dnnl_f32 && dtype != dnnl_bf16 && dtype != dnnl_f16 && dtype != dnnl_s8) {
    return Malformed(fmt::format("data type {}", dtype));
  }
  const int64_t element_bytes = dtype == dnnl_f32 ? 4 : dtype == dnnl_s8 ? 1 : 2;
  if (ndims < 1 || ndims > DNNL_MAX_NDIMS) return Malformed(fmt::format("{} dims", ndims));

  dnnl_memory_desc_t md;
  std::memset(&md, 0, sizeof md);
  md.ndims = static_cast<int>(ndims);
  md.data_type = static_cast<dnnl_data_type_t>(dtype);
  md.format_kind = dnnl_blocked;
  dnnl_blocking_desc_t& b = md.format_desc.blocking;
  for (int i = 0; i < md.ndims; ++i) {
    if (!r.Take(&md.dims[i]) || md.dims[i] < 1 || md.dims[i] > kMaxWeightBytes) {
      return Malformed("bad dims");
    }
  }
  for (int i = 0; i < md.ndims; ++i) {
    if (!r.Take(&md.padded_dims[i]) || md.padded_dims[i] < md.dims[i] ||
        md.padded_dims[i] > kMaxWeightBytes) {
      return Malformed("bad padded dims");
    }
  }
  for (int i = 0; i < md.ndims; ++i) {
    if (!r.Take(&b.strides[i]) || b.strides[i] < 1 || b.strides[i] > kMaxWeightBytes) {
      return Malformed("bad strides");
    }
  }
  int64_t nblks = 0;
  if (!r.Take(&nblks) || nblks < 0 || nblks > DNNL_MAX_NDIMS) return Malformed("bad block count");
  b.inner_nblks = static_cast<int>(nblks);
  int64_t inner = 1;
  for (int i = 0; i < b.inner_nblks; ++i) {
    if (!r.Take(&b.inner_blks[i]) || b.inner_blks[i] < 2 || b.inner_blks[i] > 256) {
      return Malformed("bad inner block");
    }
    inner *= b.inner_blks[i];
    if (inner > 65536) return Malformed("inner blocks too large");
  }
  std::array<int64_t, DNNL_MAX_NDIMS> block_of{};
  block_of.fill(1);
  for (int i = 0; i < b.inner_nblks; ++i) {
    if (!r.Take(&b.inner_idxs[i]) || b.inner_idxs[i] < 0 || b.inner_idxs[i] >= ndims) {
      return Malformed("bad inner block index");
    }
    block_of[static_cast<size_t>(b.inner_idxs[i])] *= b.inner_blks[i];
  }
  if (!r.done()) return Malformed("trailing values");
  // Dense and non-overlapping: ordered by stride, each outer dimension starts where the one
  // below it ends, and the innermost one past the inner blocks.
  std::vector<int> order(static_cast<size_t>(ndims));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return b.strides[x] < b.strides[y]; });
  int64_t next = inner;
  for (int d : order) {
    const int64_t blk = block_of[static_cast<size_t>(d)];
    if (md.padded_dims[d] % blk != 0) return Malformed("padded dims not a multiple of blocks");
    const int64_t outer = md.padded_dims[d] / blk;
    if (outer == 1) continue;  // a stride of a unit dimension is never used
    if (b.strides[d] < next) return Malformed("overlapping strides");
    if (__builtin_mul_overflow(b.strides[d], outer, &next) || next > kMaxWeightBytes / 4) {
      return Malformed("too large");
    }
  }
  dnnl::memory::desc desc(md);
  const size_t size = desc.get_size();
  if (size == 0 || size > static_cast<size_t>(kMaxWeightBytes) ||
      size < static_cast<size_t>(next * element_bytes)) {
    return Malformed("size disagrees with strides");
  }
  return desc;
}

Result<dnnl::memory::desc> StoredWeightLayout(std::span<const int64_t> format,
                                              std::span<const int64_t> wanted,
                                              dnnl::memory::data_type type) {
  auto stored = DecodeBlockedWeightFormat(format);
  if (!stored.ok()) {
    return EPCTX_ERROR(kUnsupported,
                       "the weights were packed as {}, but for this input oneDNN wants {} and the "
                       "stored layout cannot be used instead: {}",
                       DescribeWeightFormat(format), DescribeWeightFormat(wanted),
                       stored.status().message());
  }
  if (stored->data_type() != type) {
    return EPCTX_ERROR(kInvalidArgument, "weights_format {} is not {} layout",
                       DescribeWeightFormat(format),
                       type == dnnl::memory::data_type::s8     ? "an int8"
                       : type == dnnl::memory::data_type::bf16 ? "a bfloat16"
                       : type == dnnl::memory::data_type::f16  ? "a float16"
                                                               : "a float32");
  }
  return stored;
}

std::string DescribeWeightFormat(std::span<const int64_t> encoding) {
  if (encoding.size() < kHeader) return "malformed";
  const int64_t kind = encoding[1];
  const int64_t ndims = std::clamp<int64_t>(encoding[3], 0, DNNL_MAX_NDIMS);
  const size_t shown = std::min(static_cast<size_t>(ndims), encoding.size() - kHeader);
  const std::string dims = fmt::format("{}", fmt::join(encoding.subspan(kHeader, shown), ","));
  if (kind == kKindWinograd) return fmt::format("onednn-winograd [{}]", dims);
  const char* type = encoding[2] == dnnl_s8     ? " int8"
                     : encoding[2] == dnnl_bf16 ? " bf16"
                     : encoding[2] == dnnl_f16  ? " f16"
                                                : "";
  if (kind != kKindBlocked) return "malformed";
  auto decoded = DecodeBlockedWeightFormat(encoding);
  if (!decoded.ok()) return "malformed";
  const dnnl_blocking_desc_t& b = decoded->data.format_desc.blocking;
  std::string blocks;
  for (int i = 0; i < b.inner_nblks; ++i) {
    blocks += fmt::format("{}{}", b.inner_blks[i], static_cast<char>('a' + b.inner_idxs[i]));
  }
  return fmt::format("onednn-blocked{} [{}]{}{}", type, dims, blocks.empty() ? "" : " blocks ",
                     blocks);
}

}  // namespace epctx::exec::kernels::onednn
