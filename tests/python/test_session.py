"""InferenceSession: creation from paths and bytes, descriptions, runs against PyTorch, zero-copy
outputs, the fallback, and every error path with the engine's message."""

import os
import shutil

import numpy as np
import pytest
from onnx import TensorProto, helper

import epctx
from conftest import assert_matches_pytorch, model_path, reference, tiny_model_bytes


def test_original_model_compiles_in_memory_and_matches_pytorch():
    sess = epctx.InferenceSession(model_path("resnet18_cls"))
    origin = sess.get_session_origin()
    assert not origin.from_context_blob
    assert origin.fallback_reason == ""
    assert origin.original_model_path == model_path("resnet18_cls")
    x, y = reference("resnet18_cls")
    (got,) = sess.run(["output"], {"input": x})
    assert_matches_pytorch(got, y)


def test_outputs_own_the_engine_buffer(cls_context):
    _, _, ctx = cls_context
    sess = epctx.InferenceSession(ctx)
    x, y = reference("resnet18_cls")
    (a,) = sess.run(None, {"input": x})
    (b,) = sess.run(None, {"input": x})
    # No copy into NumPy: the array's base is the capsule that owns the engine's tensor.
    assert not a.flags.owndata and type(a.base).__name__ == "PyCapsule"
    assert a.flags.writeable and a.flags.c_contiguous
    assert not np.shares_memory(a, b)
    a[...] = 0  # the caller's to change; the next run is unaffected
    (c,) = sess.run(None, {"input": x})
    assert_matches_pytorch(c, y)
    del sess  # outputs outlive their session
    assert_matches_pytorch(b, y)


def test_one_output_asked_twice_gives_two_arrays(cls_context):
    sess = epctx.InferenceSession(cls_context[2])
    x, y = reference("resnet18_cls")
    a, b = sess.run(["output", "output"], {"input": x})
    assert_matches_pytorch(a, y)
    assert np.array_equal(a, b) and not np.shares_memory(a, b)


def test_inputs_read_in_place_or_copied_once():
    x, _ = reference("resnet18_cls")
    assert epctx._epctx._can_read_in_place(x)
    fortran = np.asfortranarray(x)
    swapped = x.astype(">f4")
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(x.shape)
    unaligned[...] = x
    strided = np.repeat(x, 2, axis=3)[..., ::2]
    for array in (fortran, swapped, unaligned, strided):
        assert np.array_equal(array, x)
        assert not epctx._epctx._can_read_in_place(array)


def test_arrays_that_need_a_copy_give_the_same_outputs(cls_context):
    sess = epctx.InferenceSession(cls_context[2])
    x, y = reference("resnet18_cls")
    (expected,) = sess.run(None, {"input": x})
    assert_matches_pytorch(expected, y)
    raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(x.shape)
    unaligned[...] = x
    for array in (np.asfortranarray(x), x.astype(">f4"), unaligned):
        (got,) = sess.run(None, {"input": array})
        assert np.array_equal(got, expected)


def test_descriptions_of_inputs_and_outputs(tiny_model):
    sess = epctx.InferenceSession(tiny_model)
    inputs = sess.get_inputs()
    outputs = sess.get_outputs()
    assert [(i.name, i.type, i.shape) for i in inputs] == [
        ("x", "tensor(float)", ["batch", 4]), ("k", "tensor(int64)", [None])]
    assert [(o.name, o.type) for o in outputs] == [("y", "tensor(float)"), ("n", "tensor(int64)")]
    cls = epctx.InferenceSession(model_path("resnet18_cls"))
    (arg,) = cls.get_inputs()
    assert (arg.name, arg.type, arg.shape) == ("input", "tensor(float)", [1, 3, 224, 224])
    assert cls.get_outputs()[0].shape == [1, 10]


def test_runs_with_symbolic_dims_and_integers(tiny_model):
    sess = epctx.InferenceSession(tiny_model)
    x = np.array([[-1, 2, -3, 4], [5, -6, 7, -8], [0, 1, 0, -1]], dtype=np.float32)
    k = np.array([3, -9, 2**40], dtype=np.int64)
    y, n = sess.run(None, {"x": x, "k": k})
    assert np.array_equal(y, np.maximum(x, 0)) and y.dtype == np.float32
    assert np.array_equal(n, k) and n.dtype == np.int64
    (n_only,) = sess.run(["n"], {"x": x, "k": k})
    assert np.array_equal(n_only, k)


def test_inputs_and_outputs_without_shapes():
    # make_tensor_value_info(name, type, None): no shape at all, which onnx's checker refuses on
    # the main graph and ONNX Runtime runs (any rank in, the inferred shape out).
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("ReduceSum", ["y"], ["s"],
                                                                  keepdims=0)],
        "no_shapes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = epctx.InferenceSession(model.SerializeToString())
    assert [(i.name, i.shape) for i in sess.get_inputs()] == [("x", [])]
    for x in (np.array([[-1, 2], [3, -4]], dtype=np.float32), np.array([-5, 6, 7], np.float32)):
        y, s = sess.run(None, {"x": x})
        assert np.array_equal(y, np.maximum(x, 0)) and s.shape == () and s == y.sum()


def test_model_metadata(tiny_model, cls_context):
    meta = epctx.InferenceSession(tiny_model).get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.domain) == (
        "epctx-tests", "tiny_graph", "org.epctx.test")
    assert (meta.description, meta.graph_description, meta.version) == (
        "a tiny model", "the graph's doc", 7)
    assert meta.custom_metadata_map == {"author": "tests", "purpose": "metadata"}
    ctx_meta = epctx.InferenceSession(cls_context[2]).get_modelmeta()
    assert ctx_meta.producer_name == "epctx"
    assert ctx_meta.custom_metadata_map["epctx.original_model"] == "resnet18_cls.onnx"
    # A context model repeats its original's description (class labels and the like live in
    # metadata_props), with epctx as its producer and its own keys beside the original's.
    ctx = tiny_model.replace(".onnx", "_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), tiny_model).compile_to_file(ctx)
    tiny_ctx = epctx.InferenceSession(ctx).get_modelmeta()
    assert (tiny_ctx.producer_name, tiny_ctx.graph_name, tiny_ctx.domain) == (
        "epctx", "tiny_graph", "org.epctx.test")
    assert (tiny_ctx.description, tiny_ctx.graph_description, tiny_ctx.version) == (
        "a tiny model", "the graph's doc", 7)
    assert {k: v for k, v in tiny_ctx.custom_metadata_map.items()
            if not k.startswith("epctx.")} == {"author": "tests", "purpose": "metadata"}
    assert tiny_ctx.custom_metadata_map["epctx.original_model"] == "tiny.onnx"


def test_session_options_are_kept_as_a_copy(tiny_model):
    so = epctx.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("epctx.load_mode", "read")
    sess = epctx.InferenceSession(tiny_model, sess_options=so)
    so.add_session_config_entry("epctx.load_mode", "mmap")
    kept = sess.get_session_options()
    assert kept.get_session_config_entry("epctx.load_mode") == "read"
    assert kept.intra_op_num_threads == 1
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    assert epctx.get_available_providers() == ["CPUExecutionProvider"]


def test_bytes_of_an_original_model():
    with open(model_path("resnet18_reg"), "rb") as f:
        sess = epctx.InferenceSession(f.read())
    x, y = reference("resnet18_reg")
    (got,) = sess.run(None, {"input": x})
    assert_matches_pytorch(got, y)


def test_bytes_of_a_context_model_need_its_file_path(cls_context):
    _, _, ctx = cls_context
    with open(ctx, "rb") as f:
        data = f.read()
    with pytest.raises(epctx.InvalidArgument) as e:
        epctx.InferenceSession(data)
    assert "set ep.context_file_path so that the blob 'resnet18_cls_ctx.epctx' can be found" in str(e.value)
    so = epctx.SessionOptions()
    so.add_session_config_entry("ep.context_file_path", ctx)
    sess = epctx.InferenceSession(data, so)
    assert sess.get_session_origin().from_context_blob
    x, y = reference("resnet18_cls")
    assert_matches_pytorch(sess.run(None, {"input": x})[0], y)


def test_damaged_blob_falls_back_to_the_original(cls_context, tmp_path):
    folder, _, _ = cls_context
    for name in os.listdir(folder):
        shutil.copy2(folder / name, tmp_path)  # keeps mtimes: not stale
    blob = tmp_path / "resnet18_cls_ctx.epctx"
    with open(blob, "r+b") as f:
        f.truncate(4096)
    ctx = str(tmp_path / "resnet18_cls_ctx.onnx")
    sess = epctx.InferenceSession(ctx)
    origin = sess.get_session_origin()
    assert not origin.from_context_blob
    assert origin.fallback_reason.startswith("Corrupt: ")
    assert origin.original_model_path.endswith("resnet18_cls.onnx")
    x, y = reference("resnet18_cls")
    assert_matches_pytorch(sess.run(None, {"input": x})[0], y)
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.fallback", "deny")
    with pytest.raises(epctx.Corrupt) as e:
        epctx.InferenceSession(ctx, so)
    assert "cannot be used, and epctx.fallback=deny" in str(e.value)
    assert e.value.code == "Corrupt"


def test_creation_errors(tmp_path):
    missing = str(tmp_path / "absent.onnx")
    with pytest.raises(epctx.NotFound) as e:
        epctx.InferenceSession(missing)
    assert missing in str(e.value)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, epctx.EpctxError)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07this is not a model")
    with pytest.raises(epctx.InvalidArgument, match="not an ONNX model"):
        epctx.InferenceSession(str(junk))
    with pytest.raises(epctx.InvalidArgument, match="not an ONNX model"):
        epctx.InferenceSession(b"\xff\xff\xff")
    with pytest.raises(TypeError, match="Unable to load from type"):
        epctx.InferenceSession(42)
    with pytest.raises(TypeError, match="disabled_optimizers"):
        epctx.InferenceSession(missing, disabled_optimizers=["x"])
    with pytest.raises(TypeError, match="sess_options must be an epctx.SessionOptions"):
        epctx.InferenceSession(missing, {"a": "b"})


def test_providers(tiny_model):
    epctx.InferenceSession(tiny_model, providers=["CPUExecutionProvider"])
    epctx.InferenceSession(tiny_model, providers=[("CPUExecutionProvider", {})])
    with pytest.raises(ValueError, match="'CUDAExecutionProvider' is not available: epctx runs on the CPU only"):
        epctx.InferenceSession(tiny_model, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    with pytest.raises(epctx.Unsupported, match="options are not supported"):
        epctx.InferenceSession(tiny_model, providers=["CPUExecutionProvider"],
                               provider_options=[{"arena_extend_strategy": "kSameAsRequested"}])
    with pytest.raises(ValueError, match="should be a sequence"):
        epctx.InferenceSession(tiny_model, providers="CPUExecutionProvider")


def test_run_errors_carry_the_engines_message(tiny_model):
    sess = epctx.InferenceSession(tiny_model)
    x = np.ones((2, 4), dtype=np.float32)
    k = np.ones(3, dtype=np.int64)
    cases = [
        ({"x": x}, None, "missing input 'k' (int64 [?])"),
        ({"x": x, "k": k, "z": k}, None,
         "unknown input 'z'; the model's inputs are: x (float32 [batch,4]), k (int64 [?])"),
        ({"x": x.astype(np.float64), "k": k}, None, "input 'x' has type float64, expected float32"),
        ({"x": [[1.0, 2.0, 3.0, 4.0]], "k": k}, None, "input 'x' has type float64, expected float32"),
        ({"x": np.ones((2, 5), np.float32), "k": k}, None,
         "input 'x' has shape [2,5], expected [batch,4] (dim 1 differs)"),
        ({"x": np.ones(4, np.float32), "k": k}, None,
         "input 'x' has rank 1 (shape [4]), expected rank 2 (shape [batch,4])"),
        ({"x": x, "k": k}, ["nope"], "unknown output 'nope'; the model's outputs are: y (float32 [?,4]), n (int64 [?])"),
    ]
    for feed, names, message in cases:
        with pytest.raises(epctx.InvalidArgument) as e:
            sess.run(names, feed)
        assert str(e.value) == message
        assert isinstance(e.value, ValueError) and e.value.code == "InvalidArgument"
    with pytest.raises(epctx.InvalidArgument) as e:
        sess.run(None, {"x": np.ones((1, 4), np.complex64), "k": k})
    assert str(e.value) == ("input 'x' has NumPy dtype complex64, which epctx does not take (bool, "
                            "int8-64, uint8-64, float16, float32, float64; strings as '<U' arrays "
                            "or object arrays of str)")
    with pytest.raises(epctx.InvalidArgument) as e:
        sess.run(None, {"x": np.array([["a", "b", "c", "d"]]), "k": k})
    assert str(e.value) == "input 'x' has type string, expected float32"
    with pytest.raises(TypeError, match="output_names must be a list of output names or None"):
        sess.run("y", {"x": x, "k": k})
    with pytest.raises(TypeError, match="input_feed must be a dict"):
        sess.run(None, [x, k])
    with pytest.raises(TypeError, match="input_feed keys must be input names"):
        sess.run(None, {0: x, "k": k})


def test_session_options_entries():
    so = epctx.SessionOptions()
    with pytest.raises(epctx.InvalidArgument) as e:
        so.add_session_config_entry("session.graph_optimization_level", "99")
    assert str(e.value).startswith(
        'unknown option "session.graph_optimization_level" (known: ep.context_enable, ')
    assert "epctx.load_mode" in str(e.value)
    with pytest.raises(epctx.InvalidArgument, match='option ep.share_ep_contexts must be "0" or "1", got "yes"'):
        so.add_session_config_entry("ep.share_ep_contexts", "yes")
    with pytest.raises(epctx.NotFound) as e:
        so.get_session_config_entry("ep.share_ep_contexts")
    assert isinstance(e.value, RuntimeError)
    assert str(e.value) == "no session config entry 'ep.share_ep_contexts' is set"
    assert so.intra_op_num_threads == 0
    so.intra_op_num_threads = 3
    assert so.get_session_config_entry("session.intra_op_num_threads") == "3"
    with pytest.raises(epctx.InvalidArgument, match="from 0 to 1024"):
        so.intra_op_num_threads = -1
    assert so.intra_op_num_threads == 3
    assert repr(so) == "SessionOptions(session.intra_op_num_threads=3)"


def test_exception_classes():
    assert issubclass(epctx.EpctxError, RuntimeError)
    pairs = [(epctx.InvalidArgument, ValueError), (epctx.NotFound, FileNotFoundError),
             (epctx.IoError, OSError), (epctx.Unsupported, NotImplementedError)]
    for cls, builtin in pairs:
        assert issubclass(cls, epctx.EpctxError) and issubclass(cls, builtin)
    for cls in (epctx.Corrupt, epctx.VersionMismatch, epctx.TargetMismatch, epctx.Stale,
                epctx.FailedPrecondition, epctx.Internal, epctx.Cancelled):
        assert issubclass(cls, epctx.EpctxError)


def test_logger_severity():
    epctx.set_default_logger_severity(3)
    with pytest.raises(epctx.InvalidArgument, match="log level 5 is not one of 0"):
        epctx.set_default_logger_severity(5)
    epctx.set_default_logger_severity(2)
    assert epctx.__version__.count(".") == 2


def test_tiny_model_bytes_load():
    sess = epctx.InferenceSession(tiny_model_bytes())
    assert [i.name for i in sess.get_inputs()] == ["x", "k"]
