/* Runs a context model and its original model through the installed C API on the same input
 * and checks that they agree. Usage: consumer CONTEXT_MODEL.onnx ORIGINAL_MODEL.onnx */
#include <epctx/epctx_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(epctx_status* status, const char* what) {
  fprintf(stderr, "%s: %s: %s\n", what, epctx_status_code_name(epctx_status_get_code(status)),
          epctx_status_message(status));
  epctx_status_release(status);
  return 1;
}

/* Runs `path` on `x` (1x3x224x224) into a new output tensor. */
static int run(const char* path, const float* x, epctx_tensor** out, int* from_blob) {
  epctx_session* session = NULL;
  epctx_tensor* input = NULL;
  epctx_status* s = epctx_session_create(path, NULL, &session);
  if (s != NULL) return fail(s, "epctx_session_create");
  const int64_t shape[4] = {1, 3, 224, 224};
  s = epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 4, x, sizeof(float) * 3 * 224 * 224,
                               &input);
  if (s == NULL) s = epctx_session_is_from_context_blob(session, from_blob);
  const char* name = NULL;
  if (s == NULL) s = epctx_session_get_io_name(session, EPCTX_INPUT, 0, &name);
  const epctx_tensor* inputs[1] = {input};
  if (s == NULL) s = epctx_session_run(session, &name, inputs, 1, NULL, 1, out);
  epctx_tensor_release(input);
  epctx_session_release(session);
  return s == NULL ? 0 : fail(s, path);
}

int main(int argc, char** argv) {
  if (argc != 3 || epctx_c_api_version() != EPCTX_C_API_VERSION) {
    fprintf(stderr, "usage: consumer CONTEXT_MODEL.onnx ORIGINAL_MODEL.onnx (C API %u)\n",
            (unsigned)epctx_c_api_version());
    return 2;
  }
  size_t n = 3 * 224 * 224;
  float* x = malloc(n * sizeof(float));
  if (x == NULL) return 1;
  for (size_t i = 0; i < n; ++i) x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
  epctx_tensor *a = NULL, *b = NULL;
  int a_blob = 0, b_blob = 1;
  int failed = run(argv[1], x, &a, &a_blob) || run(argv[2], x, &b, &b_blob);
  free(x);
  if (failed) return 1;
  const void *pa = NULL, *pb = NULL;
  size_t sa = 0, sb = 0;
  epctx_tensor_get_data(a, &pa, &sa);
  epctx_tensor_get_data(b, &pb, &sb);
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; sa == sb && i < sa / sizeof(float); ++i) {
    double d = fabs(((const float*)pa)[i] - ((const float*)pb)[i]);
    max_diff = d > max_diff ? d : max_diff;
    double r = fabs(((const float*)pb)[i]);
    max_ref = r > max_ref ? r : max_ref;
  }
  printf("pkg-config consumer: %zu output bytes, max |diff| %g (max |ref| %g), blob %d/%d\n", sa,
         max_diff, max_ref, a_blob, b_blob);
  epctx_tensor_release(a);
  epctx_tensor_release(b);
  return sa == sb && sa > 0 && max_ref > 0 && max_diff <= 1e-5 * max_ref && a_blob == 1 &&
                 b_blob == 0
             ? 0
             : 1;
}
