// Shared fixtures of the kernel tests: hand-built attributes and nodes, random tensors, and
// comparison of a kernel's output against a reference computed in double.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "epctx/tensor.h"
#include "exec/attributes.h"
#include "exec/kernel.h"

namespace epctx::exec::testing {

// Attributes whose views point into storage this object owns (keep it alive while in use).
class AttrBuilder {
 public:
  AttrBuilder& Int(const std::string& name, int64_t v);
  AttrBuilder& Float(const std::string& name, float v);
  AttrBuilder& String(const std::string& name, const std::string& v);
  AttrBuilder& Ints(const std::string& name, std::vector<int64_t> v);
  AttrBuilder& Floats(const std::string& name, std::vector<float> v);
  AttrBuilder& Strings(const std::string& name, const std::vector<std::string>& v);
  const Attributes& attrs() const { return attrs_; }

 private:
  std::string_view Keep(const std::string& s);
  std::deque<std::string> strings_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<float>> floats_;
  Attributes attrs_;
};

// The domain of ONNX Runtime's contrib ops.
constexpr const char* kMs = "com.microsoft";

struct NodeSpec {
  explicit NodeSpec(std::string op, int64_t version = 17, std::string op_domain = "")
      : op_type(std::move(op)), opset(version), domain(std::move(op_domain)) {}
  std::string op_type;
  int64_t opset = 17;
  std::string domain;
  size_t outputs = 1;
  // Outputs the node leaves unnamed (omitted optional outputs), by index below `outputs`.
  std::vector<size_t> omitted_outputs;
  int threads = 1;
  // Describe inputs to the kernel at creation (dtype and shape known), as the compiler does.
  bool describe_inputs = true;
};

// Runs one node through the global registry; nullptr inputs are omitted optional inputs.
Result<std::vector<Tensor>> RunNode(const NodeSpec& spec, const AttrBuilder& attrs,
                                    const std::vector<const Tensor*>& inputs);

Tensor MakeTensor(DataType type, std::vector<int64_t> shape, const void* data);
Tensor FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values);
Tensor Int64Tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values);
// A string tensor (std::string elements).
Tensor StringTensor(std::vector<int64_t> shape, const std::vector<std::string>& values);
Tensor RandomFloats(std::vector<int64_t> shape, std::mt19937& rng, float lo = -1, float hi = 1);
std::vector<float> FloatsOf(const Tensor& t);
std::vector<int64_t> Int64sOf(const Tensor& t);
std::vector<std::string> StringsOf(const Tensor& t);
Tensor Int32Tensor(std::vector<int64_t> shape, const std::vector<int32_t>& values);
int64_t Count(const std::vector<int64_t>& shape);

// A tensor of `type` whose elements are `values` (as T); the count must match the shape.
template <typename T>
Tensor Typed(DataType type, std::vector<int64_t> shape, const std::vector<T>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  return MakeTensor(type, std::move(shape), values.data());
}

// The elements of `t` read as T.
template <typename T>
std::vector<T> ValuesOf(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.element_count());
}

// A uniform integer in [lo, hi].
int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi);

// Runs a one-output node and returns that output.
Result<Tensor> RunOne(const NodeSpec& spec, const AttrBuilder& attrs,
                      const std::vector<const Tensor*>& inputs);

// Every element within atol + rtol * |ref|; the shapes and counts must match, and the reference
// must not be all zeros (a fixture that computes nothing would pass vacuously).
void ExpectClose(const Tensor& actual, const std::vector<int64_t>& shape,
                 const std::vector<double>& ref, double atol, double rtol, const std::string& what);

// max |actual - expected| <= 1e-5 * max |expected| (float32 in another summation order), same
// shapes, the reference not all zeros.
void ExpectNear(const Tensor& actual, const Tensor& expected, const std::string& what);

// The status is an error of `code` whose message contains `text`.
void ExpectError(const Status& status, StatusCode code, const std::string& text);

}  // namespace epctx::exec::testing
