// C session options over epctx::SessionOptions; entries are checked as they are added.
#include "capi/capi_types.h"

using epctx::Status;
using epctx::capi::Guard;

extern "C" {

epctx_status* epctx_session_options_create(epctx_session_options** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    *out = new epctx_session_options();
    return Status::Ok();
  });
}

void epctx_session_options_release(epctx_session_options* options) {
  delete options;
}

epctx_status* epctx_session_options_add_config_entry(epctx_session_options* options,
                                                     const char* key, const char* value) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(options);
    EPCTX_C_REQUIRE(key);
    EPCTX_C_REQUIRE(value);
    Status valid = epctx::CheckConfigEntry(key, value);
    if (!valid.ok()) return valid;
    options->options.AddConfigEntry(key, value);
    return Status::Ok();
  });
}

epctx_status* epctx_session_options_get_config_entry(const epctx_session_options* options,
                                                     const char* key, const char** value) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(options);
    EPCTX_C_REQUIRE(key);
    EPCTX_C_REQUIRE(value);
    const auto& entries = options->options.config_entries();
    auto it = entries.find(key);
    *value = it == entries.end() ? nullptr : it->second.c_str();
    return Status::Ok();
  });
}

epctx_status* epctx_session_options_set_intra_op_num_threads(epctx_session_options* options,
                                                             int32_t num_threads) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(options);
    std::string value = std::to_string(num_threads);
    Status valid = epctx::CheckConfigEntry("session.intra_op_num_threads", value);
    if (!valid.ok()) return valid;
    options->options.AddConfigEntry("session.intra_op_num_threads", value);
    return Status::Ok();
  });
}

}  // extern "C"
