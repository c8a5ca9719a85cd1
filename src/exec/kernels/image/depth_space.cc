// DepthToSpace (DCR and CRD) and SpaceToDepth: each is a reshape to 6-D, a fixed permutation and
// a reshape back, on elements of any fixed size.
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

using Dims6 = std::array<int64_t, 6>;

// out[i0..i5] = in[i at perm], out dims being in dims permuted: out_dim[k] = in_dim[perm[k]].
template <typename E>
void Permute6(const E* in, const Dims6& dims, const Dims6& perm, E* out, int threads) {
  Dims6 in_strides;
  int64_t stride = 1;
  for (size_t d = 6; d-- > 0;) {
    in_strides[d] = stride;
    stride *= dims[d];
  }
  Dims6 od, os;
  for (size_t k = 0; k < 6; ++k) {
    od[k] = dims[static_cast<size_t>(perm[k])];
    os[k] = in_strides[static_cast<size_t>(perm[k])];
  }
  const int64_t rows = od[0] * od[1] * od[2] * od[3] * od[4];
  const int64_t inner = od[5];
  const int nt = ThreadsFor(threads, rows * inner);
  ParallelForRanges(nt, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t rest = row, offset = 0;
      for (size_t k = 5; k-- > 0;) {
        offset += (rest % od[k]) * os[k];
        rest /= od[k];
      }
      E* o = out + row * inner;
      for (int64_t i = 0; i < inner; ++i) o[i] = in[offset + i * os[5]];
    }
  });
}

void Permute6Bytes(const void* in, size_t element_size, const Dims6& dims, const Dims6& perm,
                   void* out, int threads) {
  switch (element_size) {
    case 1:
      Permute6(static_cast<const uint8_t*>(in), dims, perm, static_cast<uint8_t*>(out), threads);
      break;
    case 2:
      Permute6(static_cast<const uint16_t*>(in), dims, perm, static_cast<uint16_t*>(out), threads);
      break;
    case 4:
      Permute6(static_cast<const uint32_t*>(in), dims, perm, static_cast<uint32_t*>(out), threads);
      break;
    default:
      Permute6(static_cast<const uint64_t*>(in), dims, perm, static_cast<uint64_t*>(out), threads);
      break;
  }
}

class DepthSpaceKernel final : public Kernel {
 public:
  enum class Kind { kDepthToSpaceDcr, kDepthToSpaceCrd, kSpaceToDepth };

  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node, bool depth_to_space) {
    auto kernel = std::unique_ptr<DepthSpaceKernel>(new DepthSpaceKernel());
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* block,
                           node.attrs->Require("blocksize", AttrType::kInt));
    kernel->block_ = block->i;
    // The bound keeps blocksize^2 far from overflowing (the output dims are checked products).
    if (kernel->block_ < 1 || kernel->block_ > (int64_t{1} << 16)) {
      return EPCTX_ERROR(kInvalidArgument, "blocksize is {}, expected 1 to 65536", kernel->block_);
    }
    kernel->kind_ = Kind::kSpaceToDepth;
    if (depth_to_space) {
      EPCTX_ASSIGN_OR_RETURN(std::string mode, node.attrs->GetString("mode", "DCR"));
      if (mode == "DCR") {
        kernel->kind_ = Kind::kDepthToSpaceDcr;
      } else if (mode == "CRD") {
        kernel->kind_ = Kind::kDepthToSpaceCrd;
      } else {
        return EPCTX_ERROR(kInvalidArgument, "mode '{}' is not DCR or CRD", mode);
      }
    }
    EPCTX_RETURN_IF_ERROR(ExpectStaticRank(node, 0, 4, "input"));
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "input"));
    EPCTX_RETURN_IF_ERROR(ExpectRank(*x, 4, "input"));
    EPCTX_ASSIGN_OR_RETURN(size_t element_size, CopyableElementSize(x->dtype(), "input"));
    const std::vector<int64_t>& s = x->shape();
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = block_;
    Dims6 dims, perm;
    std::vector<int64_t> y_shape;
    if (kind_ == Kind::kSpaceToDepth) {
      if (h % b != 0 || w % b != 0) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input has spatial dims {}x{}, not multiples of blocksize {}", h, w, b);
      }
      dims = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      EPCTX_ASSIGN_OR_RETURN(const int64_t depth, CheckedDimProduct(std::vector<int64_t>{c, b, b}));
      y_shape = {n, depth, h / b, w / b};
    } else {
      if (c % (b * b) != 0) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input has {} channels, not a multiple of blocksize^2 = {}", c, b * b);
      }
      if (kind_ == Kind::kDepthToSpaceDcr) {
        dims = {n, b, b, c / (b * b), h, w};
        perm = {0, 3, 4, 1, 5, 2};
      } else {
        dims = {n, c / (b * b), b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      }
      EPCTX_ASSIGN_OR_RETURN(const int64_t height, CheckedDimProduct(std::vector<int64_t>{h, b}));
      EPCTX_ASSIGN_OR_RETURN(const int64_t width, CheckedDimProduct(std::vector<int64_t>{w, b}));
      y_shape = {n, c / (b * b), height, width};
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->dtype(), y_shape));
    if (y->element_count() == 0) return Status::Ok();
    Permute6Bytes(x->data(), element_size, dims, perm, y->mutable_data(), ctx.num_threads());
    return Status::Ok();
  }

 private:
  DepthSpaceKernel() = default;
  Kind kind_ = Kind::kSpaceToDepth;
  int64_t block_ = 1;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateDepthToSpace(const NodeInfo& node) {
  return DepthSpaceKernel::Create(node, true);
}

Result<std::unique_ptr<Kernel>> CreateSpaceToDepth(const NodeInfo& node) {
  return DepthSpaceKernel::Create(node, false);
}

}  // namespace epctx::exec::kernels
