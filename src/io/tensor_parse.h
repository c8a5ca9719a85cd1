// The .npy and TensorProto readers over bytes in memory (ReadNpy and ReadTensorProto in
// include/epctx/tensor_io.h read a file and call these; the fuzz target calls them directly), and
// the copy into an owned tensor both end with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx::io {

// `name` is used in messages.
Result<Tensor> ParseNpy(std::string_view bytes, const std::string& name);
Result<Tensor> ParseTensorProto(std::string_view bytes, const std::string& name);

// A tensor holding a copy of `bytes`, which must be exactly the data of `shape`; a bool byte
// other than 0 or 1 is refused. `where` starts the message of a failure.
Result<Tensor> TensorFromBytes(const std::string& where, DataType dtype, std::vector<int64_t> shape,
                               std::span<const std::byte> bytes);

}  // namespace epctx::io
