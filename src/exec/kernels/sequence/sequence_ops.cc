// The sequence ops: SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence and ConcatFromSequence. A sequence value is immutable and owns
// its elements (Tensor::Sequence); an op that changes one makes a new sequence sharing the
// untouched elements, and a tensor joining a sequence is copied out of the activation arena.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "exec/kernels/common/copy.h"
#include "exec/kernels/common/shape.h"
#include "exec/kernels/families.h"
#include "exec/kernels/tensor/concat.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

Result<const Tensor*> SequenceInput(const KernelContext& ctx, size_t index, std::string_view name) {
  EPCTX_ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, index, name));
  if (s->kind() != ValueKind::kSequence) {
    return EPCTX_ERROR(kInvalidArgument, "input {} ('{}') is not a sequence", index, name);
  }
  return s;
}

// A position input (int32 or int64 scalar, or one-element tensor) in [-count, count + extra).
Result<size_t> ReadPosition(const Tensor& t, size_t count, size_t extra) {
  EPCTX_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndexVector(t, "position"));
  if (v.size() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "position must be one integer, got shape {}",
                       ShapeToString(t.shape()));
  }
  const auto n = static_cast<int64_t>(count);
  const int64_t p = v[0];
  if (p < -n || p >= n + static_cast<int64_t>(extra)) {
    return EPCTX_ERROR(kInvalidArgument, "position {} is outside [{}, {}] for a sequence of {}", p,
                       -n, n + static_cast<int64_t>(extra) - 1, count);
  }
  return static_cast<size_t>(p < 0 ? p + n : p);
}

// The element type of a new sequence: the declared one, else that of `fallback`.
DataType DeclaredElementType(const NodeInfo& node, DataType fallback) {
  if (!node.outputs.empty() && node.outputs[0].dtype != DataType::kUndefined) {
    return node.outputs[0].dtype;
  }
  return fallback;
}

Status CheckElementType(const Tensor& seq, const Tensor& t) {
  if (!t.is_tensor()) return EPCTX_ERROR(kInvalidArgument, "a sequence element must be a tensor");
  if (seq.dtype() != DataType::kUndefined && t.dtype() != seq.dtype()) {
    return EPCTX_ERROR(kInvalidArgument, "tensor of {} cannot join a sequence of {}",
                       DataTypeName(t.dtype()), DataTypeName(seq.dtype()));
  }
  return Status::Ok();
}

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(DataType type) : type_(type) {}
  Status Run(KernelContext& ctx) override { return ctx.SetOutput(0, Tensor::Sequence(type_, {})); }

 private:
  DataType type_;
};

class SequenceConstructKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    std::vector<Tensor> elements;
    DataType type = DataType::kUndefined;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, "inputs"));
      if (!t->is_tensor() || (i > 0 && t->dtype() != type)) {
        return EPCTX_ERROR(kInvalidArgument,
                           "input {} is {}, input 0 is {}: a sequence holds "
                           "tensors of one type",
                           i, t->is_tensor() ? DataTypeName(t->dtype()) : "not a tensor",
                           DataTypeName(type));
      }
      type = t->dtype();
      EPCTX_ASSIGN_OR_RETURN(Tensor owned, t->Clone());
      elements.push_back(std::move(owned));
    }
    return ctx.SetOutput(0, Tensor::Sequence(type, std::move(elements)));
  }
};

class SequenceAtKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, "input_sequence"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* pos, RequiredInput(ctx, 1, "position"));
    EPCTX_ASSIGN_OR_RETURN(size_t at, ReadPosition(*pos, seq->elements().size(), 0));
    // Elements own their memory and are never written: the output is the element itself.
    return ctx.SetOutput(0, seq->elements()[at]);
  }
};

class SequenceInsertKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, "input_sequence"));
    EPCTX_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, 1, "tensor"));
    EPCTX_RETURN_IF_ERROR(CheckElementType(*seq, *t));
    std::vector<Tensor> elements = seq->elements();
    size_t at = elements.size();
    if (const Tensor* pos = ctx.input(2); pos != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(at, ReadPosition(*pos, elements.size(), 1));
    }
    EPCTX_ASSIGN_OR_RETURN(Tensor owned, t->Clone());
    elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), std::move(owned));
    return ctx.SetOutput(0, Tensor::Sequence(t->dtype(), std::move(elements)));
  }
};

class SequenceEraseKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, "input_sequence"));
    std::vector<Tensor> elements = seq->elements();
    if (elements.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "cannot erase from an empty sequence");
    }
    size_t at = elements.size() - 1;
    if (const Tensor* pos = ctx.input(1); pos != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(at, ReadPosition(*pos, elements.size(), 0));
    }
    elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
    return ctx.SetOutput(0, Tensor::Sequence(seq->dtype(), std::move(elements)));
  }
};

class SequenceLengthKernel final : public Kernel {
 public:
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, "input_sequence"));
    EPCTX_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DataType::kInt64, {}));
    *out->mutable_data_as<int64_t>() = static_cast<int64_t>(seq->elements().size());
    return Status::Ok();
  }
};

class SplitToSequenceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<SplitToSequenceKernel>(new SplitToSequenceKernel());
    EPCTX_ASSIGN_OR_RETURN(k->axis_, node.attrs->GetInt("axis", 0));
    EPCTX_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs->GetInt("keepdims", 1));
    k->keepdims_ = keepdims != 0;
    return std::unique_ptr<Kernel>(std::move(k));
  }
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0, "input"));
    if (in->dtype() != DataType::kString) {
      EPCTX_RETURN_IF_ERROR(CopyableElementSize(in->dtype(), "input").status());
    }
    const auto rank = static_cast<int64_t>(in->shape().size());
    EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank, "axis"));
    const int64_t dim = in->shape()[static_cast<size_t>(axis)];
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* split = ctx.input(1); split != nullptr) {
      EPCTX_ASSIGN_OR_RETURN(sizes, ReadIndexVector(*split, "split"));
      if (split->shape().empty()) {
        const int64_t each = sizes[0];
        if (each <= 0) return EPCTX_ERROR(kInvalidArgument, "split {} is not positive", each);
        sizes.clear();
        for (int64_t left = dim; left > 0; left -= each) sizes.push_back(std::min(each, left));
      } else {
        int64_t sum = 0;
        for (int64_t s : sizes) {
          if (s < 0) return EPCTX_ERROR(kInvalidArgument, "split holds {}", s);
          if (__builtin_add_overflow(sum, s, &sum)) {
            return EPCTX_ERROR(kInvalidArgument, "split's sizes add up beyond int64");
          }
        }
        if (sum != dim) {
          return EPCTX_ERROR(kInvalidArgument, "split sums to {}, axis {} has {}", sum, axis, dim);
        }
      }
    } else {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    }
    std::vector<Tensor> elements;
    int64_t begin = 0;
    for (int64_t size : sizes) {
      std::vector<int64_t> shape = in->shape();
      shape[static_cast<size_t>(axis)] = size;
      EPCTX_ASSIGN_OR_RETURN(Tensor part, Tensor::Allocate(in->dtype(), shape));
      EPCTX_RETURN_IF_ERROR(CopyAxisRange(*in, static_cast<size_t>(axis), begin, size, part));
      if (squeeze) {
        shape.erase(shape.begin() + axis);
        part = part.Reshaped(std::move(shape));
      }
      elements.push_back(std::move(part));
      begin += size;
    }
    return ctx.SetOutput(0, Tensor::Sequence(in->dtype(), std::move(elements)));
  }

 private:
  int64_t axis_ = 0;
  bool keepdims_ = true;
};

class ConcatFromSequenceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> Create(const NodeInfo& node) {
    EPCTX_ASSIGN_OR_RETURN(const AttributeValue* axis, node.attrs->Require("axis", AttrType::kInt));
    auto k = std::unique_ptr<ConcatFromSequenceKernel>(new ConcatFromSequenceKernel());
    k->axis_ = axis->i;
    EPCTX_ASSIGN_OR_RETURN(int64_t new_axis, node.attrs->GetInt("new_axis", 0));
    k->new_axis_ = new_axis != 0;
    return std::unique_ptr<Kernel>(std::move(k));
  }
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(const Tensor* seq, SequenceInput(ctx, 0, "input_sequence"));
    const std::vector<Tensor>& parts = seq->elements();
    if (parts.empty()) {
      return EPCTX_ERROR(kInvalidArgument, "cannot concatenate an empty sequence");
    }
    // new_axis: the elements stacked, i.e. each seen with a 1 inserted at the axis, concatenated.
    std::vector<Tensor> stacked;
    if (new_axis_) {
      const auto rank = static_cast<int64_t>(parts[0].shape().size());
      EPCTX_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank + 1, "axis"));
      for (const Tensor& p : parts) {
        std::vector<int64_t> shape = p.shape();
        if (static_cast<int64_t>(shape.size()) != rank) {
          return EPCTX_ERROR(kInvalidArgument, "element of shape {}, element 0 {}",
                             ShapeToString(p.shape()), ShapeToString(parts[0].shape()));
        }
        shape.insert(shape.begin() + axis, 1);
        stacked.push_back(p.Reshaped(std::move(shape)));
      }
    }
    const std::vector<Tensor>& joined = new_axis_ ? stacked : parts;
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : joined) inputs.push_back(&t);
    return ConcatToOutput(ctx, 0, inputs, axis_);
  }

 private:
  int64_t axis_ = 0;
  bool new_axis_ = false;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateSequenceEmpty(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(int64_t dtype,
                         node.attrs->GetInt("dtype", static_cast<int64_t>(DataType::kFloat32)));
  const auto type = static_cast<DataType>(dtype);
  if (type != DataType::kString && DataTypeSize(type) == 0) {
    return EPCTX_ERROR(kInvalidArgument, "dtype {} is not a tensor element type", dtype);
  }
  return std::unique_ptr<Kernel>(new SequenceEmptyKernel(DeclaredElementType(node, type)));
}
Result<std::unique_ptr<Kernel>> CreateSequenceConstruct(const NodeInfo& node) {
  if (node.inputs.empty()) {
    return EPCTX_ERROR(kInvalidArgument, "SequenceConstruct needs at least one input");
  }
  return std::unique_ptr<Kernel>(new SequenceConstructKernel());
}
Result<std::unique_ptr<Kernel>> CreateSequenceAt(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new SequenceAtKernel());
}
Result<std::unique_ptr<Kernel>> CreateSequenceInsert(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new SequenceInsertKernel());
}
Result<std::unique_ptr<Kernel>> CreateSequenceErase(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new SequenceEraseKernel());
}
Result<std::unique_ptr<Kernel>> CreateSequenceLength(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new SequenceLengthKernel());
}
Result<std::unique_ptr<Kernel>> CreateSplitToSequence(const NodeInfo& node) {
  return SplitToSequenceKernel::Create(node);
}
Result<std::unique_ptr<Kernel>> CreateConcatFromSequence(const NodeInfo& node) {
  return ConcatFromSequenceKernel::Create(node);
}

}  // namespace epctx::exec::kernels
