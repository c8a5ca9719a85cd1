#include "exec/kernels/onednn/matmul_primitive.h"

#include <fmt/format.h>

#include "exec/kernels/onednn/runtime.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Result<dnnl::matmul::primitive_desc> MakeMatMulPrimitiveDesc(const MatMulGeometry& g,
                                                             const MatMulConfig& c,
                                                             const dnnl::memory::desc* weights) {
  // oneDNN 2.x divides by a zero dimension while making such a matmul (SIGFPE); the kernels
  // return early when the output is empty, so only a preparation or an empty K comes here.
  if (g.m <= 0 || g.k <= 0 || g.n <= 0) {
    return EPCTX_ERROR(kUnsupported,
                       "a matmul of [{}, {}] by [{}, {}]: no oneDNN matmul has an "
                       "empty dimension",
                       g.m, g.k, g.k, g.n);
  }
  try {
    using dnnl::memory;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    const dt src_type = c.integer ? dt::u8 : c.bf16 ? dt::bf16 : dt::f32;
    const dt weight_type = c.integer ? dt::s8 : c.bf16 ? dt::bf16 : dt::f32;
    const memory::desc src({g.m, g.k}, src_type, tag::ab);
    const memory::desc dst({g.m, g.n}, c.integer ? dt::s32 : dt::f32, tag::ab);
    const memory::desc wei =
        weights != nullptr ? *weights : memory::desc({g.k, g.n}, weight_type, tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (c.integer && (c.has_bias || !c.post_ops.empty())) {
      return EPCTX_ERROR(kInvalidArgument, "an integer matmul takes no bias or post-ops");
    }
    EPCTX_ASSIGN_OR_RETURN(dnnl::post_ops chain, ToDnnlPostOps(c.post_ops, &dst));
    attr.set_post_ops(chain);
    if (c.has_bias) {
      dnnl::matmul::desc desc(src, wei, PlainDesc({1, g.n}, tag::ab), dst);
      return dnnl::matmul::primitive_desc(desc, attr, CpuEngine());
    }
    dnnl::matmul::desc desc(src, wei, dst);
    return dnnl::matmul::primitive_desc(desc, attr, CpuEngine());
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, fmt::format("a matmul of [{}, {}] by [{}, {}]", g.m, g.k, g.k, g.n));
  }
}

std::string MatMulKey(const MatMulGeometry& g, const MatMulConfig& c, int threads) {
  std::string key = fmt::format("matmul{} t{} m{} k{} n{} b{}",
                                c.integer ? " u8s8s32"
                                : c.bf16  ? " bf16"
                                          : "",
                                threads, g.m, g.k, g.n, c.has_bias ? 1 : 0);
  for (const PostOp& op : c.post_ops) {
    key += fmt::format(" p{}:{}:{}", static_cast<int>(op.kind), op.alpha, op.beta);
  }
  return key;
}

}  // namespace epctx::exec::kernels::onednn
