// MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] matrix that maps a onesided spectrum
// to mel bands, each a triangle over spectrogram bins. Band edges follow the ONNX reference
// exactly: num_mel_bins + 2 points spaced by (high_mel - low_mel) / (num_mel_bins + 2) from
// low_mel, converted back to hertz and to bins by floor((dft_length + 1) * hz / sample_rate),
// all in double as NumPy computes them; a band whose left edge meets its centre is a single 1.
// Outputs float32 or float64 (output_datatype).
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/signal/scalar_input.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

// Largest output accepted, in elements.
constexpr int64_t kMaxMelMatrixElements = int64_t{1} << 28;

// Python's float floor division (a // b), which differs from floor(a / b) when a / b rounds up
// to an integer.
double FloorDivide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}

double HertzToMel(double hz) {
  return 2595.0 * std::log10(1.0 + hz / 700.0);
}

double MelToHertz(double mel) {
  return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
}

class MelWeightMatrixKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<MelWeightMatrixKernel>(new MelWeightMatrixKernel());
    EPCTX_ASSIGN_OR_RETURN(int64_t type, node.attrs->GetInt("output_datatype", 1));
    kernel->out_type_ = static_cast<DataType>(type);
    if (kernel->out_type_ != DataType::kFloat32 && kernel->out_type_ != DataType::kFloat64) {
      return EPCTX_ERROR(kUnsupported, "output_datatype {} is not float32 (1) or float64 (11)",
                         type);
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* mel_t, RequiredInput(ctx, 0, "num_mel_bins"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* dft_t, RequiredInput(ctx, 1, "dft_length"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* rate_t, RequiredInput(ctx, 2, "sample_rate"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* lower_t, RequiredInput(ctx, 3, "lower_edge_hertz"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* upper_t, RequiredInput(ctx, 4, "upper_edge_hertz"));
    EPCTX_ASSIGN_OR_RETURN(const int64_t num_mel, ReadIntScalar(*mel_t, "num_mel_bins"));
    EPCTX_ASSIGN_OR_RETURN(const int64_t dft_length, ReadIntScalar(*dft_t, "dft_length"));
    EPCTX_ASSIGN_OR_RETURN(const int64_t sample_rate, ReadIntScalar(*rate_t, "sample_rate"));
    EPCTX_ASSIGN_OR_RETURN(const double lower, ReadFloatScalar(*lower_t, "lower_edge_hertz"));
    EPCTX_ASSIGN_OR_RETURN(const double upper, ReadFloatScalar(*upper_t, "upper_edge_hertz"));
    if (num_mel < 0 || dft_length < 1 || sample_rate < 1) {
      return EPCTX_ERROR(kInvalidArgument,
                         "num_mel_bins {}, dft_length {} and sample_rate {} must be positive "
                         "(num_mel_bins may be 0)",
                         num_mel, dft_length, sample_rate);
    }
    const int64_t spectrum_bins = dft_length / 2 + 1;
    if (num_mel > kMaxMelMatrixElements / spectrum_bins) {
      return EPCTX_ERROR(kInvalidArgument, "a {}x{} matrix exceeds {} elements", spectrum_bins,
                         num_mel, kMaxMelMatrixElements);
    }

    const double low_mel = HertzToMel(lower);
    const double mel_step = (HertzToMel(upper) - low_mel) / static_cast<double>(num_mel + 2);
    std::vector<int64_t> edge(static_cast<size_t>(num_mel + 2));
    for (int64_t k = 0; k < num_mel + 2; ++k) {
      const double hz = MelToHertz(static_cast<double>(k) * mel_step + low_mel);
      const double bin =
          FloorDivide(static_cast<double>(dft_length + 1) * hz, static_cast<double>(sample_rate));
      // The last edge is only ever a right end, one past the last bin written.
      const double limit =
          static_cast<double>(k == num_mel + 1 ? spectrum_bins : spectrum_bins - 1);
      if (!(bin >= 0 && bin <= limit)) {
        return EPCTX_ERROR(kInvalidArgument,
                           "mel band edge {} falls on spectrogram bin {}, outside [0, {}] "
                           "(lower_edge_hertz {}, upper_edge_hertz {}, sample_rate {})",
                           k, bin, limit, lower, upper, sample_rate);
      }
      edge[static_cast<size_t>(k)] = static_cast<int64_t>(bin);
    }

    std::vector<double> w(static_cast<size_t>(spectrum_bins * num_mel), 0.0);
    auto at = [&](int64_t bin, int64_t band) -> double& {
      return w[static_cast<size_t>(bin * num_mel + band)];
    };
    for (int64_t i = 0; i < num_mel; ++i) {
      const int64_t left = edge[static_cast<size_t>(i)];
      const int64_t centre = edge[static_cast<size_t>(i + 1)];
      const int64_t right = edge[static_cast<size_t>(i + 2)];
      if (centre == left) {
        at(centre, i) = 1;
      } else {
        for (int64_t j = left; j <= centre; ++j) {
          at(j, i) = static_cast<double>(j - left) / static_cast<double>(centre - left);
        }
      }
      for (int64_t j = centre; j < right; ++j) {
        at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - centre);
      }
    }

    EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_type_, {spectrum_bins, num_mel}));
    if (out_type_ == DataType::kFloat64) {
      double* out = y->mutable_data_as<double>();
      for (size_t i = 0; i < w.size(); ++i) out[i] = w[i];
    } else {
      float* out = y->mutable_data_as<float>();
      for (size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i]);
    }
    return Status::Ok();
  }

 private:
  MelWeightMatrixKernel() = default;

  DataType out_type_ = DataType::kFloat32;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateMelWeightMatrix(const NodeInfo& node) {
  return MelWeightMatrixKernel::Create(node);
}

}  // namespace epctx::exec::kernels
