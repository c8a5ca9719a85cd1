// com.epctx StringConstant: a string tensor constant of the model (an initializer or Constant node
// of strings), which the compiler turns into this node because the blob holds numeric weights
// only. Attributes: `value` (the strings, C order) and `shape`. Each run hands out a copy, so
// that no caller can change what the next run sees.
#include <memory>
#include <string>
#include <vector>

#include "exec/kernels/families.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::exec::kernels {
namespace {

class StringConstantKernel final : public Kernel {
 public:
  explicit StringConstantKernel(Tensor value) : value_(std::move(value)) {}
  Status Run(KernelContext& ctx) override {
    EPCTX_ASSIGN_OR_RETURN(Tensor copy, value_.Clone());
    return ctx.SetOutput(0, std::move(copy));
  }

 private:
  Tensor value_;
};

}  // namespace

Result<std::unique_ptr<Kernel>> CreateStringConstant(const NodeInfo& node) {
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* value,
                         node.attrs->Require("value", AttrType::kStrings));
  EPCTX_ASSIGN_OR_RETURN(const AttributeValue* shape,
                         node.attrs->Require("shape", AttrType::kInts));
  if (!node.inputs.empty() || node.outputs.size() != 1) {
    return EPCTX_ERROR(kInvalidArgument, "StringConstant takes no input and makes one output");
  }
  std::vector<int64_t> dims(shape->ints.begin(), shape->ints.end());
  // The count is checked before anything is allocated: the shape comes from the blob.
  auto count = CheckedElementCount(dims);
  if (!count.ok() || static_cast<uint64_t>(*count) != value->strings.size()) {
    return EPCTX_ERROR(kInvalidArgument, "{} strings for shape {}, which holds {}",
                       value->strings.size(), ShapeToString(dims),
                       count.ok() ? std::to_string(*count) : std::string("too many"));
  }
  EPCTX_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DataType::kString, dims));
  auto* out = tensor.mutable_data_as<std::string>();
  for (size_t i = 0; i < value->strings.size(); ++i) out[i] = value->strings[i];
  return std::unique_ptr<Kernel>(new StringConstantKernel(std::move(tensor)));
}

}  // namespace epctx::exec::kernels
