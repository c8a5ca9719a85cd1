// `epctx compile` and `epctx run` on real models (ONNX's Add test and small generated models):
// these need the library to compile and run models.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "epctx/compiler.h"
#include "epctx/tensor_io.h"
#include "tools/tools_test_helpers.h"

namespace epctx {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using tools_testing::CommandResult;
using tools_testing::OnnxAddTestDir;
using tools_testing::RunCli;
using tools_testing::RunPython;
using tools_testing::TempDir;

std::string Bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.data()), t.byte_size());
}

class CliRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_ / "add.onnx";
    fs::copy_file(OnnxAddTestDir() + "/model.onnx", model_);
    data_ = OnnxAddTestDir() + "/test_data_set_0/";
  }
  std::vector<std::string> Inputs() const {
    return {"--input", "x=" + data_ + "input_0.pb", "--input", "y=" + data_ + "input_1.pb"};
  }
  CommandResult Run(std::vector<std::string> args) {
    std::vector<std::string> inputs = Inputs();
    args.insert(args.end(), inputs.begin(), inputs.end());
    return RunCli(args);
  }
  void ExpectOutputMatchesReference(const std::string& npy) {
    auto actual = ReadNpy(npy);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    auto expected = ReadTensorProto(data_ + "output_0.pb");
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    EXPECT_EQ(actual->dtype(), expected->dtype());
    EXPECT_EQ(actual->shape(), expected->shape());
    EXPECT_EQ(Bytes(*actual), Bytes(*expected));  // float addition is exact either way
  }

  TempDir dir_;
  std::string model_;
  std::string data_;
};

TEST_F(CliRunTest, CompileThenRunTheContextModel) {
  std::string ctx = dir_ / "out/add_ctx.onnx";
  CommandResult c = RunCli({"compile", model_, "-o", ctx});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.out, StartsWith("context model: " + ctx + "\n"));
  EXPECT_THAT(c.out, HasSubstr("blob:          " + (dir_ / "out/add_ctx.epctx") + ", "));
  EXPECT_THAT(c.out, HasSubstr("\nnodes:         1\n"));
  EXPECT_THAT(c.out, HasSubstr("\ncompile time:  "));
  EXPECT_TRUE(fs::exists(ctx));
  EXPECT_TRUE(fs::exists(dir_ / "out/add_ctx.epctx"));

  CommandResult r = Run({"-v", "run", ctx, "--output-dir", dir_ / "res"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sum: float32 [3,4,5] -> " + (dir_ / "res/sum.npy") + "\n");
  EXPECT_THAT(r.err, HasSubstr("epctx: session from context blob '"));
  ExpectOutputMatchesReference(dir_ / "res/sum.npy");
}

TEST_F(CliRunTest, RunTheOriginalModelDirectly) {
  CommandResult r = Run({"run", model_, "--output-dir", dir_ / "res", "-v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("epctx: session compiled in memory from original model"));
  ExpectOutputMatchesReference(dir_ / "res/sum.npy");
}

TEST_F(CliRunTest, FallbackReasonIsShownAtVerbose) {
  ASSERT_EQ(RunCli({"compile", model_}).exit_code, 0);  // default: beside the model
  std::string ctx = dir_ / "add_ctx.onnx";
  ASSERT_TRUE(fs::exists(ctx));
  ASSERT_TRUE(fs::remove(dir_ / "add_ctx.epctx"));
  CommandResult r = Run({"run", ctx, "-v", "--output-dir", dir_ / "res"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("epctx: session compiled in memory from original model"));
  EXPECT_THAT(r.err, HasSubstr("epctx: context blob not used: "));
  ExpectOutputMatchesReference(dir_ / "res/sum.npy");
  // Quiet without -v.
  CommandResult quiet = Run({"run", ctx, "-C", "epctx.fallback|allow"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_THAT(quiet.err, ::testing::Not(HasSubstr("epctx: session")));
}

TEST_F(CliRunTest, CompileOutputDirAndEmbedMode) {
  CommandResult c =
      RunCli({"compile", model_, "--output-dir", dir_ / "d/e", "-C", "ep.context_embed_mode|1"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_THAT(c.out, StartsWith("context model: " + (dir_ / "d/e/add_ctx.onnx") + "\n"));
  EXPECT_THAT(c.out, HasSubstr("blob:          embedded in the context model, "));
  EXPECT_TRUE(fs::exists(dir_ / "d/e/add_ctx.onnx"));
  EXPECT_FALSE(fs::exists(dir_ / "d/e/add_ctx.epctx"));
}

TEST_F(CliRunTest, PrintsASummaryWithoutOutputDir) {
  CommandResult r = Run({"run", model_, "--repeat", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("sum: float32 [3,4,5]\n  min "));
  EXPECT_THAT(r.out, HasSubstr("  max "));
  EXPECT_THAT(r.out, HasSubstr("  mean "));
  EXPECT_THAT(r.out, HasSubstr("\n  values ["));
  EXPECT_THAT(r.out, HasSubstr(", ... (60 in all)]\n"));
  EXPECT_THAT(r.out, HasSubstr("run time over 3 runs: min "));
}

TEST_F(CliRunTest, MissingInputListsTheModelsInputs) {
  CommandResult r = RunCli({"run", model_, "--input", "x=" + data_ + "input_0.pb"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "epctx: error: missing input 'y'; give each as --input NAME=FILE (.npy or .pb); the "
            "model's inputs are:\n  x: float32 [3,4,5]\n  y: float32 [3,4,5]\n");
  EXPECT_THAT(r.out, IsEmpty());

  CommandResult none = RunCli({"run", model_});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, StartsWith("epctx: error: missing inputs 'x', 'y'; "));
}

TEST_F(CliRunTest, BadInputsNameTheirFile) {
  std::string x = data_ + "input_0.pb";
  CommandResult unknown = RunCli({"run", model_, "--input", "z=" + x});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, StartsWith("epctx: error: --input 'z=" + x +
                                      "': 'z' is not an input of the model; the model's inputs "
                                      "are:\n  x: float32 [3,4,5]\n"));

  CommandResult twice = RunCli({"run", model_, "-i", "x=" + x, "-i", "x=" + x});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_EQ(twice.err, "epctx: error: input 'x' is given twice\n");

  ASSERT_EQ(RunPython("import numpy as np\nnp.save('x64.npy', np.zeros((3, 4, 5)))\n"
                      "np.save('x2.npy', np.zeros((3, 4), np.float32))\n",
                      dir_.path())
                .exit_code,
            0);
  CommandResult dtype = RunCli({"run", model_, "-i", "x=" + (dir_ / "x64.npy"), "-i", "y=" + x});
  EXPECT_EQ(dtype.exit_code, 1);
  EXPECT_EQ(dtype.err, "epctx: error: input 'x' from '" + (dir_ / "x64.npy") +
                           "' has type float64, expected float32\n");
  CommandResult shape = RunCli({"run", model_, "-i", "x=" + (dir_ / "x2.npy"), "-i", "y=" + x});
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_EQ(shape.err, "epctx: error: input 'x' from '" + (dir_ / "x2.npy") +
                           "' has rank 2 (shape [3,4]), expected rank 3 (shape [3,4,5])\n");

  CommandResult missing_file =
      RunCli({"run", model_, "-i", "x=" + (dir_ / "nope.npy"), "-i", "y=" + x});
  EXPECT_EQ(missing_file.exit_code, 1);
  EXPECT_EQ(missing_file.err, "epctx: error: '" + (dir_ / "nope.npy") + "': file not found\n");
}

TEST_F(CliRunTest, CompileRefusesToOverwriteTheOriginal) {
  CommandResult r = RunCli({"compile", model_, "-o", model_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("the context model would overwrite the original model"));
  CommandResult bad_option = RunCli({"compile", model_, "-C", "no.such.option|1"});
  EXPECT_EQ(bad_option.exit_code, 1);
  EXPECT_THAT(bad_option.err, StartsWith("epctx: error: "));
  EXPECT_THAT(bad_option.err, HasSubstr("no.such.option"));
  CommandResult twice =
      RunCli({"compile", model_, "-C", "epctx.fallback|deny", "-C", "epctx.fallback|allow"});
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_EQ(twice.err,
            "epctx: error: option 'epctx.fallback' is given twice (with -C or -i, or by a flag "
            "that sets it: --target, --precision, --allow-unsupported, -f)\n");
  CommandResult flag_too =
      RunCli({"compile", model_, "--target", "avx2", "-i", "epctx.target_isa|avx512_core"});
  EXPECT_EQ(flag_too.exit_code, 1);
  EXPECT_THAT(flag_too.err, HasSubstr("option 'epctx.target_isa' is given twice (with -C or -i"));
}

// No compile writes over a model it reads, nor a context model over its own blob: each is refused
// before anything is written, and the input is left as it was.
TEST_F(CliRunTest, CompileRefusesOutputsThatOverwriteInputs) {
  const std::string first = dir_ / "p.onnx";
  const std::string second = dir_ / "p_ctx.onnx";  // where the first model's context model goes
  fs::copy_file(model_, first);
  fs::copy_file(model_, second);
  const auto size = fs::file_size(second);
  CommandResult multi =
      RunCli({"compile", "-q", "-m", first, "-m", second, "--output-dir", dir_.path().string()});
  EXPECT_EQ(multi.exit_code, 1);
  EXPECT_EQ(multi.err, "epctx: error: '" + second + "': the context model of '" + first +
                           "' would overwrite the model '" + second +
                           "', which this compile reads; choose another output\n");
  EXPECT_EQ(fs::file_size(second), size);

  const std::string same = dir_ / "out/m.epctx";
  CommandResult own_blob = RunCli({"compile", "-q", model_, "-o", same});
  EXPECT_EQ(own_blob.exit_code, 1);
  EXPECT_EQ(own_blob.err, "epctx: error: '" + same +
                              "': the context model and its blob would be one file (the blob "
                              "takes the context model's name with the extension .epctx); name "
                              "the context model NAME_ctx.onnx\n");
  EXPECT_FALSE(fs::exists(same));

  // A context model given to compile is named as one (it said EPContext has no kernel).
  ASSERT_EQ(RunCli({"compile", "-q", model_}).exit_code, 0);
  CommandResult again =
      RunCli({"compile", "-q", dir_ / "add_ctx.onnx", "-o", dir_ / "again/add_ctx.onnx"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_EQ(again.err, "epctx: error: '" + (dir_ / "add_ctx.onnx") +
                           "' is a context model already (its node 'add_ctx' is a com.microsoft "
                           "EPContext): compile the original model it was made from\n");

  // The library refuses it too (the command line checks before making directories).
  auto library = ModelCompiler().CompileToFile(first, first);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().message(),
            "'" + first + "': the context model would overwrite the model '" + first +
                "', which this compile reads; choose another output");
  EXPECT_EQ(fs::file_size(first), size);
}

// External data reached through a symbolic link must stay inside the model's folder, or inside
// the folder the model file itself links into (the Hugging Face cache: snapshots/REV/m.onnx and
// m.onnx.data both link into blobs/).
TEST_F(CliRunTest, ExternalDataLinkedOutOfTheFolderIsRefused) {
  CommandResult made = tools_testing::SaveMatMulWithExternalData(dir_.path() / "made");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // A model folder whose data file links to a file outside it.
  fs::create_directories(dir_.path() / "archive");
  fs::copy_file(dir_ / "made/m.onnx", dir_ / "archive/m.onnx");
  fs::create_symlink(dir_ / "made/m.onnx.data", dir_ / "archive/m.onnx.data");
  CommandResult out = RunCli({"compile", "-q", dir_ / "archive/m.onnx"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.err, "epctx: error: '" + (dir_ / "archive/m.onnx") +
                         "': initializer 'w': external data location 'm.onnx.data' leads out of "
                         "the model's directory through a symbolic link (to '" +
                         (dir_ / "made/m.onnx.data") + "')\n");
  // Both files linked from one folder into another: the data lies beside the real model.
  fs::create_directories(dir_.path() / "snapshot");
  fs::create_symlink(dir_ / "made/m.onnx", dir_ / "snapshot/m.onnx");
  fs::create_symlink(dir_ / "made/m.onnx.data", dir_ / "snapshot/m.onnx.data");
  CommandResult linked = RunCli({"compile", "-q", dir_ / "snapshot/m.onnx"});
  EXPECT_EQ(linked.exit_code, 0) << linked.err;
}

// Output names that are not file names: "a/b" and "a%2Fb" must land in two distinct files.
TEST_F(CliRunTest, OutputFileNamesAreEscaped) {
  auto py = RunPython(R"PY(
import onnx
from onnx import helper, TensorProto as TP
x = helper.make_tensor_value_info('in:0', TP.FLOAT, [2])
outs = [helper.make_tensor_value_info(n, TP.FLOAT, [2]) for n in ['a/b', 'a%2Fb', '..']]
nodes = [helper.make_node('Add', ['in:0', 'in:0'], ['a/b']),
         helper.make_node('Add', ['a/b', 'in:0'], ['a%2Fb']),
         helper.make_node('Add', ['a/b', 'a/b'], ['..'])]
model = helper.make_model(helper.make_graph(nodes, 'g', [x], outs),
                          opset_imports=[helper.make_opsetid('', 13)])
onnx.checker.check_model(model)
onnx.save(model, 'names.onnx')
import numpy as np
np.save('in.npy', np.array([1, 2], np.float32))
)PY",
                      dir_.path());
  ASSERT_EQ(py.exit_code, 0) << py.err;
  CommandResult r = RunCli({"run", dir_ / "names.onnx", "--input", "in:0=" + (dir_ / "in.npy"),
                            "--output-dir", dir_ / "res"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::pair<const char*, float> expected[] = {
      {"a%2Fb.npy", 2}, {"a%252Fb.npy", 3}, {"%2E%2E.npy", 4}};
  for (const auto& [file, first] : expected) {
    SCOPED_TRACE(file);
    auto t = ReadNpy(dir_ / ("res/" + std::string(file)));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->data_as<float>()[0], first);
  }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
}

}  // namespace
}  // namespace epctx
