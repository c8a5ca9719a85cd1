/* The epctx C API: opaque handles and plain functions, enough to bind epctx from any language.
 *
 * Conventions:
 * - A fallible function returns `epctx_status*`: NULL on success, otherwise an error the caller
 *   owns and releases with epctx_status_release() (its code and message say what went wrong).
 * - Every pointer argument is checked; a NULL where one is required is an EPCTX_INVALID_ARGUMENT
 *   status, never a crash. Release functions accept NULL and do nothing.
 * - Objects the caller creates (`*_create`) or receives as outputs (epctx_session_run's tensors)
 *   are released with the matching `*_release`. Strings and arrays returned through `const`
 *   out-pointers belong to the object they came from and live as long as it does.
 * - The ABI is versioned: EPCTX_C_API_VERSION names the set of functions and their meaning this
 *   header declares; epctx_c_api_version() returns the one the loaded library implements.
 *   Functions are only added within a version; a changed or removed function raises it and the
 *   symbol version node the functions are exported under (EPCTX_C_<version>).
 * - On failure, out-pointers are left as they were.
 * - The library is thread-safe: sessions may be used from several threads (runs of one session
 *   are serialized); one options object must not be changed while another thread reads it.
 */
#ifndef EPCTX_EPCTX_C_H_
#define EPCTX_EPCTX_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: sequence, optional and string values; 3: epctx_session_run_with_outputs; 4: run options
 * (terminate) and epctx_session_end_profiling */
#define EPCTX_C_API_VERSION 4

#if defined(__GNUC__)
#define EPCTX_C_EXPORT __attribute__((visibility("default")))
#else
#define EPCTX_C_EXPORT
#endif

typedef struct epctx_status epctx_status;
typedef struct epctx_session_options epctx_session_options;
typedef struct epctx_session epctx_session;
typedef struct epctx_tensor epctx_tensor;
typedef struct epctx_run_options epctx_run_options;

/* The same values as the C++ epctx::StatusCode. */
typedef enum epctx_status_code {
  EPCTX_OK = 0,
  EPCTX_INVALID_ARGUMENT = 1,    /* the caller passed something unusable */
  EPCTX_NOT_FOUND = 2,           /* a file, model, input or output that does not exist */
  EPCTX_IO_ERROR = 3,            /* the operating system refused a read, write, map or stat */
  EPCTX_CORRUPT = 4,             /* a file's bytes fail verification */
  EPCTX_VERSION_MISMATCH = 5,    /* written by another format or engine version */
  EPCTX_TARGET_MISMATCH = 6,     /* packed for another CPU target or build of the kernels */
  EPCTX_STALE = 7,               /* the cache no longer matches its original model */
  EPCTX_UNSUPPORTED = 8,         /* an operator, attribute or type the engine lacks */
  EPCTX_FAILED_PRECONDITION = 9, /* a state the call cannot work in */
  EPCTX_INTERNAL = 10,           /* a bug in epctx, or out of memory */
  EPCTX_CANCELLED = 11           /* the run was stopped: its run options' terminate flag, or a
                                    limit (epctx.max_loop_iterations, epctx.max_value_bytes) */
} epctx_status_code;

/* Element types; the values are ONNX's TensorProto.DataType. */
typedef enum epctx_data_type {
  EPCTX_TYPE_UNDEFINED = 0,
  EPCTX_TYPE_FLOAT32 = 1,
  EPCTX_TYPE_UINT8 = 2,
  EPCTX_TYPE_INT8 = 3,
  EPCTX_TYPE_UINT16 = 4,
  EPCTX_TYPE_INT16 = 5,
  EPCTX_TYPE_INT32 = 6,
  EPCTX_TYPE_INT64 = 7,
  EPCTX_TYPE_STRING = 8, /* elements are byte strings: epctx_tensor_create_strings, _get_string */
  EPCTX_TYPE_BOOL = 9,
  EPCTX_TYPE_FLOAT16 = 10,
  EPCTX_TYPE_FLOAT64 = 11,
  EPCTX_TYPE_UINT32 = 12,
  EPCTX_TYPE_UINT64 = 13,
  EPCTX_TYPE_BFLOAT16 = 16
} epctx_data_type;

/* What a value (an epctx_tensor) holds: a tensor, a sequence of tensors of one element type
 * (ONNX's seq(tensor)), or nothing (an ONNX optional without a value). */
typedef enum epctx_value_kind {
  EPCTX_VALUE_TENSOR = 0,
  EPCTX_VALUE_SEQUENCE = 1,
  EPCTX_VALUE_NONE = 2
} epctx_value_kind;

/* Which side of a session a value is on. */
typedef enum epctx_io_kind { EPCTX_INPUT = 0, EPCTX_OUTPUT = 1 } epctx_io_kind;

typedef enum epctx_log_level {
  EPCTX_LOG_DEBUG = 0,
  EPCTX_LOG_INFO = 1,
  EPCTX_LOG_WARNING = 2, /* the default */
  EPCTX_LOG_ERROR = 3,
  EPCTX_LOG_OFF = 4
} epctx_log_level;

/* ---- Versions and process-wide settings ---- */

/* The EPCTX_C_API_VERSION the library implements; compare with the header's at start-up. */
EPCTX_C_EXPORT uint32_t epctx_c_api_version(void);
/* The engine's version, "0.1.0". */
EPCTX_C_EXPORT const char* epctx_version(void);
/* Messages go to stderr; an out-of-range level is an EPCTX_INVALID_ARGUMENT status. */
EPCTX_C_EXPORT epctx_status* epctx_set_log_level(epctx_log_level level);

/* ---- Status ---- */

/* EPCTX_OK for NULL (success). */
EPCTX_C_EXPORT epctx_status_code epctx_status_get_code(const epctx_status* status);
/* The engine's message (names the file and the field); "" for NULL. */
EPCTX_C_EXPORT const char* epctx_status_message(const epctx_status* status);
/* "InvalidArgument", "NotFound", ...; "Unknown" outside the enum. */
EPCTX_C_EXPORT const char* epctx_status_code_name(epctx_status_code code);
EPCTX_C_EXPORT void epctx_status_release(epctx_status* status);

/* ---- Session options: string key/value entries (README "Options") ---- */

EPCTX_C_EXPORT epctx_status* epctx_session_options_create(epctx_session_options** out);
EPCTX_C_EXPORT void epctx_session_options_release(epctx_session_options* options);
/* Checked when added: an unknown key is refused with the list of known keys, a bad value with
 * the accepted values. */
EPCTX_C_EXPORT epctx_status* epctx_session_options_add_config_entry(epctx_session_options* options,
                                                                    const char* key,
                                                                    const char* value);
/* `*value` is NULL when the key is not set; the string lives until the entry is set again or
 * the options are released. */
EPCTX_C_EXPORT epctx_status* epctx_session_options_get_config_entry(
    const epctx_session_options* options, const char* key, const char** value);
/* session.intra_op_num_threads: kernel threads, 0 = all cores. */
EPCTX_C_EXPORT epctx_status* epctx_session_options_set_intra_op_num_threads(
    epctx_session_options* options, int32_t num_threads);

/* ---- Sessions ---- */

/* `model_path` is a context model (NAME_ctx.onnx) or an original ONNX model. `options` may be
 * NULL (defaults); the session keeps no reference to it. */
EPCTX_C_EXPORT epctx_status* epctx_session_create(const char* model_path,
                                                  const epctx_session_options* options,
                                                  epctx_session** out);
/* Model bytes from memory, needed only during the call. For a context model whose blob is a
 * file, set ep.context_file_path to where the model would be on disk. */
EPCTX_C_EXPORT epctx_status* epctx_session_create_from_memory(const void* model_data,
                                                              size_t model_size,
                                                              const epctx_session_options* options,
                                                              epctx_session** out);
EPCTX_C_EXPORT void epctx_session_release(epctx_session* session);

EPCTX_C_EXPORT epctx_status* epctx_session_get_io_count(const epctx_session* session,
                                                        epctx_io_kind kind, size_t* count);
EPCTX_C_EXPORT epctx_status* epctx_session_get_io_name(const epctx_session* session,
                                                       epctx_io_kind kind, size_t index,
                                                       const char** name);
EPCTX_C_EXPORT epctx_status* epctx_session_get_io_type(const epctx_session* session,
                                                       epctx_io_kind kind, size_t index,
                                                       epctx_data_type* type);
/* `*dims` holds `*rank` dims; -1 is a dim the model leaves open. */
/* The declared kind (EPCTX_VALUE_TENSOR or EPCTX_VALUE_SEQUENCE; get_io_type then gives the
 * element type) and whether the value is an ONNX optional (`*optional` 1), which a run may be
 * given or return as EPCTX_VALUE_NONE. (C API version 2) */
EPCTX_C_EXPORT epctx_status* epctx_session_get_io_kind(const epctx_session* session,
                                                       epctx_io_kind kind, size_t index,
                                                       epctx_value_kind* value_kind, int* optional);
EPCTX_C_EXPORT epctx_status* epctx_session_get_io_shape(const epctx_session* session,
                                                        epctx_io_kind kind, size_t index,
                                                        const int64_t** dims, size_t* rank);
/* The symbolic name of an open dim ("batch"), "" when the model gives none. */
EPCTX_C_EXPORT epctx_status* epctx_session_get_io_dim_name(const epctx_session* session,
                                                           epctx_io_kind kind, size_t index,
                                                           size_t dim, const char** name);

/* `*from_blob` is 1 when the session runs from the context blob, 0 when it compiled the original
 * model (directly, or as a fallback: see epctx_session_get_fallback_reason). */
EPCTX_C_EXPORT epctx_status* epctx_session_is_from_context_blob(const epctx_session* session,
                                                                int* from_blob);
/* Why the blob was not used ("" when it was, or when the model was an original one). */
EPCTX_C_EXPORT epctx_status* epctx_session_get_fallback_reason(const epctx_session* session,
                                                               const char** reason);

/* Runs the model. Inputs are tensors over caller memory (epctx_tensor_create_view), read in
 * place; every model input must be given. `output_names` NULL means all outputs in model order,
 * and then `output_count` must equal the model's output count. On success `outputs[i]` receives
 * a new tensor the caller releases; on failure nothing is written to `outputs`. Calls on one
 * session from several threads are serialized. */
EPCTX_C_EXPORT epctx_status* epctx_session_run(epctx_session* session,
                                               const char* const* input_names,
                                               const epctx_tensor* const* inputs,
                                               size_t input_count, const char* const* output_names,
                                               size_t output_count, epctx_tensor** outputs);

/* Runs into outputs the caller binds, as ONNX Runtime's IOBinding (C API version 3):
 * `output_names` (NULL: all outputs in model order, with `output_count` the model's count)
 * names the outputs wanted, and `outputs[i]` is, for output i, either a tensor over caller
 * memory (epctx_tensor_create_view of writable memory, of the output's element type and exact
 * shape), which the run writes in place and which stays the caller's, or NULL: the run then
 * allocates the output and stores a new tensor in `outputs[i]` that the caller releases (on
 * failure nothing is stored). A bound tensor is checked against the declaration as inputs are,
 * and the node that makes the output must make exactly its shape, or the run fails naming the
 * output and both shapes; bound memory may be partly written by a failed run.
 * An output may be bound to an input's own memory (a decode loop's shared past/present KV
 * buffer: past_key and present_key one buffer of max_sequence_length rows), which
 * com.microsoft GroupQueryAttention then updates in place, writing only the new rows. In
 * general the node making a bound output writes into that memory only when no later node reads
 * the input it overlaps and, if the node reads it itself, its kernel writes that output over
 * that input by design; otherwise the output is computed apart and copied in after the last
 * node (docs/API.md, "Bound outputs"). Outputs bound to overlapping memory are refused. */
EPCTX_C_EXPORT epctx_status* epctx_session_run_with_outputs(
    epctx_session* session, const char* const* input_names, const epctx_tensor* const* inputs,
    size_t input_count, const char* const* output_names, size_t output_count,
    epctx_tensor** outputs);

/* ---- Run options (C API version 4) ---- */

/* Settings of runs, as ONNX Runtime's OrtRunOptions: a terminate flag. */
EPCTX_C_EXPORT epctx_status* epctx_run_options_create(epctx_run_options** out);
EPCTX_C_EXPORT void epctx_run_options_release(epctx_run_options* options);
/* Sets (`terminate` nonzero) or clears (0) the flag. Unlike other setters it may be called from
 * any thread while runs using the options are in flight: each stops at its next check (before
 * every node, and every Loop or Scan iteration) with EPCTX_CANCELLED, and runs started while it
 * is set stop at once. The options must not be released while a run uses them. */
EPCTX_C_EXPORT epctx_status* epctx_run_options_set_terminate(epctx_run_options* options,
                                                             int terminate);
EPCTX_C_EXPORT epctx_status* epctx_run_options_get_terminate(const epctx_run_options* options,
                                                             int* terminate);

/* epctx_session_run and epctx_session_run_with_outputs within `run_options` (NULL: the
 * defaults). */
EPCTX_C_EXPORT epctx_status* epctx_session_run_with_options(
    epctx_session* session, const epctx_run_options* run_options, const char* const* input_names,
    const epctx_tensor* const* inputs, size_t input_count, const char* const* output_names,
    size_t output_count, epctx_tensor** outputs);
EPCTX_C_EXPORT epctx_status* epctx_session_run_with_outputs_and_options(
    epctx_session* session, const epctx_run_options* run_options, const char* const* input_names,
    const epctx_tensor* const* inputs, size_t input_count, const char* const* output_names,
    size_t output_count, epctx_tensor** outputs);

/* With the option epctx.profile_file set: writes the profile (session creation, then every run
 * node by node, in ONNX Runtime's profiler format) and stops profiling. `*path` receives the
 * file's path, or "" when the session is not profiled or its profile was already written; the
 * string belongs to the session and lives until its next end_profiling call or its release. */
EPCTX_C_EXPORT epctx_status* epctx_session_end_profiling(epctx_session* session, const char** path);

/* ---- Tensors ---- */

/* A tensor over `data`, which is not copied: it must stay valid and unchanged until the tensor
 * is released (except by runs it is bound to as an output: epctx_session_run_with_outputs).
 * `data_size` must equal the element count times the element size; `shape` may be NULL only when
 * `rank` is 0 (a scalar), `data` only when `data_size` is 0. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_create_view(epctx_data_type type, const int64_t* shape,
                                                      size_t rank, const void* data,
                                                      size_t data_size, epctx_tensor** out);
EPCTX_C_EXPORT void epctx_tensor_release(epctx_tensor* tensor);
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_type(const epctx_tensor* tensor,
                                                   epctx_data_type* type);
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_shape(const epctx_tensor* tensor,
                                                    const int64_t** dims, size_t* rank);
/* The elements, C order; `*data_size` in bytes. An output tensor's memory is its own (the
 * engine's), valid until the tensor is released. Fails for string tensors (epctx_tensor_get_string)
 * and for sequences and empty optionals. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_data(const epctx_tensor* tensor, const void** data,
                                                   size_t* data_size);

/* Sequences, optionals and strings (C API version 2). A value of another kind than a tensor
 * reports its element type through epctx_tensor_get_type and an empty shape. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_kind(const epctx_tensor* tensor,
                                                   epctx_value_kind* kind);
/* A string tensor holding copies of `count` strings (`lengths[i]` bytes each, any bytes; `count`
 * must be the shape's element count). */
EPCTX_C_EXPORT epctx_status* epctx_tensor_create_strings(const int64_t* shape, size_t rank,
                                                         const char* const* strings,
                                                         const size_t* lengths, size_t count,
                                                         epctx_tensor** out);
/* String element `index` (C order) of a string tensor: `*length` bytes at `*data`, not
 * NUL-terminated, valid until the tensor is released. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_string(const epctx_tensor* tensor, size_t index,
                                                     const char** data, size_t* length);
/* A sequence of copies of `count` tensors, each of `element_type` (`elements` may be NULL when
 * `count` is 0); the elements may be released afterwards. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_create_sequence(epctx_data_type element_type,
                                                          const epctx_tensor* const* elements,
                                                          size_t count, epctx_tensor** out);
/* An optional without a value, for an optional input of that element type. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_create_none(epctx_data_type element_type,
                                                      epctx_tensor** out);
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_sequence_length(const epctx_tensor* tensor,
                                                              size_t* length);
/* Element `index` of a sequence as a new tensor (sharing the sequence's memory) the caller
 * releases. */
EPCTX_C_EXPORT epctx_status* epctx_tensor_get_sequence_element(const epctx_tensor* tensor,
                                                               size_t index, epctx_tensor** out);

/* ---- Compiling original models into context models and blobs ---- */

/* Writes `context_model_path` and its blob beside it ("<stem>.epctx"), or with
 * ep.share_ep_contexts joins the process's shared blob (see the README). `options` may be NULL. */
EPCTX_C_EXPORT epctx_status* epctx_compile_model(const char* model_path,
                                                 const char* context_model_path,
                                                 const epctx_session_options* options);
/* Several models into `output_dir`: one NAME_ctx.onnx each and one shared blob with identical
 * weights stored once; all or nothing (the status names every model that failed). */
EPCTX_C_EXPORT epctx_status* epctx_compile_models(const char* const* model_paths,
                                                  size_t model_count, const char* output_dir,
                                                  const epctx_session_options* options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EPCTX_EPCTX_C_H_ */
