#include "exec/kernels/dnnl/weight_packing.h"

#include "exec/kernels/dnnl/runtime.h"
#include "exec/kernels/dnnl/weight_format.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Result<PackedWeight> PackConvWeights(const ConvGeometry& g, const ConvConfig& c,
                                     const float* oihw) {
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeConvPrimitiveDesc(g, c, nullptr));
  PackedWeight out;
  const dnnl::memory::desc packed = pd.weights_desc();
  EPCTX_ASSIGN_OR_RETURN(out.format, EncodeWeightFormat(packed));
  out.implementation = pd.impl_info_str();
  const size_t bytes = packed.get_size();
  EPCTX_ASSIGN_OR_RETURN(
      out.bytes,
      Tensor::Allocate(DataType::kFloat32, {static_cast<int64_t>(bytes / sizeof(float))}));
  try {
    const dnnl::memory::dims dims = g.dnnl_weight_dims();
    const auto tag = [&] {
      using tag = dnnl::memory::format_tag;
      const size_t spatial = g.kernel.size();
      if (g.group > 1) return spatial == 1 ? tag::goiw : spatial == 3 ? tag::goidhw : tag::goihw;
      return spatial == 1 ? tag::oiw : spatial == 3 ? tag::oidhw : tag::oihw;
    }();
    dnnl::memory src = Wrap(PlainDesc(dims, tag), oihw);
    dnnl::memory dst = Wrap(packed, out.bytes.data());
    dnnl::reorder(src, dst).execute(ThreadStream(), src, dst);
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "packing convolution weights");
  }
  return out;
}

}  // namespace epctx::exec::kernels::onednn
