// Cast and CastLike to and from string tensors (the rest of Cast is cast.cc).
#pragma once

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::exec::kernels::elementwise {

// y (string, x's shape) = the text of every element of x (number_text.h for numbers; bool as
// "1" and "0", as ONNX Runtime writes them; strings copied).
Status CastToStrings(const Tensor& x, Tensor& y);

// y (a number or bool type, x's shape) = every string of x read as y's type; an element that is
// not a number of it is an error naming its position and text.
Status CastFromStrings(const Tensor& x, Tensor& y);

}  // namespace epctx::exec::kernels::elementwise
