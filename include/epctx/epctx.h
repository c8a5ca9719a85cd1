// Umbrella header for the epctx C++ API.
#pragma once

#include "epctx/compiler.h"
#include "epctx/env.h"
#include "epctx/inspect.h"
#include "epctx/options.h"
#include "epctx/session.h"
#include "epctx/status.h"
#include "epctx/tensor.h"
