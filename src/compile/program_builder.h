// Turns an optimized IR graph into a Program flatbuffer, adding its weights to a blob writer
// (deduplicated by content) and planning its activation arena.
#pragma once

#include <cstdint>
#include <vector>

#include "compile/ir.h"
#include "epctx/status.h"
#include "format/blob_writer.h"

namespace epctx::compile {

struct BuiltProgram {
  // [0] is the graph's program; control-flow bodies follow, each after the program using it.
  std::vector<std::vector<uint8_t>> programs;
  // Of the graph's own program:
  size_t node_count = 0;
  size_t value_count = 0;
  uint64_t arena_bytes = 0;
};

Result<BuiltProgram> BuildProgram(const IrGraph& graph, format::BlobWriter& writer);

}  // namespace epctx::compile
