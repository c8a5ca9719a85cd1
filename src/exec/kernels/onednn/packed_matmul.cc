#include "exec/kernels/onednn/packed_matmul.h"

#include "exec/kernels/common/shape.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/runtime.h"
#include "exec/kernels/onednn/weight_format.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels::onednn {

Status PackedWeightMatMul::Init(const Attributes& attrs, const MatMulConfig& config) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> dims, attrs.GetInts(ops::kWeightsShape));
  EPCTX_ASSIGN_OR_RETURN(format_, attrs.GetInts(ops::kWeightsFormat));
  if (dims.size() != 2 || dims[0] < 1 || dims[1] < 1) {
    return EPCTX_ERROR(kInvalidArgument, "weights_shape {} is not a [K, N] matrix",
                       ShapeToString(dims));
  }
  if (format_.empty()) return EPCTX_ERROR(kInvalidArgument, "weights_format is missing");
  k_ = dims[0];
  n_ = dims[1];
  config_ = config;
  format_hash_ = Hash64(std::as_bytes(std::span<const int64_t>(format_)));
  return Status::Ok();
}

Result<MatMulGeometry> PackedWeightMatMul::GeometryFor(const std::vector<int64_t>& a_shape) const {
  if (a_shape.empty() || a_shape.back() != k_) {
    return EPCTX_ERROR(kInvalidArgument, "input A has shape {}, expected [..., {}]",
                       ShapeToString(a_shape), k_);
  }
  EPCTX_ASSIGN_OR_RETURN(const int64_t rows, CheckedDimProduct(a_shape, 0, a_shape.size() - 1));
  return MatMulGeometry{rows, k_, n_};
}

std::vector<int64_t> PackedWeightMatMul::OutputShape(const std::vector<int64_t>& a_shape) const {
  std::vector<int64_t> shape(a_shape.begin(), a_shape.end() - 1);
  shape.push_back(n_);
  return shape;
}

void PackedWeightMatMul::Prepare(std::span<const std::vector<int64_t>* const> shapes, int threads) {
  if (shapes.empty() || shapes[0] == nullptr) return;
  auto g = GeometryFor(*shapes[0]);
  if (g.ok()) (void)PrimitiveFor(*shapes[0], *g, threads);
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
