// Meaning-level checks of a verified manifest and program: every index in range, every size
// computable without overflow. Structural checks (offsets inside buffers) are the FlatBuffers
// Verifier's job and come first.
#pragma once

#include <cstdint>

#include "epctx/status.h"

namespace epctx::fb {
struct Manifest;
struct Program;
}  // namespace epctx::fb

namespace epctx::format {

// Each weight lies inside the WEIGHTS section, is aligned, and its size equals its element count
// times its element size.
Status ValidateWeights(const fb::Manifest& manifest, uint64_t weights_section_size);

// Value, weight and body-program indices in range; ranks, names and arena ranges within limits;
// a value standing for a weight has the weight's type and shape; then the data flow
// (ValidateDataflow in program_dataflow.h: single writers, execution order, arena overlaps).
// `manifest` must have passed ValidateWeights. `program_index` is the program's place in its
// model's list of `program_count`: a body it uses must come later in that list.
Status ValidateProgram(const fb::Program& program, const fb::Manifest& manifest,
                       uint32_t program_index, uint32_t program_count);

}  // namespace epctx::format
