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

namespace {

// "input 0: float32": the value whose element type the op's kernel computes on, and the types
// it takes there (string only where the kernel takes string tensors at all); where an older
// opset's kernel takes other types, "(opsets 6 to 10: float32)".
std::string TypedValueText(const exec::RegisteredOp& op) {
  const auto value = [](const exec::TypedValue& typed) {
    return fmt::format("{} {}", typed.output ? "output" : "input", typed.index);
  };
  const auto types = [&op](const exec::TypedValue& typed) {
    exec::ElementTypes t = typed.types;
    if (!(op.accepts & exec::kStringTensors)) t &= ~exec::TypeBit(DataType::kString);
    return exec::ElementTypesName(t);
  };
  const exec::TypedValue& newest = op.typed.back();
  std::string out = fmt::format("{}: {}", value(newest), types(newest));
  for (size_t i = 0; i + 1 < op.typed.size(); ++i) {
    const exec::TypedValue& older = op.typed[i];
    const exec::TypedValue& next = op.typed[i + 1];
    if (value(older) == value(next) && types(older) == types(next)) continue;
    out +=
        fmt::format(" (opsets {} to {}: {}{})", op.since_versions[i], op.since_versions[i + 1] - 1,
                    value(older) == value(newest) ? "" : value(older) + " ", types(older));
  }
  return out;
}

}  // namespace

std::vector<std::string> SupportedOperatorLines() {
  // Constant nodes become constants when a model is imported: no kernel runs them.
  std::vector<std::string> models = {"ai.onnx Constant from opset 1 (made a constant at import)"};
  std::vector<std::string> own;
  for (const exec::RegisteredOp& op : exec::KernelRegistry::Global().Ops()) {
    if (op.domain == ops::kDomain) {
      own.push_back(fmt::format("{} {} (epctx's own, written by its compile passes); {}", op.domain,
                                op.op_type, TypedValueText(op)));
      continue;
    }
    std::string line =
        fmt::format("{} {} from opset {}; {}", op.domain.empty() ? "ai.onnx" : op.domain,
                    op.op_type, op.since_versions.front(), TypedValueText(op));
    if (op.accepts & exec::kStringTensors) line += "; string tensors too";
    if (op.accepts & exec::kAnyValueKind) line += "; sequences and optionals too";
    if (!op.limits.empty()) line += "; " + op.limits;
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
