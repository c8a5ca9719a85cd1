// The .npy and TensorProto readers over bytes in memory (ReadNpy and ReadTensorProto in
// include/epctx/tensor_io.h read a file and call these), for the fuzz targets.
#pragma once

#include <string>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::loader {

// `name` is used in messages.
Result<Tensor> ParseNpy(std::string_view bytes, const std::string& name);
Result<Tensor> ParseTensorProto(std::string_view bytes, const std::string& name);

}  // namespace epctx::loader
