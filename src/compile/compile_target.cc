// Public descriptions of the compile target and packing layouts.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "compile/compile_model.h"
#include "compile/contrib/contrib_schemas.h"
#include "compile/packing/layouts.h"
#include "epctx/compiler.h"
#include "epctx_build_info.h"
#include "exec/kernel.h"
#include "exec/kernels/epctx_ops.h"
#include "exec/kernels/onednn/isa.h"
#include "format/target.h"
#include "util/cpu_features.h"

namespace epctx {

CompileTarget CurrentCompileTarget() {
  format::TargetFingerprint t = compile::PackingTarget();
  CompileTarget out;
  out.hardware_architecture = format::HardwareArchitecture(t);
  out.packing_build_id =
      std::string(t.packing_build_id, strnlen(t.packing_build_id, sizeof t.packing_build_id));
  out.pack_layout_version = t.pack_layout_version;
  out.usable_on_this_cpu = (t.required_cpu_features & ~DetectedCpuFeatures()) == 0;
  out.kernel_isa = format::KernelIsaName(static_cast<format::KernelIsa>(t.kernel_isa));
  out.kernel_library =
      fmt::format("oneDNN {} (Debian package {})", EPCTX_DNNL_VERSION, EPCTX_DNNL_PACKAGE);
  out.int8_vnni = exec::kernels::onednn::Int8KernelsHaveVnni();
  return out;
}

std::vector<std::string> PackLayoutDescriptions() {
  using compile::PackLayout;
  return {
      fmt::format("{} plain: ONNX's own row-major layout", static_cast<int>(PackLayout::kPlain)),
      fmt::format("{} conv-filter-oihw: Conv filter as a row-major [M, C/group*kH*kW] GEMM "
                  "operand, BatchNormalization folded in",
                  static_cast<int>(PackLayout::kConvFilterOihw)),
      fmt::format("{} gemm-b-transposed: Gemm B as [N, K] with alpha folded in",
                  static_cast<int>(PackLayout::kGemmBTransposed)),
      fmt::format("{} onednn: the layout oneDNN {} picks for the primitive that reads it "
                  "(Conv filters), described by the node's weights_format",
                  static_cast<int>(PackLayout::kOneDnn), EPCTX_DNNL_VERSION),
      fmt::format("{} nbits-codes: MatMulNBits int4 codes, each 16 bytes holding codes j and "
                  "j + 16 of a group of 32 (int8 codes as code - 128)",
                  static_cast<int>(PackLayout::kNBitsCodes)),
  };
}

std::vector<std::string> SupportedOperatorLines() {
  // Constant nodes become constants when a model is imported: no kernel runs them.
  std::vector<std::string> models = {"ai.onnx Constant from opset 1 (made a constant at import)"};
  std::vector<std::string> own;
  for (const exec::RegisteredOp& op : exec::KernelRegistry::Global().Ops()) {
    if (op.domain == ops::kDomain) {
      own.push_back(
          fmt::format("{} {} (epctx's own, written by its compile passes)", op.domain, op.op_type));
      continue;
    }
    std::string line = fmt::format("{} {} from opset {}", op.domain.empty() ? "ai.onnx" : op.domain,
                                   op.op_type, op.since_versions.front());
    if (op.accepts & exec::kStringTensors) line += "; string tensors too";
    if (op.accepts & exec::kAnyValueKind) line += "; sequences and optionals too";
    models.push_back(std::move(line));
  }
  for (const char* op : compile::kExpandedContribOps) {
    models.push_back(fmt::format("{} {} from opset 1 (expanded into ONNX operators at compile)",
                                 compile::kMicrosoftDomain, op));
  }
  std::sort(models.begin(), models.end());
  models.insert(models.end(), own.begin(), own.end());
  return models;
}

}  // namespace epctx
