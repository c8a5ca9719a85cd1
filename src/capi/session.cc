// C sessions over epctx::Session: creation, input/output descriptions, origin, run.
#include <span>
#include <unordered_map>
#include <vector>

#include "capi/capi_types.h"

using epctx::Result;
using epctx::Status;
using epctx::StatusCode;
using epctx::capi::Guard;

namespace {

const epctx::SessionOptions& OptionsOrDefault(const epctx_session_options* options) {
  static const epctx::SessionOptions kDefaults;
  return options == nullptr ? kDefaults : options->options;
}

Status Adopt(epctx::Result<std::unique_ptr<epctx::Session>> created, epctx_session** out) {
  if (!created.ok()) return created.status();
  *out = new epctx_session{std::move(created).value(), {}};
  return Status::Ok();
}

// The inputs or outputs of `session`, or an error naming the function when `kind` is neither.
Status ValuesOf(const char* fn, const epctx_session* session, const epctx_io_kind& kind,
                const std::vector<epctx::ValueInfo>** values) {
  const int k = epctx::capi::FromC(kind);
  if (k != EPCTX_INPUT && k != EPCTX_OUTPUT) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(fn) + ": kind " + std::to_string(k) +
                      " is neither EPCTX_INPUT (0) nor EPCTX_OUTPUT (1)");
  }
  *values = k == EPCTX_INPUT ? &session->session->inputs() : &session->session->outputs();
  return Status::Ok();
}

// The value `index` of `kind`, or an error naming the function, the index and the count.
Status FindValue(const char* fn, const epctx_session* session, const epctx_io_kind& kind,
                 size_t index, const epctx::ValueInfo** info) {
  const std::vector<epctx::ValueInfo>* values = nullptr;
  Status found = ValuesOf(fn, session, kind, &values);
  if (!found.ok()) return found;
  if (index >= values->size()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(fn) + ": index " + std::to_string(index) +
                      " is out of range (the model has " + std::to_string(values->size()) + " " +
                      (kind == EPCTX_INPUT ? "inputs" : "outputs") + ")");
  }
  *info = &(*values)[index];
  return Status::Ok();
}

// The arguments both run functions take, checked: the feed by name, and the names of the
// outputs wanted (all the model's, in order, when `output_names` is NULL).
struct RunRequest {
  std::unordered_map<std::string, epctx::Tensor> feed;
  std::vector<std::string> wanted;
};

Result<RunRequest> RunArguments(const char* fn, const epctx_session* session,
                                const char* const* input_names, const epctx_tensor* const* inputs,
                                size_t input_count, const char* const* output_names,
                                size_t output_count, epctx_tensor** outputs) {
  EPCTX_C_REQUIRE(session);
  RunRequest request;
  std::unordered_map<std::string, epctx::Tensor>& feed = request.feed;
  std::vector<std::string>& wanted = request.wanted;
  if (input_count > 0) {
    EPCTX_C_REQUIRE(input_names);
    EPCTX_C_REQUIRE(inputs);
  }
  if (output_count > 0) EPCTX_C_REQUIRE(outputs);
  for (size_t i = 0; i < input_count; ++i) {
    EPCTX_C_REQUIRE(input_names[i]);
    EPCTX_C_REQUIRE(inputs[i]);
    if (!feed.emplace(input_names[i], inputs[i]->tensor).second) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": input '" + input_names[i] + "' is given twice");
    }
  }
  if (output_names == nullptr) {
    size_t all = session->session->outputs().size();
    if (output_count != all) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": output_names is NULL (all outputs), so output_count " +
                        "must be the model's " + std::to_string(all) + ", not " +
                        std::to_string(output_count));
    }
    for (const epctx::ValueInfo& v : session->session->outputs()) wanted.push_back(v.name);
  } else {
    for (size_t i = 0; i < output_count; ++i) {
      EPCTX_C_REQUIRE(output_names[i]);
      wanted.emplace_back(output_names[i]);
    }
  }
  if (output_count == 0) {
    return Status(StatusCode::kInvalidArgument, std::string(fn) + ": no outputs requested");
  }
  return request;
}

// epctx_session_run's work, within `run_options`.
Status RunToNewOutputs(const char* fn, epctx_session* session, const epctx::RunOptions& run_options,
                       const char* const* input_names, const epctx_tensor* const* inputs,
                       size_t input_count, const char* const* output_names, size_t output_count,
                       epctx_tensor** outputs) {
  Result<RunRequest> request = RunArguments(fn, session, input_names, inputs, input_count,
                                            output_names, output_count, outputs);
  if (!request.ok()) return request.status();
  auto& [feed, wanted] = *request;
  if (output_names == nullptr) wanted.clear();  // all, in model order
  auto result = session->session->Run(run_options, feed, wanted);
  if (!result.ok()) return result.status();
  // Everything is allocated before anything is handed out, so a failure leaks nothing.
  std::vector<std::unique_ptr<epctx_tensor>> made;
  made.reserve(result->size());
  for (epctx::Tensor& t : *result)
    made.push_back(std::unique_ptr<epctx_tensor>(new epctx_tensor{std::move(t)}));
  for (size_t i = 0; i < made.size(); ++i) outputs[i] = made[i].release();
  return Status::Ok();
}

// epctx_session_run_with_outputs's work, within `run_options`.
Status RunToBoundOutputs(const char* fn, epctx_session* session,
                         const epctx::RunOptions& run_options, const char* const* input_names,
                         const epctx_tensor* const* inputs, size_t input_count,
                         const char* const* output_names, size_t output_count,
                         epctx_tensor** outputs) {
  Result<RunRequest> request = RunArguments(fn, session, input_names, inputs, input_count,
                                            output_names, output_count, outputs);
  if (!request.ok()) return request.status();
  auto& [feed, wanted] = *request;
  std::unordered_map<std::string, epctx::Tensor> bound;
  for (size_t i = 0; i < wanted.size(); ++i) {
    epctx::Tensor t = outputs[i] != nullptr ? outputs[i]->tensor : epctx::Tensor();
    if (outputs[i] != nullptr && t.empty()) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": output '" + wanted[i] + "' is bound to an empty tensor");
    }
    if (!bound.emplace(wanted[i], std::move(t)).second) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": output '" + wanted[i] + "' is named twice");
    }
  }
  Status run = session->session->Run(run_options, feed, bound);
  if (!run.ok()) return run;
  // Everything is allocated before anything is handed out, so a failure leaks nothing.
  std::vector<std::unique_ptr<epctx_tensor>> made(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (outputs[i] == nullptr) {
      made[i] = std::unique_ptr<epctx_tensor>(new epctx_tensor{std::move(bound[wanted[i]])});
    }
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (made[i] != nullptr) outputs[i] = made[i].release();
  }
  return Status::Ok();
}

// The options of a run: the caller's (copies share the terminate flag), or the defaults.
epctx::RunOptions RunOptionsOrDefault(const epctx_run_options* run_options) {
  return run_options == nullptr ? epctx::RunOptions() : run_options->options;
}

}  // namespace

extern "C" {

epctx_status* epctx_session_create(const char* model_path, const epctx_session_options* options,
                                   epctx_session** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(model_path);
    EPCTX_C_REQUIRE(out);
    return Adopt(epctx::Session::Create(model_path, OptionsOrDefault(options)), out);
  });
}

epctx_status* epctx_session_create_from_memory(const void* model_data, size_t model_size,
                                               const epctx_session_options* options,
                                               epctx_session** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(model_data);
    EPCTX_C_REQUIRE(out);
    std::span<const std::byte> bytes(static_cast<const std::byte*>(model_data), model_size);
    return Adopt(epctx::Session::CreateFromMemory(bytes, OptionsOrDefault(options)), out);
  });
}

void epctx_session_release(epctx_session* session) {
  delete session;
}

epctx_status* epctx_session_get_io_count(const epctx_session* session, epctx_io_kind kind,
                                         size_t* count) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(count);
    const std::vector<epctx::ValueInfo>* values = nullptr;
    Status found = ValuesOf(fn, session, kind, &values);
    if (found.ok()) *count = values->size();
    return found;
  });
}

epctx_status* epctx_session_get_io_name(const epctx_session* session, epctx_io_kind kind,
                                        size_t index, const char** name) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(name);
    const epctx::ValueInfo* info = nullptr;
    Status found = FindValue(fn, session, kind, index, &info);
    if (found.ok()) *name = info->name.c_str();
    return found;
  });
}

epctx_status* epctx_session_get_io_type(const epctx_session* session, epctx_io_kind kind,
                                        size_t index, epctx_data_type* type) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(type);
    const epctx::ValueInfo* info = nullptr;
    Status found = FindValue(fn, session, kind, index, &info);
    if (found.ok()) *type = static_cast<epctx_data_type>(info->dtype);
    return found;
  });
}

epctx_status* epctx_session_get_io_kind(const epctx_session* session, epctx_io_kind kind,
                                        size_t index, epctx_value_kind* value_kind, int* optional) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(value_kind);
    EPCTX_C_REQUIRE(optional);
    const epctx::ValueInfo* info = nullptr;
    Status found = FindValue(fn, session, kind, index, &info);
    if (found.ok()) {
      *value_kind = static_cast<epctx_value_kind>(info->kind);
      *optional = info->optional ? 1 : 0;
    }
    return found;
  });
}

epctx_status* epctx_session_get_io_shape(const epctx_session* session, epctx_io_kind kind,
                                         size_t index, const int64_t** dims, size_t* rank) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(dims);
    EPCTX_C_REQUIRE(rank);
    const epctx::ValueInfo* info = nullptr;
    Status found = FindValue(fn, session, kind, index, &info);
    if (found.ok()) {
      *dims = info->shape.data();
      *rank = info->shape.size();
    }
    return found;
  });
}

epctx_status* epctx_session_get_io_dim_name(const epctx_session* session, epctx_io_kind kind,
                                            size_t index, size_t dim, const char** name) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(name);
    const epctx::ValueInfo* info = nullptr;
    Status found = FindValue(fn, session, kind, index, &info);
    if (!found.ok()) return found;
    if (dim >= info->shape.size()) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(fn) + ": dim " + std::to_string(dim) + " is out of range ('" +
                        info->name + "' has rank " + std::to_string(info->shape.size()) + ")");
    }
    static const std::string kNone;
    *name = dim < info->dim_names.size() ? info->dim_names[dim].c_str() : kNone.c_str();
    return Status::Ok();
  });
}

epctx_status* epctx_session_is_from_context_blob(const epctx_session* session, int* from_blob) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(from_blob);
    *from_blob = session->session->origin().from_context_blob ? 1 : 0;
    return Status::Ok();
  });
}

epctx_status* epctx_session_get_fallback_reason(const epctx_session* session, const char** reason) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(reason);
    *reason = session->session->origin().fallback_reason.c_str();
    return Status::Ok();
  });
}

epctx_status* epctx_session_run(epctx_session* session, const char* const* input_names,
                                const epctx_tensor* const* inputs, size_t input_count,
                                const char* const* output_names, size_t output_count,
                                epctx_tensor** outputs) {
  return Guard(__func__, [&](const char* fn) {
    return RunToNewOutputs(fn, session, epctx::RunOptions(), input_names, inputs, input_count,
                           output_names, output_count, outputs);
  });
}

epctx_status* epctx_session_run_with_options(epctx_session* session,
                                             const epctx_run_options* run_options,
                                             const char* const* input_names,
                                             const epctx_tensor* const* inputs, size_t input_count,
                                             const char* const* output_names, size_t output_count,
                                             epctx_tensor** outputs) {
  return Guard(__func__, [&](const char* fn) {
    return RunToNewOutputs(fn, session, RunOptionsOrDefault(run_options), input_names, inputs,
                           input_count, output_names, output_count, outputs);
  });
}

epctx_status* epctx_session_run_with_outputs(epctx_session* session, const char* const* input_names,
                                             const epctx_tensor* const* inputs, size_t input_count,
                                             const char* const* output_names, size_t output_count,
                                             epctx_tensor** outputs) {
  return Guard(__func__, [&](const char* fn) {
    return RunToBoundOutputs(fn, session, epctx::RunOptions(), input_names, inputs, input_count,
                             output_names, output_count, outputs);
  });
}

epctx_status* epctx_session_run_with_outputs_and_options(
    epctx_session* session, const epctx_run_options* run_options, const char* const* input_names,
    const epctx_tensor* const* inputs, size_t input_count, const char* const* output_names,
    size_t output_count, epctx_tensor** outputs) {
  return Guard(__func__, [&](const char* fn) {
    return RunToBoundOutputs(fn, session, RunOptionsOrDefault(run_options), input_names, inputs,
                             input_count, output_names, output_count, outputs);
  });
}

epctx_status* epctx_session_end_profiling(epctx_session* session, const char** path) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(session);
    EPCTX_C_REQUIRE(path);
    epctx::Result<std::string> written = session->session->EndProfiling();
    if (!written.ok()) return written.status();
    session->profile_path = std::move(written).value();
    *path = session->profile_path.c_str();
    return Status::Ok();
  });
}

}  // extern "C"
