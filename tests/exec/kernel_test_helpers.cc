#include "kernel_test_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace epctx::exec::testing {

std::string_view AttrBuilder::Keep(const std::string& s) {
  strings_.push_back(s);
  return strings_.back();
}

AttrBuilder& AttrBuilder::Int(const std::string& name, int64_t v) {
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kInt;
  a.i = v;
  attrs_.Add(a);
  return *this;
}

AttrBuilder& AttrBuilder::Float(const std::string& name, float v) {
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kFloat;
  a.f = v;
  attrs_.Add(a);
  return *this;
}

AttrBuilder& AttrBuilder::String(const std::string& name, const std::string& v) {
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kString;
  a.s = Keep(v);
  attrs_.Add(a);
  return *this;
}

AttrBuilder& AttrBuilder::Ints(const std::string& name, std::vector<int64_t> v) {
  ints_.push_back(std::move(v));
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kInts;
  a.ints = ints_.back();
  attrs_.Add(a);
  return *this;
}

AttrBuilder& AttrBuilder::Floats(const std::string& name, std::vector<float> v) {
  floats_.push_back(std::move(v));
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kFloats;
  a.floats = floats_.back();
  attrs_.Add(a);
  return *this;
}

AttrBuilder& AttrBuilder::Strings(const std::string& name, const std::vector<std::string>& v) {
  AttributeValue a;
  a.name = Keep(name);
  a.type = AttrType::kStrings;
  for (const std::string& s : v) a.strings.push_back(Keep(s));
  attrs_.Add(a);
  return *this;
}

Result<std::vector<Tensor>> RunNode(const NodeSpec& spec, const AttrBuilder& attrs,
                                    const std::vector<const Tensor*>& inputs) {
  NodeInfo node;
  node.name = "n";
  node.op_type = spec.op_type;
  node.domain = spec.domain;
  node.opset = spec.opset;
  node.attrs = &attrs.attrs();
  for (const Tensor* t : inputs) {
    ValueDesc d;
    d.present = t != nullptr;
    if (t != nullptr && spec.describe_inputs) {
      d.kind = t->kind() == ValueKind::kNone ? t->none_of() : t->kind();
      d.optional = t->kind() == ValueKind::kNone;
      d.dtype = t->dtype();
      d.shape_known = t->is_tensor();
      if (t->is_tensor()) d.shape = t->shape();
    }
    node.inputs.push_back(d);
  }
  node.outputs.resize(spec.outputs);
  for (size_t i : spec.omitted_outputs) node.outputs.at(i).present = false;
  return RunNodeOnce(node, inputs, spec.threads);
}

Tensor MakeTensor(DataType type, std::vector<int64_t> shape, const void* data) {
  Result<Tensor> t = Tensor::Allocate(type, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (t->byte_size() > 0) std::memcpy(t->mutable_data(), data, t->byte_size());
  return std::move(t).value();
}

Tensor FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  return MakeTensor(DataType::kFloat32, std::move(shape), values.data());
}

Tensor Int64Tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  return MakeTensor(DataType::kInt64, std::move(shape), values.data());
}

Tensor Int32Tensor(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  return MakeTensor(DataType::kInt32, std::move(shape), values.data());
}

Tensor StringTensor(std::vector<int64_t> shape, const std::vector<std::string>& values) {
  EXPECT_EQ(Count(shape), static_cast<int64_t>(values.size()));
  Result<Tensor> t = Tensor::Allocate(DataType::kString, std::move(shape));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  std::copy(values.begin(), values.end(), t->mutable_data_as<std::string>());
  return std::move(t).value();
}

Tensor RandomFloats(std::vector<int64_t> shape, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(Count(shape)));
  for (float& x : v) x = dist(rng);
  return FloatTensor(std::move(shape), v);
}

std::vector<float> FloatsOf(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kFloat32);
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.element_count());
}

std::vector<int64_t> Int64sOf(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kInt64);
  const int64_t* p = t.data_as<int64_t>();
  return std::vector<int64_t>(p, p + t.element_count());
}

std::vector<std::string> StringsOf(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DataType::kString);
  const std::string* p = t.data_as<std::string>();
  return std::vector<std::string>(p, p + t.element_count());
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Result<Tensor> RunOne(const NodeSpec& spec, const AttrBuilder& attrs,
                      const std::vector<const Tensor*>& inputs) {
  auto r = RunNode(spec, attrs, inputs);
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

void ExpectNear(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const std::vector<float> x = FloatsOf(actual), y = FloatsOf(expected);
  double scale = 0, worst = 0;
  for (float v : y) scale = std::max(scale, std::fabs(double{v}));
  ASSERT_GT(scale, 0) << what << ": the reference is all zeros";
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::fabs(double{x[i]} - double{y[i]});
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  EXPECT_LE(worst, 1e-5 * scale) << what;
}

void ExpectClose(const Tensor& actual, const std::vector<int64_t>& shape,
                 const std::vector<double>& ref, double atol, double rtol,
                 const std::string& what) {
  ASSERT_EQ(actual.dtype(), DataType::kFloat32) << what;
  ASSERT_EQ(actual.shape(), shape) << what;
  ASSERT_EQ(actual.element_count(), static_cast<int64_t>(ref.size())) << what;
  bool any_nonzero = ref.empty();
  for (double r : ref) any_nonzero = any_nonzero || r != 0;
  EXPECT_TRUE(any_nonzero) << what << ": the reference is all zeros";
  const float* a = actual.data_as<float>();
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (static_cast<double>(a[i]) == ref[i]) continue;  // also equal infinities
    const double diff = std::fabs(static_cast<double>(a[i]) - ref[i]);
    if (!(diff <= atol + rtol * std::fabs(ref[i]))) {
      if (bad++ < 3) {
        ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", expected " << ref[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << ref.size() << " elements differ";
}

void ExpectError(const Status& status, StatusCode code, const std::string& text) {
  EXPECT_FALSE(status.ok()) << "expected an error containing '" << text << "'";
  EXPECT_EQ(status.code(), code) << status.ToString();
  EXPECT_NE(status.message().find(text), std::string::npos)
      << "message '" << status.message() << "' lacks '" << text << "'";
}

}  // namespace epctx::exec::testing
