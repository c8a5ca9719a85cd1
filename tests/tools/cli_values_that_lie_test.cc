// `epctx run` on input files whose values lie: an empty .npy input whose other dims multiply
// beyond int64 (Flatten printed shape [0, 0] and exited 0) and a '|b1' .npy holding a 2 (Not
// printed 3). Each exits non-zero with the reason. (argv cannot hold a NUL byte: the paths the
// command line takes cannot lie that way.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using tools_testing::CommandResult;
using tools_testing::RunCli;
using tools_testing::RunPython;
using tools_testing::TempDir;

// flatten.onnx: y = Flatten(x, axis=1), x float [a, b, c]; not.onnx: y = Not(x), x bool [n].
// huge.npy holds no element of shape (0, 2^32, 2^32) (NumPy cannot make such an array, so its
// header is written here); bools.npy is a bool view of the bytes 0, 1, 2, 255.
constexpr char kFiles[] = R"PY(
import numpy as np
import onnx
from onnx import helper, TensorProto as TP

def save(name, node, x, y):
    graph = helper.make_graph([node], name, [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    onnx.checker.check_model(model)
    onnx.save(model, name + '.onnx')

save('flatten', helper.make_node('Flatten', ['x'], ['y'], axis=1, name='flat'),
     helper.make_tensor_value_info('x', TP.FLOAT, ['a', 'b', 'c']),
     helper.make_tensor_value_info('y', TP.FLOAT, ['d', 'e']))
save('not', helper.make_node('Not', ['x'], ['y']),
     helper.make_tensor_value_info('x', TP.BOOL, ['n']),
     helper.make_tensor_value_info('y', TP.BOOL, ['n']))

header = "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }"
header = header.ljust(64 * 2 - 10 - 1) + '\n'
with open('huge.npy', 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + len(header).to_bytes(2, 'little') + header.encode())
np.save('bools.npy', np.array([0, 1, 2, 255], np.uint8).view(np.bool_))
np.save('fits.npy', np.empty((2, 0, 3), np.float32))
)PY";

TEST(CliValuesThatLie, HugeEmptyFlattenAndLyingBoolsFailTheRun) {
  TempDir dir;
  CommandResult py = RunPython(kFiles, dir.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;

  CommandResult flat = RunCli({"run", dir / "flatten.onnx", "--input", "x=" + (dir / "huge.npy")});
  EXPECT_NE(flat.exit_code, 0) << flat.out;
  EXPECT_THAT(flat.err, HasSubstr("Flatten node 'flat': the product of dims "
                                  "[4294967296,4294967296] overflows int64"));
  EXPECT_THAT(flat.out, Not(HasSubstr("[0,0]")));
  CommandResult fits = RunCli({"run", dir / "flatten.onnx", "--input", "x=" + (dir / "fits.npy")});
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.out, HasSubstr("[2,0]"));

  CommandResult bools = RunCli({"run", dir / "not.onnx", "--input", "x=" + (dir / "bools.npy")});
  EXPECT_NE(bools.exit_code, 0) << bools.out;
  EXPECT_THAT(bools.err,
              HasSubstr("'" + (dir / "bools.npy") + "': bool element 2 is 2, not 0 or 1"));
}

}  // namespace
}  // namespace epctx
