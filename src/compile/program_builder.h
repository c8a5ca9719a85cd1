// Turns an optimized IR graph into a Program flatbuffer, adding its weights to a blob writer
// (deduplicated by content) and planning its activation arena.
#pragma once

#include <cstdint>
#include <functional>
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

// Called after each weight is handed to the writer (a long compile's progress).
using WeightCallback = std::function<void()>;

Result<BuiltProgram> BuildProgram(const IrGraph& graph, format::BlobWriter& writer,
                                  const WeightCallback& on_weight = {});
// How many weights BuildProgram hands to the writer (each program's, bodies' included).
size_t CountProgramWeights(const IrGraph& graph);

}  // namespace epctx::compile
