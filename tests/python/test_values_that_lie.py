"""Values that lie, from Python: a path holding a NUL byte (Python's own open() refuses one; the
engine saw only the part before it and wrote or loaded that file) and a NumPy bool array whose
bytes are not 0 or 1 (a view of other bytes: Not of 2 gave 3). Each raises, naming what is
wrong. (NumPy makes no array whose dims multiply beyond its address space, empty or not, so
huge empty inputs cannot come from Python: tests/tools/cli_values_that_lie_test.cc feeds one.)"""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

import epctx


def write_model(path, nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "lies", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return str(path)


@pytest.fixture
def not_model(tmp_path):
    return write_model(tmp_path / "not.onnx", [helper.make_node("Not", ["x"], ["y"])],
                       [helper.make_tensor_value_info("x", TP.BOOL, ["n"])],
                       [helper.make_tensor_value_info("y", TP.BOOL, ["n"])])


def nul_message(what, path, tail):
    return (f"{what} '{path}\\0{tail}' contains a NUL byte: the system would see only "
            f"'{path}'")


def test_compile_to_a_path_with_a_nul_writes_nothing(not_model, tmp_path):
    with pytest.raises(ValueError):
        open(str(tmp_path / "a_ctx.onnx") + "\0.json", "wb")  # what Python itself does
    out = str(tmp_path / "a_ctx.onnx")
    with pytest.raises(epctx.InvalidArgument) as e:
        epctx.ModelCompiler(epctx.SessionOptions(), not_model).compile_to_file(out + "\0.json")
    assert str(e.value) == nul_message("context model path", out, ".json")
    with pytest.raises(epctx.InvalidArgument) as e:
        epctx.ModelCompiler(epctx.SessionOptions(), not_model + "\0.onnx").compile_to_file(out)
    assert str(e.value) == nul_message("path", not_model, ".onnx")
    assert sorted(os.listdir(tmp_path)) == ["not.onnx"]


def test_session_from_a_path_with_a_nul_is_refused(not_model, tmp_path):
    ctx = str(tmp_path / "not_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), not_model).compile_to_file(ctx)
    with pytest.raises(epctx.InvalidArgument) as e:
        epctx.InferenceSession(ctx + "\0.other")
    assert str(e.value) == nul_message("path", ctx, ".other")
    assert isinstance(e.value, ValueError)


def test_path_options_with_a_nul_are_refused_when_added():
    so = epctx.SessionOptions()
    for key in ("ep.context_file_path", "epctx.profile_file"):
        with pytest.raises(epctx.InvalidArgument) as e:
            so.add_session_config_entry(key, "out/m_ctx.onnx\0.json")
        assert str(e.value) == nul_message(f"option {key}", "out/m_ctx.onnx", ".json")


def test_bool_arrays_whose_bytes_are_not_0_or_1_are_refused(not_model):
    sess = epctx.InferenceSession(not_model)
    lying = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)
    assert lying.view(np.uint8).tolist() == [0, 1, 2, 255]
    with pytest.raises(epctx.InvalidArgument) as e:
        sess.run(None, {"x": lying})
    assert str(e.value) == "input 'x': bool element 2 is 2, not 0 or 1"
    # Not contiguous: copied before the run, and checked all the same.
    strided = np.array([0, 9, 1, 9, 7, 9], np.uint8).view(np.bool_)[::2]
    with pytest.raises(epctx.InvalidArgument) as e:
        sess.run(None, {"x": strided})
    assert str(e.value) == "input 'x': bool element 2 is 7, not 0 or 1"
    (y,) = sess.run(None, {"x": np.array([False, True, True, False])})
    assert y.dtype == np.bool_ and y.tolist() == [True, False, False, True]

