// `epctx run` on values other than numeric tensors: string inputs from .npy and .pb and string
// outputs written as NumPy '<U' arrays, sequence outputs as one file per element, empty optional
// outputs as no file, sequence inputs from SequenceProto files, optional inputs left out; and
// the summaries printed for each of them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "epctx/tensor_io.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tools_testing::CommandResult;
using tools_testing::ReadFileToString;
using tools_testing::RunCli;
using tools_testing::RunPython;
using tools_testing::TempDir;

// values.onnx: s_out = Identity(s) (string [n]); seq = SequenceConstruct(x, 2x, x) (float);
// none = Optional() (an empty optional of float [2]); full = Optional(x); nothing =
// SequenceEmpty(float). seqin.onnx: second = SequenceAt(seq, 1), has = OptionalHasElement(opt)
// with seq a sequence input and opt an optional input. Input files beside them.
constexpr char kModels[] = R"PY(
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP

s = helper.make_tensor_value_info('s', TP.STRING, [None])
x = helper.make_tensor_value_info('x', TP.FLOAT, [2])
opt_float2 = helper.make_optional_type_proto(helper.make_tensor_type_proto(TP.FLOAT, [2]))
outputs = [helper.make_tensor_value_info('s_out', TP.STRING, [None]),
           helper.make_tensor_sequence_value_info('seq', TP.FLOAT, [2]),
           helper.make_value_info('none', opt_float2),
           helper.make_value_info('full', opt_float2),
           helper.make_tensor_sequence_value_info('nothing', TP.FLOAT, None)]
nodes = [helper.make_node('Identity', ['s'], ['s_out']),
         helper.make_node('Add', ['x', 'x'], ['x2']),
         helper.make_node('SequenceConstruct', ['x', 'x2', 'x'], ['seq']),
         helper.make_node('Optional', [], ['none'], type=helper.make_tensor_type_proto(TP.FLOAT, [2])),
         helper.make_node('Optional', ['x'], ['full']),
         helper.make_node('SequenceEmpty', [], ['nothing'], dtype=TP.FLOAT)]
model = helper.make_model(helper.make_graph(nodes, 'values', [s, x], outputs),
                          opset_imports=[helper.make_opsetid('', 18)])
onnx.checker.check_model(model)
onnx.save(model, 'values.onnx')

seq = helper.make_tensor_sequence_value_info('seq', TP.FLOAT, [None])
opt = helper.make_value_info('opt', opt_float2)
nodes = [helper.make_node('SequenceAt', ['seq', 'one'], ['second']),
         helper.make_node('OptionalHasElement', ['opt'], ['has'])]
graph = helper.make_graph(nodes, 'seqin', [seq, opt],
                          [helper.make_tensor_value_info('second', TP.FLOAT, [None]),
                           helper.make_tensor_value_info('has', TP.BOOL, [])],
                          initializer=[numpy_helper.from_array(np.array(1, np.int64), 'one')])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
onnx.checker.check_model(model)
onnx.save(model, 'seqin.onnx')

strings = np.array(['h\u00e9llo', '', 'a"b\\c\n', '\U0001F600'])
np.save('s.npy', strings)
open('s.pb', 'wb').write(numpy_helper.from_array(strings.astype(object), 's').SerializeToString())
np.save('x.npy', np.array([1.5, -2], np.float32))
np.save('o.npy', np.array([7, 8], np.float32))
sp = onnx.SequenceProto(elem_type=onnx.SequenceProto.TENSOR, name='seq')
sp.tensor_values.extend([numpy_helper.from_array(np.array([1, 2], np.float32)),
                         numpy_helper.from_array(np.array([3, 4, 5], np.float32))])
open('seq.pb', 'wb').write(sp.SerializeToString())
special = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
np.save('special.npy', special)
np.save('special_close.npy', special + np.array([0, 0, 0, 1e-6], np.float32))
np.save('special_nan_last.npy', np.array([np.nan, np.inf, -np.inf, np.nan], np.float32))
np.save('special_inf_swapped.npy', np.array([np.nan, -np.inf, np.inf, 1.0], np.float32))
)PY";

class CliRunValuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CommandResult py = RunPython(kModels, dir_.path());
    ASSERT_EQ(py.exit_code, 0) << py.err;
  }
  std::string P(const std::string& name) const { return dir_ / name; }

  TempDir dir_;
};

TEST_F(CliRunValuesTest, StringsSequencesAndOptionalsAreWrittenAsFiles) {
  for (const char* strings : {"s.npy", "s.pb"}) {
    SCOPED_TRACE(strings);
    std::string out = P("out");
    fs::remove_all(out);
    CommandResult r = RunCli({"run", P("values.onnx"), "-i", "s=" + P(strings), "-i",
                              "x=" + P("x.npy"), "--output-dir", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "s_out: string [4] -> " + out + "/s_out.npy\n" +
                         "seq: sequence of 3 float32 tensors\n" + "  [0] float32 [2] -> " + out +
                         "/seq@0.npy\n" + "  [1] float32 [2] -> " + out + "/seq@1.npy\n" +
                         "  [2] float32 [2] -> " + out + "/seq@2.npy\n" +
                         "none: empty optional, no file written\n" + "full: float32 [2] -> " + out +
                         "/full.npy\n" +
                         "nothing: sequence of 0 float32 tensors, no file written\n");
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(out)) {
      files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"full.npy", "s_out.npy", "seq@0.npy", "seq@1.npy",
                                               "seq@2.npy"}));
    // The string output is the file NumPy writes for the same strings, byte for byte.
    EXPECT_EQ(ReadFileToString(out + "/s_out.npy"), ReadFileToString(P("s.npy")));
  }
  CommandResult py = RunPython(R"PY(
import numpy as np
s = np.load('out/s_out.npy')
assert s.dtype == np.dtype('<U6') and s.tolist() == ['h\u00e9llo', '', 'a"b\\c\n', '\U0001F600'], s
x = np.array([1.5, -2], np.float32)
for i, want in enumerate([x, 2 * x, x]):
  got = np.load('out/seq@%d.npy' % i)
  assert got.dtype == np.float32 and np.array_equal(got, want), (i, got)
assert np.array_equal(np.load('out/full.npy'), x)
)PY",
                               dir_.path());
  EXPECT_EQ(py.exit_code, 0) << py.err;
}

TEST_F(CliRunValuesTest, SummariesShowStringsSequencesAndEmptyOptionals) {
  CommandResult r =
      RunCli({"run", P("values.onnx"), "-i", "s=" + P("s.npy"), "-i", "x=" + P("x.npy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "s_out: string [4]\n"
            "  values [\"h\xc3\xa9llo\", \"\", \"a\\\"b\\\\c\\x0a\", \"\xf0\x9f\x98\x80\"]\n"
            "seq: sequence of 3 float32 tensors\n"
            "  [0]: float32 [2]\n"
            "    min -2  max 1.5  mean -0.25\n"
            "    values [1.5, -2]\n"
            "  [1]: float32 [2]\n"
            "    min -4  max 3  mean -0.5\n"
            "    values [3, -4]\n"
            "  [2]: float32 [2]\n"
            "    min -2  max 1.5  mean -0.25\n"
            "    values [1.5, -2]\n"
            "none: empty optional (no tensor)\n"
            "full: float32 [2]\n"
            "  min -2  max 1.5  mean -0.25\n"
            "  values [1.5, -2]\n"
            "nothing: sequence of 0 float32 tensors\n");
}

TEST_F(CliRunValuesTest, LongStringsAndLongSequencesAreCut) {
  CommandResult py = RunPython(R"PY(
import numpy as np
import onnx
from onnx import helper, TensorProto as TP
x = helper.make_tensor_value_info('x', TP.FLOAT, [1])
nodes = [helper.make_node('SequenceConstruct', ['x'] * 6, ['seq'])]
out = helper.make_tensor_sequence_value_info('seq', TP.FLOAT, [1])
model = helper.make_model(helper.make_graph(nodes, 'g', [x], [out]),
                          opset_imports=[helper.make_opsetid('', 18)])
onnx.save(model, 'six.onnx')
np.save('one.npy', np.array([1], np.float32))
np.save('long.npy', np.array(['x' * 50, '\x01\x7f\u0085'] + ['s'] * 8))
)PY",
                               dir_.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  CommandResult six = RunCli({"run", P("six.onnx"), "-i", "x=" + P("one.npy")});
  ASSERT_EQ(six.exit_code, 0) << six.err;
  EXPECT_THAT(six.out, HasSubstr("seq: sequence of 6 float32 tensors\n  [0]: float32 [1]\n"));
  EXPECT_THAT(
      six.out,
      HasSubstr(
          "\n  [3]: float32 [1]\n    min 1  max 1  mean 1\n    values [1]\n  ... (6 in all)\n"));
  EXPECT_THAT(six.out, ::testing::Not(HasSubstr("[4]")));

  CommandResult strings =
      RunCli({"run", P("values.onnx"), "-i", "s=" + P("long.npy"), "-i", "x=" + P("x.npy")});
  ASSERT_EQ(strings.exit_code, 0) << strings.err;
  EXPECT_THAT(strings.out,
              HasSubstr("s_out: string [10]\n  values [\"" + std::string(40, 'x') +
                        "\"... (50 bytes), \"\\x01\\x7f\\xc2\\x85\", \"s\", \"s\", \"s\", \"s\", "
                        "\"s\", \"s\", ... (10 in all)]\n"));
}

TEST_F(CliRunValuesTest, SequenceInputsFromSequenceProtoAndOptionalInputsLeftOut) {
  CommandResult without = RunCli({"run", P("seqin.onnx"), "-i", "seq=" + P("seq.pb")});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out,
            "second: float32 [3]\n  min 3  max 5  mean 4\n  values [3, 4, 5]\n"
            "has: bool []\n  min 0  max 0  mean 0\n  values [0]\n");
  CommandResult with =
      RunCli({"run", P("seqin.onnx"), "-i", "seq=" + P("seq.pb"), "-i", "opt=" + P("o.npy")});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_THAT(with.out, HasSubstr("has: bool []\n  min 1  max 1  mean 1\n  values [1]\n"));

  CommandResult npy = RunCli({"run", P("seqin.onnx"), "-i", "seq=" + P("x.npy")});
  EXPECT_EQ(npy.exit_code, 1);
  EXPECT_EQ(npy.err,
            "epctx: error: input 'seq' is a sequence: give it as an ONNX SequenceProto "
            ".pb file, not '" +
                P("x.npy") + "'\n");
  CommandResult missing = RunCli({"run", P("seqin.onnx")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err,
            "epctx: error: missing input 'seq'; give each as --input NAME=FILE (.npy or .pb); the "
            "model's inputs are:\n  seq: sequence of float32\n  opt: optional float32 [2]\n");
  CommandResult wrong_type =
      RunCli({"run", P("values.onnx"), "-i", "s=" + P("x.npy"), "-i", "x=" + P("x.npy")});
  EXPECT_EQ(wrong_type.exit_code, 1);
  EXPECT_EQ(wrong_type.err, "epctx: error: input 's' from '" + P("x.npy") +
                                "' has type float32, expected string\n");
}

// NaN matches NaN and an infinity the same infinity (numpy.isclose with equal_nan), so outputs
// with such values can be compared with a reference; anything else against them differs.
TEST_F(CliRunValuesTest, CompareMatchesNaNWithNaNAndAnInfinityWithItself) {
  CommandResult same = RunCli({"compare", P("special_close.npy"), P("special.npy")});
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(same.out,
            "4 elements: max abs diff 9.54e-07, max |reference| 1, max abs diff / max |reference| "
            "9.54e-07, max relative diff 9.54e-07\nmatch within atol 0 + rtol 0.0001\n");
  CommandResult nan = RunCli({"compare", P("special_nan_last.npy"), P("special.npy")});
  EXPECT_EQ(nan.exit_code, 1);
  EXPECT_THAT(nan.out, HasSubstr("max abs diff inf"));
  EXPECT_EQ(nan.err,
            "epctx: error: 1 of 4 elements differ beyond atol 0 + rtol 0.0001 (first at flat "
            "index 3)\n");
  CommandResult swapped = RunCli({"compare", P("special_inf_swapped.npy"), P("special.npy")});
  EXPECT_EQ(swapped.exit_code, 1);
  EXPECT_EQ(swapped.err,
            "epctx: error: 2 of 4 elements differ beyond atol 0 + rtol 0.0001 (first at flat "
            "index 1)\n");
}

}  // namespace
}  // namespace epctx
