/* The C API from C: compiles the two ResNet-18 heads into one shared blob, runs both through
 * sessions from a path and from memory against PyTorch's saved outputs, and checks that every
 * pointer argument and every error path returns the documented status instead of crashing.
 *
 * Usage: capi_test MODELS_DIR   (the folder tests/models/export_torchvision.py writes) */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "epctx/epctx_c.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++g_checks;                                                                \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      ++g_failures;                                                            \
    }                                                                          \
  } while (0)

/* Expects `expr` to succeed; prints the status message otherwise. */
#define CHECK_OK(expr) expect_ok((expr), #expr, __LINE__)
/* Expects an error with `code` whose message contains `text`. */
#define CHECK_ERROR(expr, code, text) expect_error((expr), (code), (text), #expr, __LINE__)

static int expect_ok(epctx_status* status, const char* what, int line) {
  ++g_checks;
  if (status == NULL) return 1;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, line, what,
          epctx_status_code_name(epctx_status_get_code(status)), epctx_status_message(status));
  epctx_status_release(status);
  ++g_failures;
  return 0;
}

static void expect_error(epctx_status* status, epctx_status_code code, const char* text,
                         const char* what, int line) {
  ++g_checks;
  if (status == NULL) {
    fprintf(stderr, "%s:%d: %s succeeded, expected %s\n", __FILE__, line, what,
            epctx_status_code_name(code));
    ++g_failures;
    return;
  }
  if (epctx_status_get_code(status) != code || strstr(epctx_status_message(status), text) == NULL) {
    fprintf(stderr, "%s:%d: %s: expected %s containing \"%s\", got %s: %s\n", __FILE__, line, what,
            epctx_status_code_name(code), text,
            epctx_status_code_name(epctx_status_get_code(status)), epctx_status_message(status));
    ++g_failures;
  }
  epctx_status_release(status);
}

/* ---- files ---- */

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc(n > 0 ? (size_t)n : 1);
  if (bytes != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

/* A little-endian float32, C-order .npy file (format 1.0, as numpy.save writes it). */
typedef struct {
  char* file;
  const float* values;
  size_t count;
} npy_f32;

static int read_npy_f32(const char* path, npy_f32* out) {
  size_t size = 0;
  out->file = read_file(path, &size);
  if (out->file == NULL || size < 10 || memcmp(out->file, "\x93NUMPY\x01", 7) != 0) return 0;
  size_t header = (unsigned char)out->file[8] | ((size_t)(unsigned char)out->file[9] << 8);
  if (10 + header > size) return 0;
  if (strstr(out->file + 10, "'descr': '<f4'") == NULL) return 0;
  if (strstr(out->file + 10, "'fortran_order': False") == NULL) return 0;
  out->values = (const float*)(out->file + 10 + header);
  out->count = (size - 10 - header) / sizeof(float);
  return 1;
}

static char g_models[4096];
static char g_dir[256];

static const char* model_file(const char* name) {
  static char path[8][4352];
  static int next = 0;
  char* p = path[next++ % 8];
  snprintf(p, 4352, "%s/%s", g_models, name);
  return p;
}

static const char* out_file(const char* name) {
  static char path[8][512];
  static int next = 0;
  char* p = path[next++ % 8];
  snprintf(p, 512, "%s/%s", g_dir, name);
  return p;
}

/* ---- checks ---- */

/* Every function, every required pointer NULL: an InvalidArgument naming the function and the
 * argument, never a crash. */
static void test_null_arguments(void) {
  epctx_session_options* options = NULL;
  epctx_tensor* tensor = NULL;
  const char* text = NULL;
  const int64_t* dims = NULL;
  size_t n = 0;
  int flag = 0;
  epctx_data_type type;
  int64_t shape[1] = {1};
  float value = 0;
  CHECK_ERROR(epctx_session_options_create(NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_session_options_create: argument 'out' is NULL");
  CHECK_OK(epctx_session_options_create(&options));
  CHECK_ERROR(epctx_session_options_add_config_entry(NULL, "k", "v"), EPCTX_INVALID_ARGUMENT,
              "argument 'options' is NULL");
  CHECK_ERROR(epctx_session_options_add_config_entry(options, NULL, "v"), EPCTX_INVALID_ARGUMENT,
              "argument 'key' is NULL");
  CHECK_ERROR(epctx_session_options_add_config_entry(options, "k", NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'value' is NULL");
  CHECK_ERROR(epctx_session_options_get_config_entry(NULL, "k", &text), EPCTX_INVALID_ARGUMENT,
              "argument 'options' is NULL");
  CHECK_ERROR(epctx_session_options_get_config_entry(options, NULL, &text), EPCTX_INVALID_ARGUMENT,
              "argument 'key' is NULL");
  CHECK_ERROR(epctx_session_options_get_config_entry(options, "k", NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'value' is NULL");
  CHECK_ERROR(epctx_session_options_set_intra_op_num_threads(NULL, 1), EPCTX_INVALID_ARGUMENT,
              "epctx_session_options_set_intra_op_num_threads: argument 'options' is NULL");

  epctx_session* session = NULL;
  CHECK_ERROR(epctx_session_create(NULL, options, &session), EPCTX_INVALID_ARGUMENT,
              "epctx_session_create: argument 'model_path' is NULL");
  CHECK_ERROR(epctx_session_create("m.onnx", options, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'out' is NULL");
  CHECK_ERROR(epctx_session_create_from_memory(NULL, 4, options, &session), EPCTX_INVALID_ARGUMENT,
              "argument 'model_data' is NULL");
  CHECK_ERROR(epctx_session_create_from_memory("abcd", 4, options, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'out' is NULL");
  CHECK(session == NULL, "a failed create wrote its out-pointer");

  CHECK_ERROR(epctx_session_get_io_count(NULL, EPCTX_INPUT, &n), EPCTX_INVALID_ARGUMENT,
              "epctx_session_get_io_count: argument 'session' is NULL");
  CHECK_ERROR(epctx_session_get_io_name(NULL, EPCTX_INPUT, 0, &text), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_get_io_type(NULL, EPCTX_INPUT, 0, &type), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_get_io_shape(NULL, EPCTX_INPUT, 0, &dims, &n), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_get_io_dim_name(NULL, EPCTX_INPUT, 0, 0, &text), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_is_from_context_blob(NULL, &flag), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_get_fallback_reason(NULL, &text), EPCTX_INVALID_ARGUMENT,
              "argument 'session' is NULL");
  CHECK_ERROR(epctx_session_run(NULL, NULL, NULL, 0, NULL, 0, NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_session_run: argument 'session' is NULL");
  CHECK_ERROR(epctx_session_run_with_outputs(NULL, NULL, NULL, 0, NULL, 0, NULL),
              EPCTX_INVALID_ARGUMENT, "epctx_session_run_with_outputs: argument 'session' is NULL");

  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 1, &value, sizeof value, NULL),
              EPCTX_INVALID_ARGUMENT, "epctx_tensor_create_view: argument 'out' is NULL");
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, NULL, 1, &value, sizeof value, &tensor),
              EPCTX_INVALID_ARGUMENT, "argument 'shape' is NULL");
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 1, NULL, sizeof value, &tensor),
              EPCTX_INVALID_ARGUMENT, "argument 'data' is NULL");
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 1, &value, sizeof value, &tensor));
  CHECK_ERROR(epctx_tensor_get_type(NULL, &type), EPCTX_INVALID_ARGUMENT,
              "argument 'tensor' is NULL");
  CHECK_ERROR(epctx_tensor_get_type(tensor, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'type' is NULL");
  CHECK_ERROR(epctx_tensor_get_shape(tensor, NULL, &n), EPCTX_INVALID_ARGUMENT,
              "argument 'dims' is NULL");
  CHECK_ERROR(epctx_tensor_get_shape(tensor, &dims, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'rank' is NULL");
  CHECK_ERROR(epctx_tensor_get_data(tensor, NULL, &n), EPCTX_INVALID_ARGUMENT,
              "argument 'data' is NULL");
  CHECK_ERROR(epctx_tensor_get_data(tensor, (const void**)&dims, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'data_size' is NULL");

  CHECK_ERROR(epctx_compile_model(NULL, "o.onnx", NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_compile_model: argument 'model_path' is NULL");
  CHECK_ERROR(epctx_compile_model("m.onnx", NULL, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'context_model_path' is NULL");
  CHECK_ERROR(epctx_compile_models(NULL, 1, "dir", NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'model_paths' is NULL");
  const char* one_null[1] = {NULL};
  CHECK_ERROR(epctx_compile_models(one_null, 1, "dir", NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'model_paths[i]' is NULL");
  CHECK_ERROR(epctx_compile_models(one_null, 1, NULL, NULL), EPCTX_INVALID_ARGUMENT,
              "argument 'output_dir' is NULL");

  /* NULL statuses and objects: success, "" and no-op releases. */
  CHECK(epctx_status_get_code(NULL) == EPCTX_OK, "NULL status is not OK");
  CHECK(strcmp(epctx_status_message(NULL), "") == 0, "NULL status has a message");
  epctx_status_release(NULL);
  epctx_session_release(NULL);
  epctx_session_options_release(NULL);
  epctx_tensor_release(NULL);
  epctx_tensor_release(tensor);
  epctx_session_options_release(options);
}

static void test_versions_and_codes(void) {
  CHECK(epctx_c_api_version() == EPCTX_C_API_VERSION, "library implements C API %u, header %d",
        (unsigned)epctx_c_api_version(), EPCTX_C_API_VERSION);
  CHECK(strlen(epctx_version()) > 0, "empty engine version");
  CHECK(strcmp(epctx_status_code_name(EPCTX_NOT_FOUND), "NotFound") == 0, "%s",
        epctx_status_code_name(EPCTX_NOT_FOUND));
  CHECK(strcmp(epctx_status_code_name((epctx_status_code)99), "Unknown") == 0, "%s",
        epctx_status_code_name((epctx_status_code)99));
  CHECK(strcmp(epctx_status_code_name(EPCTX_CANCELLED), "Cancelled") == 0, "%s",
        epctx_status_code_name(EPCTX_CANCELLED));
  CHECK_ERROR(epctx_set_log_level((epctx_log_level)7), EPCTX_INVALID_ARGUMENT,
              "log level 7 is not one of");
  CHECK_OK(epctx_set_log_level(EPCTX_LOG_ERROR)); /* the fallback test warns on purpose */
}

static void test_options(void) {
  epctx_session_options* options = NULL;
  const char* value = "unchanged";
  CHECK_OK(epctx_session_options_create(&options));
  CHECK_ERROR(epctx_session_options_add_config_entry(options, "ep.no_such_key", "1"),
              EPCTX_INVALID_ARGUMENT,
              "unknown option \"ep.no_such_key\" (known: ep.context_enable, ep.context_file_path");
  CHECK_ERROR(epctx_session_options_add_config_entry(options, "epctx.fallback", "maybe"),
              EPCTX_INVALID_ARGUMENT,
              "option epctx.fallback must be \"allow\" or \"deny\", got \"maybe\"");
  CHECK_ERROR(epctx_session_options_set_intra_op_num_threads(options, -1), EPCTX_INVALID_ARGUMENT,
              "session.intra_op_num_threads must be an integer from 0 to 1024, got \"-1\"");
  CHECK_OK(epctx_session_options_get_config_entry(options, "epctx.fallback", &value));
  CHECK(value == NULL, "a refused entry was stored: %s", value);
  CHECK_OK(epctx_session_options_set_intra_op_num_threads(options, 2));
  CHECK_OK(epctx_session_options_get_config_entry(options, "session.intra_op_num_threads", &value));
  CHECK(value != NULL && strcmp(value, "2") == 0, "threads entry is %s", value ? value : "NULL");
  epctx_session_options_release(options);
}

/* Runs `session` on the model's saved input and compares with PyTorch's saved output. */
static void run_and_compare(epctx_session* session, const char* stem, int by_name) {
  char name[256];
  npy_f32 input = {0}, reference = {0};
  snprintf(name, sizeof name, "%s.input.npy", stem);
  CHECK(read_npy_f32(model_file(name), &input), "cannot read %s", model_file(name));
  snprintf(name, sizeof name, "%s.output.npy", stem);
  CHECK(read_npy_f32(model_file(name), &reference), "cannot read %s", model_file(name));
  if (input.values == NULL || reference.values == NULL) {
    free(input.file);
    free(reference.file);
    return;
  }
  int64_t shape[4] = {1, 3, 224, 224};
  epctx_tensor* x = NULL;
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 4, input.values,
                                    input.count * sizeof(float), &x));
  const char* input_names[1] = {"input"};
  const epctx_tensor* inputs[1] = {x};
  const char* output_names[1] = {"output"};
  epctx_tensor* outputs[1] = {NULL};
  if (!CHECK_OK(epctx_session_run(session, input_names, inputs, 1, by_name ? output_names : NULL, 1,
                                  outputs))) {
    epctx_tensor_release(x);
    free(input.file);
    free(reference.file);
    return;
  }
  epctx_data_type type;
  const int64_t* dims = NULL;
  size_t rank = 0, size = 0;
  const void* data = NULL;
  CHECK_OK(epctx_tensor_get_type(outputs[0], &type));
  CHECK_OK(epctx_tensor_get_shape(outputs[0], &dims, &rank));
  CHECK_OK(epctx_tensor_get_data(outputs[0], &data, &size));
  CHECK(type == EPCTX_TYPE_FLOAT32, "%s: output type %d", stem, (int)type);
  CHECK(rank == 2 && dims[0] == 1 && (size_t)dims[1] == reference.count, "%s: output rank %zu",
        stem, rank);
  CHECK(size == reference.count * sizeof(float), "%s: %zu output bytes", stem, size);
  if (size == reference.count * sizeof(float)) {
    const float* out = data;
    double max_ref = 0, max_diff = 0;
    for (size_t i = 0; i < reference.count; ++i) {
      if (fabs(reference.values[i]) > max_ref) max_ref = fabs(reference.values[i]);
    }
    size_t mismatches = 0;
    for (size_t i = 0; i < reference.count; ++i) {
      double diff = fabs(out[i] - reference.values[i]);
      if (diff > max_diff) max_diff = diff;
      if (diff > 1e-4 * max_ref + 1e-4 * fabs(reference.values[i])) ++mismatches;
    }
    CHECK(max_ref > 0, "%s: the reference is all zeros", stem);
    CHECK(mismatches == 0, "%s: %zu of %zu outputs differ from PyTorch (max diff %g)", stem,
          mismatches, reference.count, max_diff);
  }
  epctx_tensor_release(outputs[0]);
  epctx_tensor_release(x);
  free(input.file);
  free(reference.file);
}

static void test_run_errors(epctx_session* session) {
  float small[4] = {0};
  int64_t wrong_shape[4] = {1, 1, 2, 2};
  epctx_tensor* x = NULL;
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, wrong_shape, 4, small, sizeof small, &x));
  const char* input_names[2] = {"input", "input"};
  const epctx_tensor* inputs[2] = {x, x};
  const char* bad_output[1] = {"nope"};
  epctx_tensor* outputs[2] = {NULL, NULL};
  CHECK_ERROR(epctx_session_run(session, input_names, inputs, 1, NULL, 1, outputs),
              EPCTX_INVALID_ARGUMENT,
              "input 'input' has shape [1,1,2,2], expected [1,3,224,224] (dims 1, 2 and 3 differ)");
  CHECK_ERROR(epctx_session_run(session, NULL, NULL, 0, NULL, 1, outputs), EPCTX_INVALID_ARGUMENT,
              "missing input 'input' (float32 [1,3,224,224])");
  CHECK_ERROR(epctx_session_run(session, input_names, inputs, 2, NULL, 1, outputs),
              EPCTX_INVALID_ARGUMENT, "epctx_session_run: input 'input' is given twice");
  CHECK_ERROR(epctx_session_run(session, input_names, inputs, 1, NULL, 2, outputs),
              EPCTX_INVALID_ARGUMENT, "output_count must be the model's 1, not 2");
  CHECK_ERROR(epctx_session_run(session, input_names, inputs, 1, NULL, 1, NULL),
              EPCTX_INVALID_ARGUMENT, "argument 'outputs' is NULL");
  CHECK_ERROR(epctx_session_run(session, NULL, inputs, 1, NULL, 1, outputs), EPCTX_INVALID_ARGUMENT,
              "argument 'input_names' is NULL");
  const epctx_tensor* null_input[1] = {NULL};
  CHECK_ERROR(epctx_session_run(session, input_names, null_input, 1, NULL, 1, outputs),
              EPCTX_INVALID_ARGUMENT, "argument 'inputs[i]' is NULL");
  /* Outputs are checked after the inputs: a well-formed input, an unknown output. */
  int64_t shape[4] = {1, 3, 224, 224};
  size_t count = 3 * 224 * 224;
  float* zeros = calloc(count, sizeof(float));
  epctx_tensor* good = NULL;
  CHECK_OK(
      epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 4, zeros, count * sizeof(float), &good));
  const epctx_tensor* good_inputs[1] = {good};
  CHECK_ERROR(epctx_session_run(session, input_names, good_inputs, 1, bad_output, 1, outputs),
              EPCTX_INVALID_ARGUMENT, "unknown output 'nope'; the model's outputs are: output");
  CHECK_ERROR(epctx_session_run(session, input_names, good_inputs, 1, bad_output, 0, outputs),
              EPCTX_INVALID_ARGUMENT, "epctx_session_run: no outputs requested");
  CHECK(outputs[0] == NULL && outputs[1] == NULL, "a failed run wrote outputs");
  epctx_tensor_release(good);
  free(zeros);
  epctx_tensor_release(x);

  const int64_t* dims = NULL;
  const char* text = NULL;
  size_t rank = 0;
  CHECK_ERROR(epctx_session_get_io_shape(session, EPCTX_OUTPUT, 1, &dims, &rank),
              EPCTX_INVALID_ARGUMENT,
              "epctx_session_get_io_shape: index 1 is out of range (the model has 1 outputs)");
  CHECK_ERROR(epctx_session_get_io_name(session, (epctx_io_kind)5, 0, &text),
              EPCTX_INVALID_ARGUMENT, "kind 5 is neither EPCTX_INPUT (0) nor EPCTX_OUTPUT (1)");
  CHECK_ERROR(
      epctx_session_get_io_count(session, (epctx_io_kind)-1, &rank), EPCTX_INVALID_ARGUMENT,
      "epctx_session_get_io_count: kind -1 is neither EPCTX_INPUT (0) nor EPCTX_OUTPUT (1)");
  CHECK_ERROR(epctx_session_get_io_dim_name(session, EPCTX_INPUT, 0, 4, &text),
              EPCTX_INVALID_ARGUMENT, "dim 4 is out of range ('input' has rank 4)");
}

/* epctx_session_run_with_outputs: an output written into the caller's buffer equals a normal
 * run's, bit for bit; a NULL entry receives an allocated output; bindings that cannot be are
 * refused, naming the output, and a failed run hands out nothing. */
static void test_run_with_outputs(epctx_session* session, const char* stem, size_t classes) {
  char name[256];
  npy_f32 input = {0};
  snprintf(name, sizeof name, "%s.input.npy", stem);
  CHECK(read_npy_f32(model_file(name), &input), "cannot read %s", model_file(name));
  if (input.values == NULL) {
    free(input.file);
    return;
  }
  int64_t shape[4] = {1, 3, 224, 224};
  epctx_tensor* x = NULL;
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 4, input.values,
                                    input.count * sizeof(float), &x));
  const char* input_names[1] = {"input"};
  const epctx_tensor* inputs[1] = {x};
  const char* output_names[2] = {"output", "output"};
  epctx_tensor* plain[1] = {NULL};
  CHECK_OK(epctx_session_run(session, input_names, inputs, 1, NULL, 1, plain));
  const float* expected = NULL;
  size_t expected_size = 0;
  if (plain[0] != NULL) {
    CHECK_OK(epctx_tensor_get_data(plain[0], (const void**)&expected, &expected_size));
  }

  float buffer[16];
  for (size_t i = 0; i < 16; ++i) buffer[i] = -99.0f;
  int64_t out_shape[2] = {1, (int64_t)classes};
  epctx_tensor* bound = NULL;
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, out_shape, 2, buffer,
                                    classes * sizeof(float), &bound));
  epctx_tensor* outputs[2] = {bound, NULL};
  CHECK_OK(
      epctx_session_run_with_outputs(session, input_names, inputs, 1, output_names, 1, outputs));
  CHECK(outputs[0] == bound, "a bound output was replaced");
  CHECK(expected != NULL && expected_size == classes * sizeof(float) &&
            memcmp(buffer, expected, expected_size) == 0,
        "%s: the bound output differs from epctx_session_run's", stem);
  CHECK(buffer[classes] == -99.0f, "the run wrote past the bound output");

  /* NULL: allocated, as epctx_session_run does; output_names NULL means all outputs. */
  outputs[0] = NULL;
  if (CHECK_OK(epctx_session_run_with_outputs(session, input_names, inputs, 1, NULL, 1, outputs)) &&
      outputs[0] != NULL) {
    const void* data = NULL;
    size_t size = 0;
    CHECK_OK(epctx_tensor_get_data(outputs[0], &data, &size));
    CHECK(expected != NULL && size == expected_size && memcmp(data, expected, size) == 0,
          "%s: the allocated output differs from epctx_session_run's", stem);
    epctx_tensor_release(outputs[0]);
  }

  int64_t wrong[2] = {1, 5};
  epctx_tensor* small = NULL;
  CHECK_OK(
      epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, wrong, 2, buffer, 5 * sizeof(float), &small));
  outputs[0] = small;
  CHECK_ERROR(
      epctx_session_run_with_outputs(session, input_names, inputs, 1, output_names, 1, outputs),
      EPCTX_INVALID_ARGUMENT, "output 'output' has shape [1,5], expected [1,");
  outputs[0] = NULL;
  outputs[1] = NULL;
  CHECK_ERROR(
      epctx_session_run_with_outputs(session, input_names, inputs, 1, output_names, 2, outputs),
      EPCTX_INVALID_ARGUMENT, "epctx_session_run_with_outputs: output 'output' is named twice");
  const char* unknown[1] = {"logits"};
  CHECK_ERROR(epctx_session_run_with_outputs(session, input_names, inputs, 1, unknown, 1, outputs),
              EPCTX_INVALID_ARGUMENT, "unknown output 'logits'; the model's outputs are: output");
  CHECK_ERROR(epctx_session_run_with_outputs(session, input_names, inputs, 1, NULL, 2, outputs),
              EPCTX_INVALID_ARGUMENT, "output_count must be the model's 1, not 2");
  CHECK_ERROR(epctx_session_run_with_outputs(session, input_names, inputs, 1, NULL, 1, NULL),
              EPCTX_INVALID_ARGUMENT, "argument 'outputs' is NULL");
  CHECK(outputs[0] == NULL && outputs[1] == NULL, "a failed run wrote outputs");

  epctx_tensor_release(small);
  epctx_tensor_release(bound);
  epctx_tensor_release(plain[0]);
  epctx_tensor_release(x);
  free(input.file);
}

static void test_tensor_errors(void) {
  float data[6] = {0};
  int64_t shape[2] = {2, 3};
  int64_t negative[2] = {2, -3};
  int64_t huge[2] = {INT64_MAX, 4};
  epctx_tensor* t = NULL;
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, shape, 2, data, 20, &t),
              EPCTX_INVALID_ARGUMENT, "data_size is 20 bytes, but shape [2,3] of float32 takes 24");
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, negative, 2, data, 24, &t),
              EPCTX_INVALID_ARGUMENT, "shape [2,?] has a negative dim or too many elements");
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, huge, 2, data, 24, &t),
              EPCTX_INVALID_ARGUMENT, "too many elements");
  CHECK_ERROR(epctx_tensor_create_view(EPCTX_TYPE_STRING, shape, 2, data, 24, &t),
              EPCTX_UNSUPPORTED, "element type string has no fixed size");
  CHECK(t == NULL, "a failed create_view wrote its out-pointer");
  /* A scalar: rank 0, shape may be NULL. */
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_FLOAT32, NULL, 0, data, sizeof(float), &t));
  size_t rank = 9;
  const int64_t* dims = NULL;
  CHECK_OK(epctx_tensor_get_shape(t, &dims, &rank));
  CHECK(rank == 0, "scalar rank %zu", rank);
  epctx_tensor_release(t);
}

static void test_session_description(epctx_session* session, size_t classes) {
  size_t n = 0, rank = 0;
  const char* text = NULL;
  const int64_t* dims = NULL;
  epctx_data_type type;
  int from_blob = 0;
  CHECK_OK(epctx_session_get_io_count(session, EPCTX_INPUT, &n));
  CHECK(n == 1, "%zu inputs", n);
  CHECK_OK(epctx_session_get_io_count(session, EPCTX_OUTPUT, &n));
  CHECK(n == 1, "%zu outputs", n);
  CHECK_OK(epctx_session_get_io_name(session, EPCTX_INPUT, 0, &text));
  CHECK(strcmp(text, "input") == 0, "input name %s", text);
  CHECK_OK(epctx_session_get_io_type(session, EPCTX_INPUT, 0, &type));
  CHECK(type == EPCTX_TYPE_FLOAT32, "input type %d", (int)type);
  CHECK_OK(epctx_session_get_io_shape(session, EPCTX_INPUT, 0, &dims, &rank));
  CHECK(rank == 4 && dims[0] == 1 && dims[1] == 3 && dims[2] == 224 && dims[3] == 224,
        "input rank %zu", rank);
  CHECK_OK(epctx_session_get_io_dim_name(session, EPCTX_INPUT, 0, 0, &text));
  CHECK(strcmp(text, "") == 0, "fixed dim has name %s", text);
  CHECK_OK(epctx_session_get_io_shape(session, EPCTX_OUTPUT, 0, &dims, &rank));
  CHECK(rank == 2 && dims[1] == (int64_t)classes, "output dims[1] %lld",
        rank == 2 ? (long long)dims[1] : -1LL);
  CHECK_OK(epctx_session_is_from_context_blob(session, &from_blob));
  CHECK(from_blob == 1, "session does not run from the blob");
  CHECK_OK(epctx_session_get_fallback_reason(session, &text));
  CHECK(strcmp(text, "") == 0, "fallback reason: %s", text);
}

static int file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Strings, sequences and optionals across the C API: string tensors made and read back byte for
 * byte (embedded NUL included), ONNX's SequenceInsert test model run on a sequence built in C
 * (element types checked), and an empty optional given to OptionalHasElement. */
static void test_value_kinds(void) {
  const char* words[3] = {"a", "b\0c", ""};
  size_t lengths[3] = {1, 3, 0};
  int64_t three = 3;
  epctx_tensor* text = NULL;
  if (CHECK_OK(epctx_tensor_create_strings(&three, 1, words, lengths, 3, &text))) {
    const char* s = NULL;
    size_t n = 0;
    CHECK_OK(epctx_tensor_get_string(text, 1, &s, &n));
    CHECK(n == 3 && memcmp(s, "b\0c", 3) == 0, "string 1 did not round-trip");
    CHECK_ERROR(epctx_tensor_get_string(text, 3, &s, &n), EPCTX_INVALID_ARGUMENT,
                "index 3 of 3 strings");
    const void* data = NULL;
    CHECK_ERROR(epctx_tensor_get_data(text, &data, &n), EPCTX_INVALID_ARGUMENT,
                "read its elements with epctx_tensor_get_string");
  }
  epctx_tensor_release(text);
  CHECK_ERROR(epctx_tensor_create_strings(&three, 1, words, lengths, 2, &text),
              EPCTX_INVALID_ARGUMENT, "2 strings for shape [3], which holds 3");

  const char* model =
      "/usr/share/libonnx-testdata/data/node/test_sequence_insert_at_front/model.onnx";
  epctx_session_options* options = NULL;
  epctx_session* session = NULL;
  CHECK_OK(epctx_session_options_create(&options));
  CHECK_OK(epctx_session_options_add_config_entry(options, "epctx.fallback", "deny"));
  if (CHECK_OK(epctx_compile_model(model, out_file("seq_ctx.onnx"), NULL)) &&
      CHECK_OK(epctx_session_create(out_file("seq_ctx.onnx"), options, &session))) {
    epctx_value_kind kind = EPCTX_VALUE_TENSOR;
    int optional = 1;
    CHECK_OK(epctx_session_get_io_kind(session, EPCTX_INPUT, 0, &kind, &optional));
    CHECK(kind == EPCTX_VALUE_SEQUENCE && optional == 0, "input 0 is kind %d optional %d",
          (int)kind, optional);
    /* int64: seq = [[1, 2]], tensor = [7, 8, 9], position = 0 -> [[7, 8, 9], [1, 2]] */
    int64_t pair[2] = {1, 2};
    int64_t seven[3] = {7, 8, 9};
    int64_t two = 2, three_elements = 3, one = 1, zero = 0;
    epctx_tensor* element = NULL;
    epctx_tensor* seq = NULL;
    epctx_tensor* inputs[3] = {NULL, NULL, NULL};
    epctx_tensor* output = NULL;
    CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_INT64, &two, 1, pair, sizeof pair, &element));
    CHECK_ERROR(epctx_tensor_create_sequence(EPCTX_TYPE_FLOAT32,
                                             (const epctx_tensor* const*)&element, 1, &seq),
                EPCTX_INVALID_ARGUMENT, "elements[0] is int64, the sequence holds float32");
    CHECK_OK(epctx_tensor_create_sequence(EPCTX_TYPE_INT64, (const epctx_tensor* const*)&element, 1,
                                          &inputs[0]));
    epctx_tensor_release(element); /* the sequence holds a copy */
    CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_INT64, &three_elements, 1, seven, sizeof seven,
                                      &inputs[1]));
    CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_INT64, &one, 1, &zero, sizeof zero, &inputs[2]));
    const char* names[3] = {"sequence", "tensor", "position"};
    if (CHECK_OK(epctx_session_run(session, names, (const epctx_tensor* const*)inputs, 3, NULL, 1,
                                   &output))) {
      size_t length = 0;
      CHECK_OK(epctx_tensor_get_kind(output, &kind));
      CHECK(kind == EPCTX_VALUE_SEQUENCE, "output kind %d", (int)kind);
      CHECK_OK(epctx_tensor_get_sequence_length(output, &length));
      CHECK(length == 2, "sequence of %zu, expected 2", length);
      epctx_tensor* first = NULL;
      if (CHECK_OK(epctx_tensor_get_sequence_element(output, 0, &first))) {
        const void* data = NULL;
        size_t size = 0;
        CHECK_OK(epctx_tensor_get_data(first, &data, &size));
        CHECK(size == sizeof seven && memcmp(data, seven, sizeof seven) == 0,
              "element 0 is not [7, 8, 9]");
      }
      epctx_tensor_release(first);
      CHECK_ERROR(epctx_tensor_get_sequence_element(output, 2, &first), EPCTX_INVALID_ARGUMENT,
                  "index 2 of a sequence of 2");
      const void* data = NULL;
      CHECK_ERROR(epctx_tensor_get_data(output, &data, &length), EPCTX_INVALID_ARGUMENT,
                  "the value is a sequence");
    }
    epctx_tensor_release(output);
    for (int i = 0; i < 3; ++i) epctx_tensor_release(inputs[i]);
  }
  epctx_session_release(session);
  session = NULL;

  model = "/usr/share/libonnx-testdata/data/node/test_optional_has_element_empty/model.onnx";
  if (CHECK_OK(epctx_compile_model(model, out_file("opt_ctx.onnx"), NULL)) &&
      CHECK_OK(epctx_session_create(out_file("opt_ctx.onnx"), options, &session))) {
    epctx_value_kind kind = EPCTX_VALUE_TENSOR;
    int optional = 0;
    CHECK_OK(epctx_session_get_io_kind(session, EPCTX_INPUT, 0, &kind, &optional));
    CHECK(optional == 1, "input 0 is not optional");
    epctx_tensor* none = NULL;
    epctx_tensor* output = NULL;
    epctx_data_type type = EPCTX_TYPE_UNDEFINED;
    CHECK_OK(epctx_session_get_io_type(session, EPCTX_INPUT, 0, &type));
    CHECK_OK(epctx_tensor_create_none(type, &none));
    const char* name = "optional_input";
    if (CHECK_OK(epctx_session_run(session, &name, (const epctx_tensor* const*)&none, 1, NULL, 1,
                                   &output))) {
      const void* data = NULL;
      size_t size = 0;
      CHECK_OK(epctx_tensor_get_data(output, &data, &size));
      CHECK(size == 1 && *(const unsigned char*)data == 0,
            "OptionalHasElement of none is not false");
    }
    epctx_tensor_release(output);
    epctx_tensor_release(none);
  }
  epctx_session_release(session);
  epctx_session_options_release(options);
  const char* written[4] = {"seq_ctx.onnx", "seq_ctx.epctx", "opt_ctx.onnx", "opt_ctx.epctx"};
  for (int i = 0; i < 4; ++i) unlink(out_file(written[i]));
}

/* Whether `output` holds the 12 bools of `x` negated (the Not model of the node test suite). */
static int is_negation(const epctx_tensor* output, const unsigned char* x) {
  const void* data = NULL;
  size_t size = 0;
  if (!CHECK_OK(epctx_tensor_get_data(output, &data, &size)) || size != 12) return 0;
  const unsigned char* y = (const unsigned char*)data;
  for (size_t i = 0; i < 12; ++i) {
    if (y[i] != (x[i] ^ 1)) return 0;
  }
  return 1;
}

/* A bool view whose bytes are not 0 or 1 (the caller's memory, read in place): the run refuses
 * it naming the element, where Not used to flip 2 to 3. A path cannot hold a NUL byte here: C
 * strings end at the first one. */
static void test_bool_views(void) {
  const char* model = "/usr/share/libonnx-testdata/data/node/test_not_2d/model.onnx";
  epctx_session* session = NULL;
  if (!CHECK_OK(epctx_compile_model(model, out_file("not_ctx.onnx"), NULL)) ||
      !CHECK_OK(epctx_session_create(out_file("not_ctx.onnx"), NULL, &session))) {
    return;
  }
  const int64_t shape[2] = {3, 4};
  unsigned char bools[12] = {0, 1, 1, 0, 1, 2, 0, 1, 0, 0, 1, 255};
  const char* name = "x";
  epctx_tensor* input = NULL;
  epctx_tensor* output = NULL;
  if (CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_BOOL, shape, 2, bools, sizeof bools, &input))) {
    CHECK_ERROR(
        epctx_session_run(session, &name, (const epctx_tensor* const*)&input, 1, NULL, 1, &output),
        EPCTX_INVALID_ARGUMENT, "input 'x': bool element 5 is 2, not 0 or 1");
    bools[5] = 1;
    bools[11] = 0;
    if (CHECK_OK(epctx_session_run(session, &name, (const epctx_tensor* const*)&input, 1, NULL, 1,
                                   &output))) {
      CHECK(is_negation(output, bools), "Not of the view is not its negation");
    }
  }
  epctx_tensor_release(output);
  epctx_tensor_release(input);
  epctx_session_release(session);
  unlink(out_file("not_ctx.onnx"));
  unlink(out_file("not_ctx.epctx"));
}

/* Run options (C API 4): a run with the terminate flag set stops before its first node with
 * EPCTX_CANCELLED, and runs again once it is cleared; epctx_session_end_profiling writes the file
 * epctx.profile_file names, once. */
static void test_run_options_and_profiling(void) {
  const char* model = "/usr/share/libonnx-testdata/data/node/test_not_2d/model.onnx";
  epctx_session_options* options = NULL;
  epctx_run_options* run_options = NULL;
  epctx_session* session = NULL;
  const char* path = "unchanged";
  int terminate = -1;
  CHECK_ERROR(epctx_run_options_create(NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_run_options_create: argument 'out' is NULL");
  CHECK_ERROR(epctx_run_options_set_terminate(NULL, 1), EPCTX_INVALID_ARGUMENT,
              "epctx_run_options_set_terminate: argument 'options' is NULL");
  CHECK_ERROR(epctx_session_end_profiling(NULL, &path), EPCTX_INVALID_ARGUMENT,
              "epctx_session_end_profiling: argument 'session' is NULL");
  epctx_run_options_release(NULL);
  if (!CHECK_OK(epctx_compile_model(model, out_file("not_ctx.onnx"), NULL)) ||
      !CHECK_OK(epctx_session_options_create(&options)) ||
      !CHECK_OK(epctx_session_options_add_config_entry(options, "epctx.profile_file",
                                                       out_file("not_profile.json"))) ||
      !CHECK_OK(epctx_session_create(out_file("not_ctx.onnx"), options, &session)) ||
      !CHECK_OK(epctx_run_options_create(&run_options))) {
    epctx_session_options_release(options);
    epctx_session_release(session);
    return;
  }
  CHECK_ERROR(epctx_run_options_get_terminate(run_options, NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_run_options_get_terminate: argument 'terminate' is NULL");
  CHECK_OK(epctx_run_options_get_terminate(run_options, &terminate));
  CHECK(terminate == 0, "a new run options' terminate flag is %d", terminate);
  const int64_t shape[2] = {3, 4};
  unsigned char bools[12] = {0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1};
  const char* name = "x";
  epctx_tensor* input = NULL;
  epctx_tensor* output = NULL;
  CHECK_OK(epctx_tensor_create_view(EPCTX_TYPE_BOOL, shape, 2, bools, sizeof bools, &input));
  const epctx_tensor* const* inputs = (const epctx_tensor* const*)&input;
  CHECK_OK(epctx_run_options_set_terminate(run_options, 7));
  CHECK_OK(epctx_run_options_get_terminate(run_options, &terminate));
  CHECK(terminate == 1, "terminate flag %d after setting it", terminate);
  CHECK_ERROR(
      epctx_session_run_with_options(session, run_options, &name, inputs, 1, NULL, 1, &output),
      EPCTX_CANCELLED,
      "the run was terminated (its RunOptions' terminate flag is set), before Not node");
  CHECK(output == NULL, "a stopped run handed out an output");
  CHECK_ERROR(epctx_session_run_with_outputs_and_options(session, run_options, &name, inputs, 1,
                                                         NULL, 1, &output),
              EPCTX_CANCELLED, "the run was terminated");
  CHECK_OK(epctx_run_options_set_terminate(run_options, 0));
  for (int bound = 0; bound < 2; ++bound) {
    epctx_status* ran =
        bound ? epctx_session_run_with_outputs_and_options(session, run_options, &name, inputs, 1,
                                                           NULL, 1, &output)
              : epctx_session_run_with_options(session, NULL, &name, inputs, 1, NULL, 1, &output);
    if (CHECK_OK(ran)) {
      CHECK(is_negation(output, bools),
            "Not run with options (bound outputs: %d) is not the negation", bound);
    }
    epctx_tensor_release(output);
    output = NULL;
  }
  CHECK_ERROR(epctx_session_end_profiling(session, NULL), EPCTX_INVALID_ARGUMENT,
              "epctx_session_end_profiling: argument 'path' is NULL");
  if (CHECK_OK(epctx_session_end_profiling(session, &path))) {
    CHECK(strcmp(path, out_file("not_profile.json")) == 0, "profile written to '%s'", path);
    size_t size = 0;
    char* profile = read_file(out_file("not_profile.json"), &size);
    CHECK(profile != NULL && size > 2 && profile[0] == '[' && strstr(profile, "\"Not\"") != NULL,
          "the profile is not a trace of the Not node");
    free(profile);
  }
  CHECK_OK(epctx_session_end_profiling(session, &path));
  CHECK(strcmp(path, "") == 0, "a second end_profiling returned '%s'", path);
  epctx_session_release(session);
  session = NULL;
  if (CHECK_OK(epctx_session_create(out_file("not_ctx.onnx"), NULL, &session)) &&
      CHECK_OK(epctx_session_end_profiling(session, &path))) {
    CHECK(strcmp(path, "") == 0, "an unprofiled session's end_profiling returned '%s'", path);
  }
  epctx_tensor_release(input);
  epctx_session_release(session);
  epctx_run_options_release(run_options);
  epctx_session_options_release(options);
  unlink(out_file("not_profile.json"));
  unlink(out_file("not_ctx.onnx"));
  unlink(out_file("not_ctx.epctx"));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
    return 2;
  }
  snprintf(g_models, sizeof g_models, "%s", argv[1]);
  snprintf(g_dir, sizeof g_dir, "/tmp/epctx_capi_XXXXXX");
  if (mkdtemp(g_dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }

  test_versions_and_codes();
  test_null_arguments();
  test_options();
  test_tensor_errors();
  test_value_kinds();
  test_bool_views();
  test_run_options_and_profiling();

  /* Two models with one trunk into one shared blob. */
  const char* models[2] = {model_file("resnet18_cls.onnx"), model_file("resnet18_reg.onnx")};
  CHECK(file_exists(models[0]) && file_exists(models[1]),
        "test models missing in %s (run tests/models/export_torchvision.py)", g_models);
  CHECK_OK(epctx_compile_models(models, 2, g_dir, NULL));
  CHECK(file_exists(out_file("resnet18_cls_ctx.onnx")), "no context model written");
  CHECK(file_exists(out_file("resnet18_cls_shared.epctx")), "no shared blob written");
  CHECK_ERROR(epctx_compile_model(model_file("no_such_model.onnx"), out_file("x_ctx.onnx"), NULL),
              EPCTX_NOT_FOUND, "no_such_model.onnx");
  const char* missing[2] = {models[0], model_file("no_such_model.onnx")};
  CHECK_ERROR(epctx_compile_models(missing, 2, g_dir, NULL), EPCTX_NOT_FOUND,
              "nothing was written: '");

  epctx_session_options* options = NULL;
  CHECK_OK(epctx_session_options_create(&options));
  CHECK_OK(epctx_session_options_add_config_entry(options, "epctx.fallback", "deny"));
  epctx_session* cls = NULL;
  epctx_session* reg = NULL;
  if (CHECK_OK(epctx_session_create(out_file("resnet18_cls_ctx.onnx"), options, &cls))) {
    test_session_description(cls, 10);
    run_and_compare(cls, "resnet18_cls", 0);
    run_and_compare(cls, "resnet18_cls", 1);
    test_run_errors(cls);
    test_run_with_outputs(cls, "resnet18_cls", 10);
  }

  /* From memory: the blob path resolves only with ep.context_file_path. */
  size_t size = 0;
  char* bytes = read_file(out_file("resnet18_reg_ctx.onnx"), &size);
  CHECK(bytes != NULL, "cannot read the context model back");
  CHECK_ERROR(epctx_session_create_from_memory(bytes, size, options, &reg), EPCTX_INVALID_ARGUMENT,
              "set ep.context_file_path so that the blob");
  CHECK_OK(epctx_session_options_add_config_entry(options, "ep.context_file_path",
                                                  out_file("resnet18_reg_ctx.onnx")));
  if (CHECK_OK(epctx_session_create_from_memory(bytes, size, options, &reg))) {
    test_session_description(reg, 4);
    run_and_compare(reg, "resnet18_reg", 0);
  }
  free(bytes);
  CHECK_ERROR(epctx_session_create(out_file("absent_ctx.onnx"), NULL, &cls), EPCTX_NOT_FOUND,
              "absent_ctx.onnx");

  epctx_session_release(cls);
  epctx_session_release(reg);
  epctx_session_options_release(options);
  unlink(out_file("resnet18_cls_ctx.onnx"));
  unlink(out_file("resnet18_reg_ctx.onnx"));
  unlink(out_file("resnet18_cls_shared.epctx"));
  if (rmdir(g_dir) != 0) perror("rmdir (files left behind)");

  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
