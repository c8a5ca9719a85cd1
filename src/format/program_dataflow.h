// Checks that make a program safe to run, beyond its indices being in range: who writes each
// value and when, and which activations may share arena bytes. A program whose checksums were
// recomputed by hand must not be able to make a kernel write over what it reads.
#pragma once

#include <string_view>

#include "epctx/status.h"

namespace epctx::fb {
struct Manifest;
struct Program;
}  // namespace epctx::fb

namespace epctx::format {

// The program's data flow, given that every index in it is in range (ValidateProgram's other
// checks):
//  - program inputs are distinct and not weights;
//  - every node output is written by that node alone, and is neither a weight nor a program input;
//  - every node input is a weight, a program input, or the output of an earlier node (so the
//    nodes are in execution order and nothing reads a value before it exists);
//  - every program output exists by the end of the run;
//  - only node outputs have arena ranges, and two values that are live at the same time (from
//    the node writing one to the last node reading it; program outputs to the end) never share
//    arena bytes, except a view op's output 0 and its input 0 with exactly the same range, and
//    a Concat's output and its inputs when each input's range is exactly where Concat puts it
//    and together they fill the output's (the producers write into the output; Concat copies
//    nothing).
Status ValidateDataflow(const fb::Program& program);

// Ops whose output 0 is input 0 seen with another shape (Reshape and the like): the memory plan
// may give both the same arena range, and the kernel then writes nothing
// (exec::KernelContext::ShareInput).
bool IsViewOp(std::string_view domain, std::string_view op_type);

}  // namespace epctx::format
