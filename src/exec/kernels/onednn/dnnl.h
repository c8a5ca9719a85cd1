// The one way kernels include oneDNN's C++ API (exceptions on, as its C++ API requires; every
// call is wrapped so that no exception leaves a kernel).
#pragma once

#include <dnnl.hpp>
