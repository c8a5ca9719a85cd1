// BoundProgram::BindModel: a model's programs collected from a blob and bound, its weights
// resolved to views of the blob's bytes.
#include <vector>

#include "exec/executor.h"
#include "format/blob_reader.h"
#include "program_generated.h"

namespace epctx::exec {

Result<std::unique_ptr<BoundProgram>> BoundProgram::BindModel(const format::BlobView& blob,
                                                              const fb::Model& model,
                                                              int num_threads) {
  std::vector<const fb::Program*> programs;
  for (uint32_t i = 0; i < model.programs()->size(); ++i) {
    programs.push_back(blob.GetProgram(model, i));
  }
  // Called only while binding; the views carry no owner.
  WeightResolver weights = [&blob](uint32_t index) -> Result<Tensor> {
    const fb::Weight* w = blob.manifest().weights()->Get(index);
    std::vector<int64_t> shape;
    if (w->shape() != nullptr) shape.assign(w->shape()->begin(), w->shape()->end());
    return Tensor::View(static_cast<DataType>(w->dtype()), std::move(shape),
                        blob.WeightBytes(index).data(), nullptr);
  };
  return Bind(programs, 0, weights, num_threads);
}

}  // namespace epctx::exec
