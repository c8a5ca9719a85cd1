// The arena rule for a Concat whose inputs are written in place (ValidateDataflow): the inputs may
// share the output's bytes only when each sits exactly where Concat puts it and together they fill
// the output; any other placement of live values on shared bytes is refused, with both names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blob_helpers.h"
#include "format/program_dataflow.h"

namespace epctx::format {
namespace {

using blobtest::NodeSpec;
using blobtest::ProgramSpec;
using blobtest::ValueSpec;

ValueSpec Value(std::string name, std::vector<int64_t> shape, int64_t offset, int64_t bytes) {
  ValueSpec v;
  v.name = std::move(name);
  v.shape = std::move(shape);
  v.arena_offset = offset;
  v.arena_bytes = bytes;
  return v;
}

// in -> a = Relu(in) [1,16] and b = Relu(in) [1,8]; y = Concat(a, b) along axis 1; out = Relu(y).
// a and b read nothing after y exists; `a_at`, `b_at`, `y_at`: their arena offsets.
ProgramSpec ConcatProgram(int64_t a_at, int64_t b_at, int64_t y_at, int64_t y_bytes = 96) {
  ProgramSpec p;
  p.name = "main";
  p.values = {Value("in", {1, 4}, -1, 0), Value("a", {1, 16}, a_at, 64),
              Value("b", {1, 8}, b_at, 32), Value("y", {1, 24}, y_at, y_bytes),
              Value("out", {1, 24}, -1, 0)};
  blobtest::AttrSpec axis;
  axis.name = "axis";
  axis.type = fb::AttrType::Int;
  axis.i = 1;
  p.nodes = {NodeSpec{"relu_a", "Relu", "", {0}, {1}}, NodeSpec{"relu_b", "Relu", "", {0}, {2}},
             NodeSpec{"concat", "Concat", "", {1, 2}, {3}, {axis}},
             NodeSpec{"relu_out", "Relu", "", {3}, {4}}};
  p.inputs = {0};
  p.outputs = {4};
  p.arena_bytes = 256;
  p.opsets = {{"", 17}};
  return p;
}

Status Validate(const ProgramSpec& spec) {
  const std::vector<uint8_t> bytes = blobtest::BuildProgram(spec);
  return ValidateDataflow(*flatbuffers::GetRoot<fb::Program>(bytes.data()));
}

TEST(ProgramDataflow, ConcatInputsAtTheirPlaceInTheOutputShareItsBytes) {
  Status s = Validate(ConcatProgram(/*a_at=*/64, /*b_at=*/128, /*y_at=*/64));
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(ProgramDataflow, ConcatInputsElsewhereInTheOutputAreRefused) {
  // b first, then a: inside the output, but not where Concat puts them.
  Status swapped = Validate(ConcatProgram(/*a_at=*/96, /*b_at=*/64, /*y_at=*/64));
  EXPECT_EQ(swapped.code(), StatusCode::kCorrupt);
  EXPECT_NE(swapped.message().find("values 'y' (arena 64+96) and 'b' (arena 64+32) are live at "
                                   "the same time at node 2 (Concat 'concat') and share arena "
                                   "bytes"),
            std::string::npos)
      << swapped.ToString();
  // In order, but the output is larger than the two: not Concat's placement.
  Status larger = Validate(ConcatProgram(/*a_at=*/64, /*b_at=*/128, /*y_at=*/64, /*y_bytes=*/128));
  EXPECT_EQ(larger.code(), StatusCode::kCorrupt);
  EXPECT_NE(larger.message().find("values 'y' (arena 64+128) and 'a' (arena 64+64) are live at "
                                  "the same time at node 2 (Concat 'concat')"),
            std::string::npos)
      << larger.ToString();
}

}  // namespace
}  // namespace epctx::format
