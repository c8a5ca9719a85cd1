// Compiles a model with the installed library, runs the context model on a saved input and
// compares with the saved output. Usage: consumer MODEL.onnx INPUT.npy EXPECTED.npy WORK_DIR
#include <epctx/epctx.h>
#include <epctx/tensor_io.h>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: consumer MODEL.onnx INPUT.npy EXPECTED.npy WORK_DIR\n");
    return 2;
  }
  std::string ctx = std::string(argv[4]) + "/model_ctx.onnx";
  auto compiled = epctx::ModelCompiler().CompileToFile(argv[1], ctx);
  if (!compiled.ok()) {
    std::fprintf(stderr, "compile: %s\n", compiled.status().ToString().c_str());
    return 1;
  }
  epctx::SessionOptions options;
  options.AddConfigEntry("epctx.fallback", "deny");
  auto session = epctx::Session::Create(ctx, options);
  auto input = epctx::ReadNpy(argv[2]);
  auto expected = epctx::ReadNpy(argv[3]);
  if (!session.ok() || !input.ok() || !expected.ok()) {
    std::fprintf(stderr, "load: %s %s %s\n", session.status().ToString().c_str(),
                 input.status().ToString().c_str(), expected.status().ToString().c_str());
    return 1;
  }
  auto outputs = (*session)->Run({{(*session)->inputs()[0].name, *input}});
  if (!outputs.ok()) {
    std::fprintf(stderr, "run: %s\n", outputs.status().ToString().c_str());
    return 1;
  }
  const epctx::Tensor& got = (*outputs)[0];
  if (got.element_count() != expected->element_count()) return 1;
  double max_ref = 0, max_diff = 0;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    max_ref = std::max(max_ref, std::fabs(double(expected->data_as<float>()[i])));
    max_diff = std::max(max_diff,
                        std::fabs(double(got.data_as<float>()[i] - expected->data_as<float>()[i])));
  }
  std::printf("cmake consumer: %lld outputs, max |diff| %g (max |ref| %g), from blob: %d\n",
              static_cast<long long>(got.element_count()), max_diff, max_ref,
              (*session)->origin().from_context_blob);
  return max_ref > 0 && max_diff <= 2e-4 * max_ref && (*session)->origin().from_context_blob ? 0
                                                                                             : 1;
}
