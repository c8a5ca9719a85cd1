#include "exec/kernels/onednn/packed_matmul.h"

#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Status PackedWeightMatMul::Init(const MatMulConfig& config, std::vector<int64_t> format) {
  if (format.empty()) return EPCTX_ERROR(kInvalidArgument, "weights_format is missing");
  config_ = config;
  format_ = std::move(format);
  format_hash_ = Hash64(std::as_bytes(std::span<const int64_t>(format_)));
  return Status::Ok();
}

Result<std::shared_ptr<const CachedPrimitive>> PackedWeightMatMul::PrimitiveFor(
    const std::vector<int64_t>& a_shape, const MatMulGeometry& g, int threads) {
  return memo_.FindOrCreate(
      a_shape, threads,
      [&] { return MatMulKey(g, config_, threads) + fmt::format(" f{:x}", format_hash_); },
      [&] { return Make(g, threads); });
}

Result<CachedPrimitive> PackedWeightMatMul::Make(const MatMulGeometry& g, int threads) const {
  ThreadBudget budget(threads);
  EPCTX_ASSIGN_OR_RETURN(auto pd, MakeMatMulPrimitiveDesc(g, config_, nullptr));
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> wanted, EncodeWeightFormat(pd.weights_desc()));
  if (wanted != format_) {
    EPCTX_ASSIGN_OR_RETURN(dnnl::memory::desc stored,
                           StoredWeightLayout(format_, wanted, pd.weights_desc().data_type()));
    EPCTX_ASSIGN_OR_RETURN(pd, MakeMatMulPrimitiveDesc(g, config_, &stored));
  }
  CachedPrimitive out;
  try {
    out.primitive = dnnl::matmul(pd);
    out.scratchpad_bytes = pd.scratchpad_desc().get_size();
    out.implementation = std::string("onednn:") + pd.impl_info_str();
    out.weights = pd.weights_desc();
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, config_.integer ? "creating an integer matmul" : "creating a matmul");
  }
  if (config_.bf16) {
    EPCTX_RETURN_IF_ERROR(AddSourceConversion(
        out, PlainDesc({g.m, g.k}, dnnl::memory::format_tag::ab), pd.src_desc()));
  }
  return out;
}

}  // namespace epctx::exec::kernels::onednn
