// `epctx compare ACTUAL REFERENCE [--rtol R] [--atol A]`: compares two tensor files element by
// element (|actual - reference| <= atol + rtol * |reference|; NaN matches NaN and an infinity the
// same infinity, as numpy.isclose with equal_nan) and reports the largest differences.
// Exit status 1 when they differ beyond the tolerance, or their types or shapes differ.

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "commands.h"
#include "conformance/compare.h"
#include "epctx/tensor_io.h"
#include "util/status_macros.h"

namespace epctx::cli {
namespace {

struct CompareArgs {
  std::string actual;
  std::string reference;
  double rtol = 1e-4;
  double atol = 0;
};

// An IEEE half (float16) or bfloat16 as a double.
double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return sign ? -v : v;
}
double BFloat16ToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
double AsDouble(T v) {
  return static_cast<double>(v);
}

template <typename T, double (*kToDouble)(T) = AsDouble<T>>
Status CompareValues(const Tensor& a, const Tensor& b, const CompareArgs& args) {
  const T* x = a.data_as<T>();
  const T* y = b.data_as<T>();
  double max_abs = 0, max_ref = 0, max_rel = 0;
  int64_t mismatches = 0, worst = -1;
  for (int64_t i = 0; i < b.element_count(); ++i) {
    double xi = kToDouble(x[i]), yi = kToDouble(y[i]);
    if (!conformance::Close(xi, yi, {.rtol = args.rtol, .atol = args.atol})) {
      if (worst < 0) worst = i;
      mismatches++;
    }
    // Equal values (NaN with NaN, an infinity with itself) differ by nothing.
    double diff = xi == yi || (std::isnan(xi) && std::isnan(yi)) ? 0 : std::fabs(xi - yi);
    if (std::isnan(diff)) diff = INFINITY;
    max_abs = std::max(max_abs, diff);
    if (std::isfinite(yi)) max_ref = std::max(max_ref, std::fabs(yi));
    if (yi != 0 && std::isfinite(yi)) max_rel = std::max(max_rel, diff / std::fabs(yi));
  }
  std::printf(
      "%lld elements: max abs diff %.3g, max |reference| %.4g, max abs diff / max "
      "|reference| %.3g, max relative diff %.3g\n",
      static_cast<long long>(b.element_count()), max_abs, max_ref,
      max_ref > 0 ? max_abs / max_ref : 0.0, max_rel);
  if (mismatches > 0) {
    return EPCTX_ERROR(kFailedPrecondition,
                       "{} of {} elements differ beyond atol {} + rtol {} "
                       "(first at flat index {})",
                       mismatches, b.element_count(), args.atol, args.rtol, worst);
  }
  std::printf("match within atol %g + rtol %g\n", args.atol, args.rtol);
  return Status::Ok();
}

Status RunCompare(const CompareArgs& args) {
  EPCTX_ASSIGN_OR_RETURN(Tensor a, ReadTensorFile(args.actual));
  EPCTX_ASSIGN_OR_RETURN(Tensor b, ReadTensorFile(args.reference));
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return EPCTX_ERROR(kFailedPrecondition, "'{}' is {} {} but '{}' is {} {}", args.actual,
                       DataTypeName(a.dtype()), ShapeToString(a.shape()), args.reference,
                       DataTypeName(b.dtype()), ShapeToString(b.shape()));
  }
  switch (a.dtype()) {
    case DataType::kFloat32:
      return CompareValues<float>(a, b, args);
    case DataType::kFloat64:
      return CompareValues<double>(a, b, args);
    case DataType::kFloat16:
      return CompareValues<uint16_t, HalfToDouble>(a, b, args);
    case DataType::kBFloat16:
      return CompareValues<uint16_t, BFloat16ToDouble>(a, b, args);
    case DataType::kInt64:
      return CompareValues<int64_t>(a, b, args);
    case DataType::kInt32:
      return CompareValues<int32_t>(a, b, args);
    case DataType::kUint8:
    case DataType::kBool:
      return CompareValues<uint8_t>(a, b, args);
    case DataType::kInt8:
      return CompareValues<int8_t>(a, b, args);
    default:
      break;
  }
  return EPCTX_ERROR(kUnsupported, "comparing {} tensors is not supported",
                     DataTypeName(a.dtype()));
}

}  // namespace

Command AddCompareCommand(CLI::App& parent, const GlobalOptions&) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* app = parent.add_subcommand(
      "compare",
      "Compare two tensor files (.npy or .pb): |actual - reference| <= atol + rtol * "
      "|reference| for every element (NaN matches NaN, an infinity the same infinity)");
  app->add_option("actual", args->actual, "Tensor file to check")->required();
  app->add_option("reference", args->reference, "Reference tensor file")->required();
  app->add_option("--rtol", args->rtol, "Relative tolerance")->default_val(1e-4);
  app->add_option("--atol", args->atol, "Absolute tolerance")->default_val(0);
  return Command{app, [args]() { return RunCompare(*args); }};
}

}  // namespace epctx::cli
