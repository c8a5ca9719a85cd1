// Comparing an output with its expected value the way ONNX's backend test runner does
// (numpy.testing.assert_allclose), except that integer and bool tensors must match exactly.
#pragma once

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::cli::conformance {

// ONNX's defaults for every test with a model.onnx (onnx/backend/test/loader/__init__.py).
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// numpy.isclose(actual, expected, rtol, atol, equal_nan=True): |actual - expected| <= atol + rtol *
// |expected|, NaN matches NaN, an infinity only the same infinity.
bool Close(double actual, double expected, const Tolerance& tolerance);

// OK when `actual` has the dtype and shape of `expected` and the same values: floating-point
// elements within |actual - expected| <= atol + rtol * |expected| (NaN matches NaN, an infinity
// only the same infinity), other types exactly. Otherwise kFailedPrecondition saying how they
// differ: how many elements, the first one, the largest difference.
Status CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance);

}  // namespace epctx::cli::conformance
