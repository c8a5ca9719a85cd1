#include "exec/kernels/onednn/panel_matmul.h"

#include <fmt/format.h>

#include "exec/kernels/onednn/conv_primitive.h"
#include "exec/kernels/onednn/post_ops.h"
#include "exec/kernels/onednn/runtime.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {
namespace {

// The rows (or the output's rows) as an nhwc image: one image, K (N) channels, M x 1 pixels.
dnnl::memory::desc RowsAsImage(int64_t m, int64_t channels) {
  return dnnl::memory::desc({1, channels, m, 1}, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::nhwc);
}

dnnl::memory::desc PanelFilterDesc(int64_t k, int64_t n, bool panels) {
  using tag = dnnl::memory::format_tag;
  return dnnl::memory::desc({n, k, 1, 1}, dnnl::memory::data_type::f32,
                            panels ? tag::OIhw8i8o : tag::any);
}

}  // namespace

dnnl::memory::desc PanelWeightDesc(int64_t k, int64_t n) {
  dnnl_memory_desc_t md{};
  md.ndims = 2;
  md.data_type = dnnl_f32;
  md.dims[0] = k;
  md.dims[1] = n;
  md.padded_dims[0] = PaddedToPanel(k);
  md.padded_dims[1] = PaddedToPanel(n);
  md.format_kind = dnnl_blocked;
  dnnl_blocking_desc_t& blk = md.format_desc.blocking;
  blk.inner_nblks = 2;  // 8 rows of 8 columns innermost
  blk.inner_blks[0] = kPanelColumns;
  blk.inner_blks[1] = kPanelColumns;
  blk.inner_idxs[0] = 0;
  blk.inner_idxs[1] = 1;
  blk.strides[0] = kPanelColumns * kPanelColumns;      // the next 8 rows of a panel
  blk.strides[1] = md.padded_dims[0] * kPanelColumns;  // the next panel
  return dnnl::memory::desc(md);
}

Result<dnnl::convolution_forward::primitive_desc> MakePanelMatMulPrimitiveDesc(
    const MatMulGeometry& g, const MatMulConfig& c, bool panels) {
  if (c.integer || c.bf16) {
    return EPCTX_ERROR(kInvalidArgument, "a matmul as a 1x1 convolution is float32 only");
  }
  try {
    using dnnl::memory;
    const memory::desc src = RowsAsImage(g.m, g.k);
    const memory::desc dst = RowsAsImage(g.m, g.n);
    const memory::desc bias =
        c.has_bias ? memory::desc({g.n}, memory::data_type::f32, memory::format_tag::x)
                   : memory::desc();
    const memory::dims ones{1, 1}, zeros{0, 0};
    auto desc = dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
        PanelFilterDesc(g.k, g.n, panels), bias, dst, ones, zeros, zeros, zeros);
    return ConvWithPostOps(desc, c.post_ops, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("a matmul of [{}, {}] by [{}, {}] as a 1x1 convolution",
                                        g.m, g.k, g.k, g.n));
  }
}

bool TakesPanelMatMul(const MatMulGeometry& g, const MatMulConfig& c,
                      bool matmul_reads_plain_rows) {
  if (!matmul_reads_plain_rows || c.integer || c.bf16) return false;
  // Narrow or short weights stay in rows: panels would pad them by more than a quarter.
  const int64_t plain = g.k * g.n, padded = PaddedToPanel(g.k) * PaddedToPanel(g.n);
  if (padded * 4 > plain * 5) return false;
  auto pd = MakePanelMatMulPrimitiveDesc(g, c, false);
  return pd.ok() && pd->weights_desc() == PanelFilterDesc(g.k, g.n, true);
}

Result<std::shared_ptr<const CachedPrimitive>> PanelMatMul::PrimitiveFor(
    const std::vector<int64_t>& a_shape, const MatMulGeometry& g, int threads) {
  return memo_.FindOrCreate(
      a_shape, threads, [&] { return "panels " + MatMulKey(g, config_, threads); },
      [&]() -> Result<CachedPrimitive> {
        ThreadBudget budget(threads);
        EPCTX_ASSIGN_OR_RETURN(auto pd, MakePanelMatMulPrimitiveDesc(g, config_, true));
        CachedPrimitive out;
        try {
          out.primitive = dnnl::convolution_forward(pd);
          out.scratchpad_bytes = pd.scratchpad_desc().get_size();
          out.implementation = std::string("onednn:") + pd.impl_info_str();
          out.weights = pd.weights_desc();
        } catch (const dnnl::error& e) {
          return FromDnnlError(e, "creating a matmul as a 1x1 convolution");
        }
        return out;
      });
}

Status PanelMatMul::Run(const Tensor& a, const Tensor& w, const Tensor* b, const Tensor* r,
                        const MatMulGeometry& g, Tensor& y, int threads) {
  EPCTX_ASSIGN_OR_RETURN(std::shared_ptr<const CachedPrimitive> prim,
                         PrimitiveFor(a.shape(), g, threads));
  if (w.dtype() != DataType::kFloat32 || w.byte_size() != prim->weights.get_size()) {
    return EPCTX_ERROR(kInvalidArgument, "packed W holds {} bytes; its layout needs {}",
                       w.byte_size(), prim->weights.get_size());
  }
  std::unordered_map<int, dnnl::memory> args;
  try {
    args.emplace(DNNL_ARG_SRC, Wrap(RowsAsImage(g.m, g.k), a.data()));
    args.emplace(DNNL_ARG_WEIGHTS, Wrap(prim->weights, w.data()));
    if (b != nullptr) {
      args.emplace(DNNL_ARG_BIAS, Wrap(PlainDesc({g.n}, dnnl::memory::format_tag::x), b->data()));
    }
    args.emplace(DNNL_ARG_DST, Wrap(RowsAsImage(g.m, g.n), y.data()));
    if (r != nullptr) {
      args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(ResidualIndex(config_.post_ops)) | DNNL_ARG_SRC_1,
                   Wrap(RowsAsImage(g.m, g.n), r->data()));
    }
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "preparing a matmul as a 1x1 convolution");
  }
  return ExecutePrimitive(*prim, args, threads, "a matmul as a 1x1 convolution");
}

}  // namespace epctx::exec::kernels::onednn
