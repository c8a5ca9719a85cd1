// Reading and writing tensors as files: NumPy .npy and ONNX TensorProto .pb.
#pragma once

#include <string>
#include <string_view>

#include "epctx/status.h"
#include "epctx/tensor.h"

namespace epctx {

// NumPy format versions 1.0-3.0, little-endian or byte-order-free dtypes, C order
// (fortran_order True is rejected with a message saying so). Unicode arrays ('<U<n>', '>U<n>')
// and byte-string arrays ('|S<n>') become string tensors of UTF-8 (byte strings: the bytes as
// they are), trailing NULs dropped as NumPy drops them; object arrays ('|O', pickled) are refused.
Result<Tensor> ReadNpy(const std::string& path);
// Writes format 1.0, C order, atomically. A string tensor is written as '<U<n>', n the longest
// element in code points (at least 1); an element that is not UTF-8 is an error.
Status WriteNpy(const std::string& path, const Tensor& tensor);

// An ONNX TensorProto serialized to a file (the ONNX test data format: input_0.pb, ...).
// Raw data and typed fields are both accepted; external data is rejected.
Result<Tensor> ReadTensorProto(const std::string& path);

// ONNX's other value files, as its test data stores sequence and optional inputs and outputs: a
// SequenceProto (tensor elements only) becomes a sequence Tensor, an OptionalProto an empty
// optional (ValueKind::kNone) or the tensor or sequence it holds. `kind` says which proto the
// file holds (kTensor: a TensorProto; kNone: an OptionalProto).
Result<Tensor> ReadValueProto(const std::string& path, ValueKind kind);

// By extension: ".npy" or ".pb"; anything else is an error naming the accepted extensions.
Result<Tensor> ReadTensorFile(const std::string& path);

// A tensor name made safe as a file name: bytes [A-Za-z0-9._-] are kept, every other byte becomes
// %XX (upper-case hex); "." and ".." become "%2E" and "%2E%2E", and the empty name becomes "%"
// (which no other name produces). Distinct names give distinct file names.
std::string EscapeFileName(std::string_view name);

}  // namespace epctx
