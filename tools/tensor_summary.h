// A few lines describing a tensor for a person: dtype, shape, min/max/mean and the first values.
#pragma once

#include <string>

#include "epctx/tensor.h"

namespace epctx::cli {

// "logits: float32 [1,1000]\n  min -3.21  max 12.5  mean 0.00123\n  values [0.1, ...]\n".
// NaNs are left out of min/max/mean and counted; integers print exactly. Strings show the first
// few, quoted and escaped; a sequence shows its element count and its first elements; an empty
// optional says so.
std::string SummarizeTensor(const std::string& name, const Tensor& tensor);

}  // namespace epctx::cli
