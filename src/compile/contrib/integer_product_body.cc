#include "compile/contrib/integer_product_body.h"

namespace epctx::compile::contrib {

void AddIntegerProduct(onnx::FunctionBuilder& b, const IntegerProduct& p) {
  std::string product = p.out + "_int = MatMulInteger(" + p.a + ", " + p.w;
  if (!p.a_zero.empty() || !p.w_zero.empty()) {
    std::string a_zero = p.a_zero;
    if (a_zero.empty()) {
      onnx::TensorProto zero;
      zero.set_data_type(p.a_type);
      zero.add_int32_data(0);
      a_zero = p.out + "_a_zero";
      b.Const(a_zero, zero);
    }
    product += ", " + a_zero;
  }
  if (!p.w_zero.empty()) product += ", " + p.w_zero;
  b.Add((product + ")").c_str());
  b.Add((p.out + "_f = Cast <to = 1> (" + p.out + "_int)").c_str());
  b.Add((p.out + "_scale = Mul(" + p.a_scale + ", " + p.w_scale + ")").c_str());
  const std::string scaled = p.bias.empty() ? p.out : p.out + "_unbiased";
  b.Add((scaled + " = Mul(" + p.out + "_f, " + p.out + "_scale)").c_str());
  if (!p.bias.empty()) b.Add((p.out + " = Add(" + scaled + ", " + p.bias + ")").c_str());
}

}  // namespace epctx::compile::contrib
