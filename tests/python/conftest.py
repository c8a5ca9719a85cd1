"""Fixtures of the Python API tests: the exported torchvision models with PyTorch's outputs
(tests/models/export_torchvision.py), small ONNX models built here, and the ORT-style compile of
the two ResNet-18 heads into one shared blob."""

import os
import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import epctx

# The tolerances of the C++ end-to-end tests: relative to each element and to max |reference|.
RTOL = 1e-4


def models_dir():
    path = os.environ.get("EPCTX_TEST_MODELS_DIR", "")
    if not path or not os.path.isdir(path):
        pytest.fail(f"EPCTX_TEST_MODELS_DIR ({path!r}) is not a folder of exported test models; "
                    "run tests/models/export_torchvision.py")
    return path


def model_path(name):
    path = os.path.join(models_dir(), name + ".onnx")
    if not os.path.isfile(path):
        pytest.fail(f"test model {path} is missing; run tests/models/export_torchvision.py")
    return path


def reference(name):
    """(input, PyTorch's output) saved next to the model."""
    x = np.load(os.path.join(models_dir(), name + ".input.npy"))
    y = np.load(os.path.join(models_dir(), name + ".output.npy"))
    assert x.dtype == np.float32 and y.dtype == np.float32
    assert np.abs(y).max() > 0, "the reference output is all zeros"
    return x, y


def assert_matches_pytorch(actual, expected):
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=RTOL * scale)


def share_compile(models, out_dir, sess_options=None):
    """ONNX Runtime's recommended loop: one ModelCompiler per model with ep.share_ep_contexts,
    and ep.stop_share_ep_contexts on the last one. Returns the context model paths."""
    so = sess_options or epctx.SessionOptions()
    so.add_session_config_entry("ep.share_ep_contexts", "1")
    outputs = []
    for i, model in enumerate(models):
        if i == len(models) - 1:
            so.add_session_config_entry("ep.stop_share_ep_contexts", "1")
        out = os.path.join(out_dir, os.path.basename(model).replace(".onnx", "_ctx.onnx"))
        epctx.ModelCompiler(so, model).compile_to_file(out)
        outputs.append(out)
    return outputs


@pytest.fixture(scope="session")
def shared_pair(tmp_path_factory):
    """The two heads over one trunk, compiled by the share/stop-share loop."""
    out = tmp_path_factory.mktemp("shared")
    ctx = share_compile([model_path("resnet18_cls"), model_path("resnet18_reg")], str(out))
    return out, ctx


@pytest.fixture(scope="session")
def cls_context(tmp_path_factory):
    """resnet18_cls and its context model side by side in a folder of their own (so tests may
    damage them)."""
    out = tmp_path_factory.mktemp("cls")
    original = shutil.copy(model_path("resnet18_cls"), out)
    ctx = str(out / "resnet18_cls_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), original).compile_to_file(ctx)
    return out, original, ctx


def tiny_model_bytes():
    """y = Relu(x) with x float [batch, 4] (batch symbolic), and n = Identity(k) with k int64 of
    one unnamed open dim; metadata fields set, to check what sessions report."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [None])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    n = helper.make_tensor_value_info("n", TensorProto.INT64, [None])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Identity", ["k"], ["n"])],
        "tiny_graph", [x, k], [y, n], doc_string="the graph's doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="epctx-tests", producer_version="1.2",
                              domain="org.epctx.test", model_version=7, doc_string="a tiny model")
    helper.set_model_props(model, {"author": "tests", "purpose": "metadata"})
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


@pytest.fixture
def tiny_model(tmp_path):
    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_model_bytes())
    return str(path)
