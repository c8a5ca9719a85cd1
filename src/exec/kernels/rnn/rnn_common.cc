#include "exec/kernels/rnn/rnn_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "exec/kernels/common/shape.h"
#include "exec/kernels/nn/gemm_f32.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct ActivationInfo {
  const char* name;
  RnnActivation::Kind kind;
  bool takes_alpha, takes_beta;
  float alpha, beta;  // defaults when the attribute lists run out
};

constexpr ActivationInfo kActivations[] = {
    {"relu", RnnActivation::Kind::kRelu, false, false, 0, 0},
    {"tanh", RnnActivation::Kind::kTanh, false, false, 0, 0},
    {"sigmoid", RnnActivation::Kind::kSigmoid, false, false, 0, 0},
    {"affine", RnnActivation::Kind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", RnnActivation::Kind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", RnnActivation::Kind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", RnnActivation::Kind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", RnnActivation::Kind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RnnActivation::Kind::kElu, true, false, 1.0f, 0},
    {"softsign", RnnActivation::Kind::kSoftsign, false, false, 0, 0},
    {"softplus", RnnActivation::Kind::kSoftplus, false, false, 0, 0},
};

Result<const float*> FloatInput(const Tensor& t, std::string_view name) {
  EPCTX_RETURN_IF_ERROR(ExpectDtype(t, DataType::kFloat32, name));
  return t.data_as<float>();
}

Status ExpectShape(const Tensor& t, const std::vector<int64_t>& want, std::string_view name) {
  if (t.shape() != want) {
    return EPCTX_ERROR(kInvalidArgument, "input {} has shape {}, expected {}", name,
                       ShapeToString(t.shape()), ShapeToString(want));
  }
  return Status::Ok();
}

// An initial state given as [directions, batch, hidden] (layout 0) or [batch, directions,
// hidden] (layout 1), in layout 0.
Result<std::vector<float>> ReadState(const Tensor* t, const RnnProblem& p, int64_t layout,
                                     std::string_view name) {
  const size_t count = static_cast<size_t>(p.directions * p.batch * p.hidden);
  if (t == nullptr) return std::vector<float>(count, 0.0f);
  EPCTX_ASSIGN_OR_RETURN(const float* data, FloatInput(*t, name));
  if (layout == 0) {
    EPCTX_RETURN_IF_ERROR(ExpectShape(*t, {p.directions, p.batch, p.hidden}, name));
    return std::vector<float>(data, data + count);
  }
  EPCTX_RETURN_IF_ERROR(ExpectShape(*t, {p.batch, p.directions, p.hidden}, name));
  std::vector<float> out(count);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t d = 0; d < p.directions; ++d) {
      std::copy_n(data + (b * p.directions + d) * p.hidden, p.hidden,
                  out.begin() + (d * p.batch + b) * p.hidden);
    }
  }
  return out;
}

}  // namespace

void ApplyRnnActivation(const RnnActivation& act, float* x, int64_t n) {
  const float a = act.alpha, b = act.beta;
  switch (act.kind) {
    case RnnActivation::Kind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
      break;
    case RnnActivation::Kind::kTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      break;
    case RnnActivation::Kind::kSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        // exp of a non-positive argument only, so that it cannot overflow.
        const float e = std::exp(-std::fabs(x[i]));
        x[i] = x[i] >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
      }
      break;
    case RnnActivation::Kind::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = a * x[i] + b;
      break;
    case RnnActivation::Kind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * x[i];
      break;
    case RnnActivation::Kind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a ? x[i] : 0.0f;
      break;
    case RnnActivation::Kind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = a * std::tanh(b * x[i]);
      break;
    case RnnActivation::Kind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(a * x[i] + b, 0.0f, 1.0f);
      break;
    case RnnActivation::Kind::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a * (std::exp(x[i]) - 1.0f);
      break;
    case RnnActivation::Kind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
      break;
    case RnnActivation::Kind::kSoftplus:
      for (int64_t i = 0; i < n; ++i) {
        x[i] = std::max(x[i], 0.0f) + std::log1p(std::exp(-std::fabs(x[i])));
      }
      break;
  }
}

void ClipGates(float clip, float* x, int64_t n) {
  if (clip <= 0) return;
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
}

Result<RnnAttrs> ParseRnnAttrs(const NodeInfo& node, const std::vector<std::string>& defaults) {
  const Attributes& attrs = *node.attrs;
  RnnAttrs a;
  EPCTX_ASSIGN_OR_RETURN(a.hidden_size, attrs.GetInt("hidden_size", -1));
  if (attrs.Has("hidden_size") && a.hidden_size < 1) {
    return EPCTX_ERROR(kInvalidArgument, "hidden_size is {}, expected at least 1", a.hidden_size);
  }
  EPCTX_ASSIGN_OR_RETURN(std::string direction, attrs.GetString("direction", "forward"));
  if (direction == "forward") {
    a.directions = 1;
  } else if (direction == "reverse") {
    a.directions = 1;
    a.reverse = true;
  } else if (direction == "bidirectional") {
    a.directions = 2;
  } else {
    return EPCTX_ERROR(kInvalidArgument, "direction '{}' is not forward, reverse or bidirectional",
                       direction);
  }
  EPCTX_ASSIGN_OR_RETURN(a.layout, attrs.GetInt("layout", 0));
  if (a.layout != 0 && a.layout != 1) {
    return EPCTX_ERROR(kInvalidArgument, "layout is {}, expected 0 or 1", a.layout);
  }
  EPCTX_ASSIGN_OR_RETURN(a.clip, attrs.GetFloat("clip", 0.0f));
  if (attrs.Has("clip") && !(a.clip > 0)) {
    return EPCTX_ERROR(kInvalidArgument, "clip is {}, expected > 0", a.clip);
  }
  std::vector<std::string> names;
  if (const AttributeValue* v = attrs.Find("activations"); v != nullptr) {
    if (v->type != AttrType::kStrings) {
      return EPCTX_ERROR(kInvalidArgument, "attribute activations is not a list of strings");
    }
    for (std::string_view s : v->strings) names.emplace_back(s);
  }
  const size_t per_dir = defaults.size();
  const size_t want = per_dir * static_cast<size_t>(a.directions);
  if (names.empty()) {
    for (int64_t d = 0; d < a.directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && a.directions == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one list for both directions
  } else if (names.size() != want) {
    return EPCTX_ERROR(kInvalidArgument, "activations has {} entries, expected {}", names.size(),
                       want);
  }
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> alphas, attrs.GetFloats("activation_alpha"));
  EPCTX_ASSIGN_OR_RETURN(std::vector<float> betas, attrs.GetFloats("activation_beta"));
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string lower = Lower(name);
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& candidate : kActivations) {
      if (lower == candidate.name) info = &candidate;
    }
    if (info == nullptr) {
      return EPCTX_ERROR(kUnsupported, "activation '{}' is not supported", name);
    }
    RnnActivation act;
    act.kind = info->kind;
    act.alpha = info->alpha;
    act.beta = info->beta;
    if (info->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    a.activations.push_back(act);
  }
  return a;
}

Result<RnnProblem> ReadRnnInputs(const KernelContext& ctx, const RnnAttrs& attrs, int64_t gates,
                                 bool lstm) {
  EPCTX_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, "X"));
  EPCTX_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1, "W"));
  EPCTX_ASSIGN_OR_RETURN(const Tensor* r, RequiredInput(ctx, 2, "R"));
  EPCTX_RETURN_IF_ERROR(ExpectRank(*x, 3, "X"));
  EPCTX_RETURN_IF_ERROR(ExpectRank(*r, 3, "R"));
  RnnProblem p;
  p.gates = gates;
  p.directions = attrs.directions;
  const std::vector<int64_t>& xs = x->shape();
  p.seq = attrs.layout == 0 ? xs[0] : xs[1];
  p.batch = attrs.layout == 0 ? xs[1] : xs[0];
  p.input = xs[2];
  p.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r->shape()[2];
  EPCTX_ASSIGN_OR_RETURN(p.x, FloatInput(*x, "X"));
  EPCTX_ASSIGN_OR_RETURN(p.w, FloatInput(*w, "W"));
  EPCTX_ASSIGN_OR_RETURN(p.r, FloatInput(*r, "R"));
  EPCTX_RETURN_IF_ERROR(ExpectShape(*w, {p.directions, gates * p.hidden, p.input}, "W"));
  EPCTX_RETURN_IF_ERROR(ExpectShape(*r, {p.directions, gates * p.hidden, p.hidden}, "R"));
  if (const Tensor* b = ctx.input(3); b != nullptr) {
    EPCTX_ASSIGN_OR_RETURN(p.b, FloatInput(*b, "B"));
    EPCTX_RETURN_IF_ERROR(ExpectShape(*b, {p.directions, 2 * gates * p.hidden}, "B"));
  }
  p.lengths.assign(static_cast<size_t>(p.batch), p.seq);
  if (const Tensor* lens = ctx.input(4); lens != nullptr) {
    EPCTX_ASSIGN_OR_RETURN(p.lengths, ReadIndexVector(*lens, "sequence_lens"));
    if (p.lengths.size() != static_cast<size_t>(p.batch)) {
      return EPCTX_ERROR(kInvalidArgument, "input sequence_lens has {} values, expected {}",
                         p.lengths.size(), p.batch);
    }
    for (int64_t len : p.lengths) {
      if (len < 0 || len > p.seq) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input sequence_lens holds {}, outside [0, {}] (the sequence length)",
                           len, p.seq);
      }
    }
  }
  EPCTX_ASSIGN_OR_RETURN(p.initial_h, ReadState(ctx.input(5), p, attrs.layout, "initial_h"));
  if (lstm) {
    EPCTX_ASSIGN_OR_RETURN(p.initial_c, ReadState(ctx.input(6), p, attrs.layout, "initial_c"));
    if (const Tensor* peep = ctx.input(7); peep != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(p.p, FloatInput(*peep, "P"));
      EPCTX_RETURN_IF_ERROR(ExpectShape(*peep, {p.directions, 3 * p.hidden}, "P"));
    }
  }
  if (attrs.layout == 1) {
    p.x_storage.resize(static_cast<size_t>(p.seq * p.batch * p.input));
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t t = 0; t < p.seq; ++t) {
        std::copy_n(p.x + (b * p.seq + t) * p.input, p.input,
                    p.x_storage.begin() + (t * p.batch + b) * p.input);
      }
    }
    p.x = p.x_storage.data();
  }
  return p;
}

Status ExpectFloatRnnInputs(const NodeInfo& node, bool lstm) {
  const size_t count = lstm ? 8 : 6;
  const char* names = lstm ? "X, W, R, B, initial_h, initial_c and P" : "X, W, R, B and initial_h";
  for (size_t i = 0; i < count; ++i) {
    if (i == 4) continue;  // sequence_lens
    EPCTX_RETURN_IF_ERROR(ExpectStaticDtype(node, i, DataType::kFloat32, names));
  }
  return Status::Ok();
}

RnnOutputs RnnOutputsOf(const NodeInfo& node) {
  RnnOutputs o;
  o.y = OutputPresent(node, 0);
  o.y_h = OutputPresent(node, 1);
  o.y_c = OutputPresent(node, 2);
  return o;
}

Status WriteRnnOutputs(KernelContext& ctx, const RnnAttrs& attrs, const RnnOutputs& outputs,
                       const RnnProblem& p, const std::vector<float>& y,
                       const std::vector<float>& h, const std::vector<float>& c) {
  const int64_t dirs = p.directions, batch = p.batch, hidden = p.hidden, seq = p.seq;
  if (outputs.y) {
    std::vector<int64_t> shape = attrs.layout == 0 ? std::vector<int64_t>{seq, dirs, batch, hidden}
                                                   : std::vector<int64_t>{batch, seq, dirs, hidden};
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kFloat32, shape));
    float* dst = out->mutable_data_as<float>();
    if (attrs.layout == 0) {
      std::copy(y.begin(), y.end(), dst);
    } else {
      for (int64_t t = 0; t < seq; ++t) {
        for (int64_t d = 0; d < dirs; ++d) {
          for (int64_t b = 0; b < batch; ++b) {
            std::copy_n(y.begin() + ((t * dirs + d) * batch + b) * hidden, hidden,
                        dst + ((b * seq + t) * dirs + d) * hidden);
          }
        }
      }
    }
  }
  auto write_state = [&](size_t index, const std::vector<float>& state) -> Status {
    std::vector<int64_t> shape = attrs.layout == 0 ? std::vector<int64_t>{dirs, batch, hidden}
                                                   : std::vector<int64_t>{batch, dirs, hidden};
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(index, DataType::kFloat32, shape));
    float* dst = out->mutable_data_as<float>();
    for (int64_t d = 0; d < dirs; ++d) {
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t to = attrs.layout == 0 ? d * batch + b : b * dirs + d;
        std::copy_n(state.begin() + (d * batch + b) * hidden, hidden, dst + to * hidden);
      }
    }
    return Status::Ok();
  };
  if (outputs.y_h) EPCTX_RETURN_IF_ERROR(write_state(1, h));
  if (outputs.y_c) EPCTX_RETURN_IF_ERROR(write_state(2, c));
  return Status::Ok();
}

std::vector<float> ProjectInputs(const RnnProblem& p, int64_t dir, int64_t r_bias_gates,
                                 int threads) {
  const int64_t rows = p.seq * p.batch;
  const int64_t cols = p.gates * p.hidden;
  std::vector<float> xw(static_cast<size_t>(rows * cols));
  if (rows == 0) return xw;
  const GemmOperand a{p.x, p.input, false};
  const GemmOperand b{p.w + dir * cols * p.input, p.input, true};
  ParallelGemmF32(rows, cols, p.input, 1.0f, a, b, xw.data(), cols, threads,
                  [](int64_t, int64_t, int64_t, int64_t) {});
  if (p.b == nullptr) return xw;
  const float* wb = p.b + dir * 2 * cols;
  const float* rb = wb + cols;
  std::vector<float> bias(wb, wb + cols);
  for (int64_t i = 0; i < r_bias_gates * p.hidden; ++i) bias[static_cast<size_t>(i)] += rb[i];
  for (int64_t r = 0; r < rows; ++r) {
    float* row = xw.data() + r * cols;
    for (int64_t i = 0; i < cols; ++i) row[i] += bias[static_cast<size_t>(i)];
  }
  return xw;
}

void RecurrentProduct(const float* h, const float* r, int64_t batch, int64_t rows, int64_t hidden,
                      float* out, int threads) {
  ParallelGemmF32(batch, rows, hidden, 1.0f, GemmOperand{h, hidden, false},
                  GemmOperand{r, hidden, true}, out, rows, threads,
                  [](int64_t, int64_t, int64_t, int64_t) {});
}

}  // namespace epctx::exec::kernels
