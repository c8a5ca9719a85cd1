// Einsum on float32, float64, int32 and int64. Operands are first reduced to the subscripts
// still needed (diagonals taken, subscripts used nowhere else summed, broadcast dims expanded),
// then contracted pairwise left to right, each pair as a batched GEMM over
// [batch, m, k] x [batch, k, n]; a last transpose gives the output order.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/kernels/common/eigen.h"
#include "exec/kernels/common/parallel_for.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/common/threads.h"
#include "exec/kernels/families.h"
#include "exec/kernels/linalg/einsum_equation.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

template <typename T>
struct Term {
  std::vector<int> labels;     // one per dim
  std::vector<int64_t> shape;  // its own extents (1 where it broadcasts)
  const T* data = nullptr;
  std::vector<T> storage;  // when `data` was computed here
};

template <typename T>
class Einsum {
 public:
  Einsum(const std::map<int, int64_t>& sizes, int threads) : sizes_(sizes), threads_(threads) {}

  // out[out_labels] = sum over the other subscripts of `in` (all of out_labels are in `in`).
  // Fails when a product of extents overflows int64 (an empty operand's other dims may).
  Result<Term<T>> Reduce(const Term<T>& in, const std::vector<int>& out_labels) const {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
    std::map<int, int64_t> stride_of;
    for (size_t d = in.labels.size(); d-- > 0;) {
      const int label = in.labels[d];
      EPCTX_ASSIGN_OR_RETURN(const int64_t stride,
                             CheckedDimProduct(in.shape, d + 1, in.shape.size()));
      // A dim of 1 against a larger extent is broadcast: it does not move.
      if (in.shape[d] != 1 || sizes_.at(label) == 1)
        stride_of[label] += stride;
      else
        stride_of.emplace(label, 0);
    }
    std::vector<int64_t> out_dims, out_strides, red_dims, red_strides;
    for (int label : out_labels) {
      out_dims.push_back(sizes_.at(label));
      out_strides.push_back(stride_of.at(label));
    }
    for (const auto& [label, s] : stride_of) {
      if (Contains(out_labels, label)) continue;
      red_dims.push_back(sizes_.at(label));
      red_strides.push_back(s);
    }
    Term<T> out;
    out.labels = out_labels;
    out.shape = out_dims;
    EPCTX_ASSIGN_OR_RETURN(const int64_t count, CheckedDimProduct(out_dims));
    EPCTX_ASSIGN_OR_RETURN(const int64_t red_count, CheckedDimProduct(red_dims));
    int64_t work = 0;
    if (__builtin_mul_overflow(count, std::max<int64_t>(red_count, 1), &work)) {
      return EPCTX_ERROR(kInvalidArgument, "summing {} terms into {} overflows int64", red_count,
                         count);
    }
    out.storage.resize(static_cast<size_t>(count));
    T* dst = out.storage.data();
    const T* src = in.data;
    const size_t out_rank = out_dims.size(), red_rank = red_dims.size();
    const int nt = ThreadsFor(threads_, work);
    ParallelForRanges(nt, count, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> index(red_rank, 0);
      for (int64_t o = begin; o < end; ++o) {
        int64_t offset = 0;
        for (size_t d = out_rank, rest = static_cast<size_t>(o); d-- > 0;) {
          offset += static_cast<int64_t>(rest % static_cast<size_t>(out_dims[d])) * out_strides[d];
          rest /= static_cast<size_t>(out_dims[d]);
        }
        // An odometer over the summed subscripts; it ends back at all zeros.
        Acc acc = 0;
        for (int64_t r = 0; r < red_count; ++r) {
          acc += static_cast<Acc>(src[offset]);
          for (size_t d = red_rank; d-- > 0;) {
            offset += red_strides[d];
            if (++index[d] < red_dims[d]) break;
            offset -= index[d] * red_strides[d];
            index[d] = 0;
          }
        }
        dst[o] = static_cast<T>(acc);
      }
    });
    out.data = out.storage.data();
    return out;
  }

  // `in` as exactly `labels` (in that order and at full extent), reduced only when needed.
  Result<Term<T>> Arrange(Term<T> in, const std::vector<int>& labels) const {
    if (IsArranged(in, labels)) return in;
    return Reduce(in, labels);
  }

  bool IsArranged(const Term<T>& in, const std::vector<int>& labels) const {
    bool same = in.labels == labels;
    for (size_t d = 0; same && d < in.shape.size(); ++d) {
      same = in.shape[d] == sizes_.at(in.labels[d]);
    }
    return same;
  }

  // The product of two terms of distinct subscripts, keeping the subscripts in `keep`.
  Result<Term<T>> Contract(Term<T> a, Term<T> b, const std::vector<int>& keep) const {
    std::vector<int> batch, m, k, n;
    for (int l : a.labels) {
      if (Contains(b.labels, l)) {
        (Contains(keep, l) ? batch : k).push_back(l);
      } else if (Contains(keep, l)) {
        m.push_back(l);
      }
    }
    for (int l : b.labels) {
      if (!Contains(a.labels, l) && Contains(keep, l)) n.push_back(l);
    }
    auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
      x.insert(x.end(), y.begin(), y.end());
      x.insert(x.end(), z.begin(), z.end());
      return x;
    };
    // An operand whose two matrix groups are swapped is used transposed rather than copied.
    const bool a_transposed = IsArranged(a, concat(batch, k, m));
    const bool b_transposed = IsArranged(b, concat(batch, n, k));
    if (!a_transposed) {
      EPCTX_ASSIGN_OR_RETURN(a, Arrange(std::move(a), concat(batch, m, k)));
    }
    if (!b_transposed) {
      EPCTX_ASSIGN_OR_RETURN(b, Arrange(std::move(b), concat(batch, k, n)));
    }
    auto extents = [&](const std::vector<int>& labels) {
      std::vector<int64_t> e;
      for (int l : labels) e.push_back(sizes_.at(l));
      return e;
    };
    Term<T> c;
    c.labels = concat(batch, m, n);
    c.shape = extents(c.labels);
    EPCTX_ASSIGN_OR_RETURN(const int64_t nk, CheckedDimProduct(extents(k)));
    EPCTX_ASSIGN_OR_RETURN(const int64_t c_count, CheckedDimProduct(c.shape));
    // Every part of a product that does not overflow cannot either.
    const int64_t nb = CheckedDimProduct(extents(batch)).value();
    const int64_t nm = CheckedDimProduct(extents(m)).value();
    const int64_t nn = CheckedDimProduct(extents(n)).value();
    c.storage.assign(static_cast<size_t>(c_count), T{0});
    using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    if (nk > 0 && nm > 0 && nn > 0) {
      int64_t work = 0;
      if (__builtin_mul_overflow(c_count, nk, &work)) work = INT64_MAX;
      const int nt = ThreadsFor(threads_, work, int64_t{1} << 18);
      ParallelFor(nt, nb, [&](int64_t i, int) {
        Eigen::Map<Matrix> out(c.storage.data() + i * nm * nn, nm, nn);
        const T* ap = a.data + i * nm * nk;
        const T* bp = b.data + i * nk * nn;
        if (a_transposed && b_transposed) {
          out.noalias() = Eigen::Map<const Matrix>(ap, nk, nm).transpose() *
                          Eigen::Map<const Matrix>(bp, nn, nk).transpose();
        } else if (a_transposed) {
          out.noalias() = Eigen::Map<const Matrix>(ap, nk, nm).transpose() *
                          Eigen::Map<const Matrix>(bp, nk, nn);
        } else if (b_transposed) {
          out.noalias() = Eigen::Map<const Matrix>(ap, nm, nk) *
                          Eigen::Map<const Matrix>(bp, nn, nk).transpose();
        } else {
          out.noalias() =
              Eigen::Map<const Matrix>(ap, nm, nk) * Eigen::Map<const Matrix>(bp, nk, nn);
        }
      });
    }
    c.data = c.storage.data();
    return c;
  }

  // Runs the whole equation; the result has e.output's subscripts in order.
  Result<Term<T>> Run(const EinsumEquation& e, std::vector<Term<T>> terms) const {
    // Subscripts each term must keep: those of the output and of the other terms.
    auto needed_by_others = [&](size_t self, size_t from) {
      std::vector<int> labels = e.output;
      for (size_t j = from; j < terms.size(); ++j) {
        if (j == self) continue;
        for (int l : terms[j].labels) {
          if (!Contains(labels, l)) labels.push_back(l);
        }
      }
      return labels;
    };
    if (terms.size() == 1) return Arrange(std::move(terms[0]), e.output);
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::vector<int> needed = needed_by_others(i, 0);
      std::vector<int> distinct;
      for (int l : terms[i].labels) {
        if (Contains(needed, l) && !Contains(distinct, l)) distinct.push_back(l);
      }
      if (distinct != terms[i].labels) {
        EPCTX_ASSIGN_OR_RETURN(terms[i], Reduce(terms[i], distinct));
      }
    }
    Term<T> cur = std::move(terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      std::vector<int> keep = e.output;
      for (size_t j = i + 1; j < terms.size(); ++j) {
        for (int l : terms[j].labels) {
          if (!Contains(keep, l)) keep.push_back(l);
        }
      }
      EPCTX_ASSIGN_OR_RETURN(cur, Contract(std::move(cur), std::move(terms[i]), keep));
    }
    return Arrange(std::move(cur), e.output);
  }

 private:
  const std::map<int, int64_t>& sizes_;
  int threads_;
};

template <typename T>
Status RunEinsum(KernelContext& ctx, const EinsumEquation& e,
                 const std::vector<const Tensor*>& inputs) {
  std::vector<Term<T>> terms(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    terms[i].labels = e.inputs[i];
    terms[i].shape = inputs[i]->shape();
    terms[i].data = inputs[i]->data_as<T>();
  }
  std::vector<int64_t> out_shape;
  for (int l : e.output) out_shape.push_back(e.sizes.at(l));
  EPCTX_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, inputs[0]->dtype(), out_shape));
  if (y->element_count() == 0) return Status::Ok();
  const Einsum<T> einsum(e.sizes, ctx.num_threads());
  EPCTX_ASSIGN_OR_RETURN(const Term<T> result, einsum.Run(e, std::move(terms)));
  std::copy_n(result.data, y->element_count(), y->mutable_data_as<T>());
  return Status::Ok();
}

class EinsumKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto kernel = std::unique_ptr<EinsumKernel>(new EinsumKernel());
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* eq,
                           node.attrs->Require("equation", AttrType::kString));
    kernel->equation_ = std::string(eq->s);
    return std::unique_ptr<Kernel>(std::move(kernel));
  }

  Status Run(KernelContext& ctx) override {
    if (ctx.input_count() == 0) return EPCTX_ERROR(kInvalidArgument, "Einsum has no inputs");
    std::vector<const Tensor*> inputs;
    std::vector<std::vector<int64_t>> shapes;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, "Inputs"));
      if (t->dtype() != ctx.input(0)->dtype()) {
        return EPCTX_ERROR(kInvalidArgument, "input {} has type {}, input 0 has {}", i,
                           DataTypeName(t->dtype()), DataTypeName(ctx.input(0)->dtype()));
      }
      inputs.push_back(t);
      shapes.push_back(t->shape());
    }
    EPCTX_ASSIGN_OR_RETURN(EinsumEquation e, ParseEinsum(equation_, shapes));
    switch (inputs[0]->dtype()) {
      case DataType::kFloat32:
        return RunEinsum<float>(ctx, e, inputs);
      case DataType::kFloat64:
        return RunEinsum<double>(ctx, e, inputs);
      case DataType::kInt32:
        return RunEinsum<int32_t>(ctx, e, inputs);
      case DataType::kInt64:
        return RunEinsum<int64_t>(ctx, e, inputs);
      default:
        return EPCTX_ERROR(kUnsupported, "inputs of type {} are not supported",
                           DataTypeName(inputs[0]->dtype()));
    }
  }

 private:
  EinsumKernel() = default;
  std::string equation_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateEinsum(const NodeInfo& node) {
  return EinsumKernel::Create(node);
}

}  // namespace epctx::exec::kernels
