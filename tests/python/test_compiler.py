"""ModelCompiler: to a file (default path, from bytes), to bytes (embedded or beside
ep.context_file_path), to a stream, and its errors."""

import os
import shutil

import numpy as np
import pytest

import epctx
from conftest import assert_matches_pytorch, model_path, reference, tiny_model_bytes


def run_tiny(sess):
    x = np.array([[-2, 1, 0, 3]], np.float32)
    k = np.array([5, 6], np.int64)
    y, n = sess.run(None, {"x": x, "k": k})
    assert np.array_equal(y, [[0, 1, 0, 3]]) and np.array_equal(n, k)


def test_compile_to_file_default_path(tmp_path):
    original = shutil.copy(model_path("resnet18_reg"), tmp_path)
    epctx.ModelCompiler(epctx.SessionOptions(), original).compile_to_file()
    assert sorted(os.listdir(tmp_path)) == [
        "resnet18_reg.onnx", "resnet18_reg_ctx.epctx", "resnet18_reg_ctx.onnx"]
    sess = epctx.InferenceSession(str(tmp_path / "resnet18_reg_ctx.onnx"))
    assert sess.get_session_origin().from_context_blob
    # Just written, the blob is in the page cache: load mode auto maps it.
    assert sess.get_session_origin().load_mode == "mmap"
    x, y = reference("resnet18_reg")
    assert_matches_pytorch(sess.run(None, {"input": x})[0], y)


def test_compile_bytes_to_file(tmp_path):
    ctx = str(tmp_path / "tiny_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), tiny_model_bytes()).compile_to_file(ctx)
    assert sorted(os.listdir(tmp_path)) == ["tiny_ctx.epctx", "tiny_ctx.onnx"]
    sess = epctx.InferenceSession(ctx)
    origin = sess.get_session_origin()
    assert origin.from_context_blob and origin.original_model_path == ""
    assert sess.get_modelmeta().custom_metadata_map["epctx.original_model"] == ""
    assert sess.get_modelmeta().graph_name == "tiny_graph"
    assert [i.shape for i in sess.get_inputs()] == [["batch", 4], [None]]
    run_tiny(sess)


def test_compile_to_bytes_embedded(tiny_model, tmp_path):
    data = epctx.ModelCompiler(epctx.SessionOptions(), tiny_model,
                               embed_compiled_data_into_model=True).compile_to_bytes()
    assert isinstance(data, bytes) and os.listdir(tmp_path) == ["tiny.onnx"]
    sess = epctx.InferenceSession(data)
    assert sess.get_session_origin().from_context_blob
    run_tiny(sess)


def test_compile_to_bytes_writes_the_blob_beside_the_context_file_path(tiny_model, tmp_path):
    so = epctx.SessionOptions()
    target = tmp_path / "saved" / "tiny_ctx.onnx"
    target.parent.mkdir()
    so.add_session_config_entry("ep.context_file_path", str(target))
    data = epctx.ModelCompiler(so, tiny_model).compile_to_bytes()
    assert os.listdir(target.parent) == ["tiny_ctx.epctx"]
    target.write_bytes(data)
    sess = epctx.InferenceSession(str(target))
    assert sess.get_session_origin().from_context_blob
    run_tiny(sess)


def test_compile_to_stream(tiny_model):
    chunks = []
    epctx.ModelCompiler(epctx.SessionOptions(), tiny_model, True).compile_to_stream(chunks.append)
    assert len(chunks) == 1
    run_tiny(epctx.InferenceSession(b"".join(chunks)))


def test_compile_errors(tiny_model, tmp_path):
    so = epctx.SessionOptions()
    with pytest.raises(epctx.InvalidArgument) as e:
        epctx.ModelCompiler(so, tiny_model).compile_to_bytes()
    assert str(e.value) == (
        "compiling to bytes writes the blob beside the context model: set ep.context_file_path "
        "to where the context model will be saved, or ep.context_embed_mode=1 to put the blob "
        "inside it")
    with pytest.raises(epctx.InvalidArgument, match="output_model_path is required"):
        epctx.ModelCompiler(so, tiny_model_bytes()).compile_to_file()
    missing = str(tmp_path / "absent.onnx")
    with pytest.raises(epctx.NotFound) as e:
        epctx.ModelCompiler(so, missing).compile_to_file(str(tmp_path / "a_ctx.onnx"))
    assert missing in str(e.value)
    with pytest.raises(epctx.InvalidArgument, match="not an ONNX model"):
        epctx.ModelCompiler(so, b"\x01\x02junk").compile_to_file(str(tmp_path / "j_ctx.onnx"))
    with pytest.raises(epctx.InvalidArgument, match="the context model path names a directory"):
        epctx.ModelCompiler(so, tiny_model).compile_to_file(str(tmp_path) + "/")
    shared = epctx.SessionOptions()
    shared.add_session_config_entry("ep.share_ep_contexts", "1")
    with pytest.raises(epctx.InvalidArgument, match="cannot be combined with ep.share_ep_contexts"):
        epctx.ModelCompiler(shared, tiny_model, True).compile_to_file(str(tmp_path / "s_ctx.onnx"))
    with pytest.raises(epctx.Unsupported, match="external initializer files"):
        epctx.ModelCompiler(so, tiny_model, False, str(tmp_path / "w.bin"))
    with pytest.raises(epctx.Unsupported, match="no compile flags"):
        epctx.ModelCompiler(so, tiny_model, flags=1)
    with pytest.raises(epctx.Unsupported, match="always optimizes"):
        epctx.ModelCompiler(so, tiny_model, graph_optimization_level=99)
    with pytest.raises(TypeError, match="Unable to load from type"):
        epctx.ModelCompiler(so, 3.5)
    assert sorted(os.listdir(tmp_path)) == ["tiny.onnx"]  # nothing written by a failure


def test_unsupported_operator_is_reported():
    # The compiler packs what it does not know; binding the program to kernels refuses it.
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], domain="org.nowhere")],
                              "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("org.nowhere", 1)])
    with pytest.raises(epctx.Unsupported) as e:
        epctx.InferenceSession(model.SerializeToString())
    assert str(e.value) == "operator org.nowhere.NoSuchOp (opset 1) is not supported (node 'NoSuchOp_0')"
    assert isinstance(e.value, NotImplementedError)


def save_matmul_with_external_data(path, w, location):
    """y = x @ w for x of [1, 4], with w in the external data file `location` beside `path`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path, save_as_external_data=True, location=location, size_threshold=0)


def test_changed_external_data_makes_the_blob_stale(tmp_path):
    """The context model records the original's external data files too: a data file rewritten
    after the compile makes the blob stale (its weights were the old ones), as a rewritten model
    file does; a deleted one leaves the blob to serve."""
    w = np.arange(16, dtype=np.float32).reshape(4, 4)
    original = str(tmp_path / "m.onnx")
    save_matmul_with_external_data(original, w, "m.onnx.data")
    ctx = str(tmp_path / "m_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), original).compile_to_file(ctx)
    x = np.ones((1, 4), np.float32)
    sess = epctx.InferenceSession(ctx)
    assert sess.get_session_origin().from_context_blob
    assert np.array_equal(sess.run(None, {"x": x})[0], x @ w)

    data = str(tmp_path / "m.onnx.data")
    before = os.stat(data)
    (2 * w).tofile(data)  # same size, new weights
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    sess = epctx.InferenceSession(ctx)
    origin = sess.get_session_origin()
    assert not origin.from_context_blob
    assert origin.fallback_reason == (
        f"Stale: external data '{data}' of the original model '{original}' changed since it was "
        "compiled (modified after compilation)")
    assert np.array_equal(sess.run(None, {"x": x})[0], x @ (2 * w))
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.fallback", "deny")
    with pytest.raises(epctx.Stale):
        epctx.InferenceSession(ctx, so)

    os.remove(data)
    sess = epctx.InferenceSession(ctx)
    assert sess.get_session_origin().from_context_blob
    assert np.array_equal(sess.run(None, {"x": x})[0], x @ w)


def test_session_of_bytes_finds_external_data_in_the_given_folder(tmp_path):
    """ONNX Runtime's session.model_external_initializers_file_folder_path serves a session of a
    model given as bytes, as it serves ModelCompiler (the error named the key, which sessions
    then ignored)."""
    w = np.arange(16, dtype=np.float32).reshape(4, 4)
    path = tmp_path / "e.onnx"
    save_matmul_with_external_data(str(path), w, "e.data")
    with pytest.raises(epctx.InvalidArgument, match="session.model_external_initializers"):
        epctx.InferenceSession(path.read_bytes())
    so = epctx.SessionOptions()
    so.add_session_config_entry("session.model_external_initializers_file_folder_path",
                                str(tmp_path))
    x = np.ones((1, 4), np.float32)
    sess = epctx.InferenceSession(path.read_bytes(), so)
    assert np.array_equal(sess.run(None, {"x": x})[0], x @ w)
