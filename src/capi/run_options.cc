// C run options over epctx::RunOptions: the terminate flag another thread may set.
#include "capi/capi_types.h"

using epctx::Status;
using epctx::capi::Guard;

extern "C" {

epctx_status* epctx_run_options_create(epctx_run_options** out) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(out);
    *out = new epctx_run_options{};
    return Status::Ok();
  });
}

void epctx_run_options_release(epctx_run_options* options) {
  delete options;
}

epctx_status* epctx_run_options_set_terminate(epctx_run_options* options, int terminate) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(options);
    if (terminate != 0) {
      options->options.SetTerminate();
    } else {
      options->options.UnsetTerminate();
    }
    return Status::Ok();
  });
}

epctx_status* epctx_run_options_get_terminate(const epctx_run_options* options, int* terminate) {
  return Guard(__func__, [&](const char* fn) {
    EPCTX_C_REQUIRE(options);
    EPCTX_C_REQUIRE(terminate);
    *terminate = options->options.terminate() ? 1 : 0;
    return Status::Ok();
  });
}

}  // extern "C"
