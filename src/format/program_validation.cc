#include "format/program_validation.h"

#include <cstdint>

#include "epctx/tensor.h"
#include "format/blob_layout.h"
#include "format/program_dataflow.h"
#include "program_generated.h"
#include "util/overflow.h"
#include "util/status_macros.h"

namespace epctx::format {
namespace {

// The FlatBuffers Verifier checks that a vector's length field is 4-byte aligned, not that 8-byte
// elements are 8-byte aligned; reading a misaligned [long] would be undefined behaviour. (Empty
// vectors are exempt: FlatBufferBuilder does not align them, and nothing is read from them.)
template <typename T>
bool ElementsAligned(const flatbuffers::Vector<T>* v) {
  return v == nullptr || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

bool KnownFixedSizeType(int32_t dtype) {
  return DataTypeSize(static_cast<DataType>(dtype)) != 0;
}

Status CheckIndexList(const flatbuffers::Vector<int32_t>* list, uint32_t value_count,
                      bool allow_absent, const char* what) {
  if (list == nullptr) return Status::Ok();
  for (int32_t v : *list) {
    if (v == -1 && allow_absent) continue;
    if (v < 0 || static_cast<uint32_t>(v) >= value_count) {
      return EPCTX_ERROR(kCorrupt, "{} refers to value {} of {}", what, v, value_count);
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateWeights(const fb::Manifest& manifest, uint64_t weights_section_size) {
  if (manifest.weights() == nullptr) return Status::Ok();
  if (manifest.weights()->size() > kMaxWeights) {
    return EPCTX_ERROR(kCorrupt, "{} weights exceed the limit {}", manifest.weights()->size(),
                       kMaxWeights);
  }
  uint32_t index = 0;
  for (const fb::Weight* w : *manifest.weights()) {
    if (!RangeInside(w->offset(), w->size(), weights_section_size)) {
      return EPCTX_ERROR(kCorrupt,
                         "weight {} ({} bytes at {}) lies outside the WEIGHTS section "
                         "({} bytes)",
                         index, w->size(), w->offset(), weights_section_size);
    }
    if (w->offset() % kTensorAlignment != 0) {
      return EPCTX_ERROR(kCorrupt, "weight {} at offset {} is not {}-byte aligned", index,
                         w->offset(), kTensorAlignment);
    }
    if (!KnownFixedSizeType(w->dtype())) {
      return EPCTX_ERROR(kCorrupt, "weight {} has unknown data type {}", index, w->dtype());
    }
    const auto* shape = w->shape();
    uint32_t rank = shape ? shape->size() : 0;
    if (rank > kMaxRank) {
      return EPCTX_ERROR(kCorrupt, "weight {} has rank {} above the limit {}", index, rank,
                         kMaxRank);
    }
    if (!ElementsAligned(shape)) {
      return EPCTX_ERROR(kCorrupt, "weight {} has a misaligned shape", index);
    }
    std::span<const int64_t> dims(shape ? shape->data() : nullptr, rank);
    auto count = CheckedElementCount(dims);
    uint64_t bytes = 0;
    if (!count.ok() ||
        !CheckedMul(static_cast<uint64_t>(*count), DataTypeSize(static_cast<DataType>(w->dtype())),
                    &bytes) ||
        bytes != w->size()) {
      return EPCTX_ERROR(kCorrupt, "weight {} size {} does not match its shape and type", index,
                         w->size());
    }
    ++index;
  }
  return Status::Ok();
}

namespace {

// A value that stands for a weight must describe it: same type, and the same shape when the
// value has one (kernels size their work from the value and read the weight's bytes).
Status CheckValueMatchesWeight(const fb::Value& v, const fb::Weight& w) {
  if (v.dtype() != w.dtype()) {
    return EPCTX_ERROR(kCorrupt, "value '{}' has type {} but its weight {}",
                       v.name()->string_view(), DataTypeName(static_cast<DataType>(v.dtype())),
                       DataTypeName(static_cast<DataType>(w.dtype())));
  }
  if (v.shape() == nullptr) return Status::Ok();
  std::vector<int64_t> value_shape(v.shape()->begin(), v.shape()->end());
  std::vector<int64_t> weight_shape;
  if (w.shape() != nullptr) weight_shape.assign(w.shape()->begin(), w.shape()->end());
  if (value_shape != weight_shape) {
    return EPCTX_ERROR(kCorrupt, "value '{}' has shape {} but its weight {}",
                       v.name()->string_view(), ShapeToString(value_shape),
                       ShapeToString(weight_shape));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateProgram(const fb::Program& program, const fb::Manifest& manifest,
                       uint32_t program_index, uint32_t program_count) {
  const uint32_t weight_count = manifest.weights() ? manifest.weights()->size() : 0;
  const auto* values = program.values();
  uint32_t value_count = values ? values->size() : 0;
  if (value_count > kMaxValuesPerProgram) {
    return EPCTX_ERROR(kCorrupt, "{} values exceed the limit {}", value_count,
                       kMaxValuesPerProgram);
  }
  int64_t arena = program.arena_bytes();
  if (arena < 0) return EPCTX_ERROR(kCorrupt, "negative arena size {}", arena);
  if (arena > kMaxArenaBytes) {
    return EPCTX_ERROR(kCorrupt, "arena size {} above the limit {}", arena, kMaxArenaBytes);
  }
  for (uint32_t i = 0; i < value_count; ++i) {
    const fb::Value* v = values->Get(i);
    if (v->name()->size() > kMaxNameLength) {
      return EPCTX_ERROR(kCorrupt, "value {} has a name longer than {}", i, kMaxNameLength);
    }
    uint32_t rank = v->shape() ? v->shape()->size() : 0;
    if (rank > kMaxRank) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has rank {} above the limit {}",
                         v->name()->string_view(), rank, kMaxRank);
    }
    if (!ElementsAligned(v->shape())) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has a misaligned shape", v->name()->string_view());
    }
    if (v->shape()) {
      for (int64_t d : *v->shape()) {
        if (d < -1) {
          return EPCTX_ERROR(kCorrupt, "value '{}' has dimension {}", v->name()->string_view(), d);
        }
      }
    }
    if (v->dim_names() && v->dim_names()->size() != rank) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has {} dim names for rank {}",
                         v->name()->string_view(), v->dim_names()->size(), rank);
    }
    if (v->weight() < -1 ||
        (v->weight() >= 0 && static_cast<uint32_t>(v->weight()) >= weight_count)) {
      return EPCTX_ERROR(kCorrupt, "value '{}' refers to weight {} of {}", v->name()->string_view(),
                         v->weight(), weight_count);
    }
    if (v->weight() >= 0) {
      EPCTX_RETURN_IF_ERROR(CheckValueMatchesWeight(
          *v, *manifest.weights()->Get(static_cast<uint32_t>(v->weight()))));
    }
    // Kernels and the registry's type sets take the type as given: one outside the enum stops here.
    const auto dtype = static_cast<DataType>(v->dtype());
    if (dtype != DataType::kUndefined && dtype != DataType::kString &&
        !KnownFixedSizeType(v->dtype())) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has unknown data type {}", v->name()->string_view(),
                         v->dtype());
    }
    if (v->kind() > static_cast<uint8_t>(ValueKind::kSequence)) {
      return EPCTX_ERROR(kCorrupt, "value '{}' has kind {} (0: tensor, 1: sequence)",
                         v->name()->string_view(), v->kind());
    }
    const bool plain_tensor = v->kind() == 0 && !v->optional();
    if (!plain_tensor && (v->weight() >= 0 || v->arena_offset() != -1)) {
      return EPCTX_ERROR(kCorrupt,
                         "value '{}' is a sequence or an optional but has a weight or an arena "
                         "place",
                         v->name()->string_view());
    }
    if (v->arena_offset() != -1) {
      if (v->arena_offset() < 0 || v->arena_bytes() < 0 ||
          !RangeInside(static_cast<uint64_t>(v->arena_offset()),
                       static_cast<uint64_t>(v->arena_bytes()), static_cast<uint64_t>(arena)) ||
          v->arena_offset() % static_cast<int64_t>(kTensorAlignment) != 0) {
        return EPCTX_ERROR(kCorrupt, "value '{}' arena range {}+{} outside the arena of {} bytes",
                           v->name()->string_view(), v->arena_offset(), v->arena_bytes(), arena);
      }
    }
  }
  EPCTX_RETURN_IF_ERROR(CheckIndexList(program.inputs(), value_count, false, "program input"));
  EPCTX_RETURN_IF_ERROR(CheckIndexList(program.outputs(), value_count, false, "program output"));

  const auto* nodes = program.nodes();
  uint32_t node_count = nodes ? nodes->size() : 0;
  if (node_count > kMaxNodesPerProgram) {
    return EPCTX_ERROR(kCorrupt, "{} nodes exceed the limit {}", node_count, kMaxNodesPerProgram);
  }
  for (uint32_t n = 0; n < node_count; ++n) {
    const fb::Node* node = nodes->Get(n);
    std::string what = fmt::format("node {} ({})", n, node->op_type()->string_view());
    EPCTX_RETURN_IF_ERROR(CheckIndexList(node->inputs(), value_count, true, what.c_str()));
    EPCTX_RETURN_IF_ERROR(CheckIndexList(node->outputs(), value_count, true, what.c_str()));
    uint32_t input_count = node->inputs() ? node->inputs()->size() : 0;
    if (node->implicit_inputs() < 0 ||
        static_cast<uint32_t>(node->implicit_inputs()) > input_count) {
      return EPCTX_ERROR(kCorrupt, "{} has {} implicit inputs but {} inputs", what,
                         node->implicit_inputs(), input_count);
    }
    if (node->attributes() == nullptr) continue;
    for (const fb::Attribute* a : *node->attributes()) {
      if (!ElementsAligned(a->ints())) {
        return EPCTX_ERROR(kCorrupt, "{} attribute '{}' has misaligned ints", what,
                           a->name()->string_view());
      }
      if (a->type() == fb::AttrType::Graph &&
          (a->graph() < 0 || static_cast<uint32_t>(a->graph()) >= program_count)) {
        return EPCTX_ERROR(kCorrupt, "{} attribute '{}' refers to program {} of {}", what,
                           a->name()->string_view(), a->graph(), program_count);
      }
      if (a->type() == fb::AttrType::Graph && static_cast<uint32_t>(a->graph()) <= program_index) {
        return EPCTX_ERROR(kCorrupt,
                           "{} attribute '{}' refers to program {}, which does not come after "
                           "program {}",
                           what, a->name()->string_view(), a->graph(), program_index);
      }
      if (a->type() == fb::AttrType::Tensor) {
        uint32_t rank = a->ints() ? a->ints()->size() : 0;
        if (rank > kMaxRank || !KnownFixedSizeType(a->tensor_dtype())) {
          return EPCTX_ERROR(kCorrupt, "{} tensor attribute '{}' has bad type or rank", what,
                             a->name()->string_view());
        }
        std::span<const int64_t> dims(a->ints() ? a->ints()->data() : nullptr, rank);
        auto count = CheckedElementCount(dims);
        uint64_t bytes = 0;
        uint64_t have = a->s() ? a->s()->size() : 0;
        if (!count.ok() ||
            !CheckedMul(static_cast<uint64_t>(*count),
                        DataTypeSize(static_cast<DataType>(a->tensor_dtype())), &bytes) ||
            bytes != have) {
          return EPCTX_ERROR(kCorrupt, "{} tensor attribute '{}' has {} bytes for its shape", what,
                             a->name()->string_view(), have);
        }
      }
    }
  }
  return ValidateDataflow(program);
}

}  // namespace epctx::format
