"""onnxruntime's SessionOptions attributes, RunOptions and profiling, as scripts written for
onnxruntime use them."""

import copy
import json
import os
import re
import threading
import time

import numpy as np
import onnx.parser
import pytest

import epctx
from conftest import assert_matches_pytorch, reference

# A Loop that counts up to its trip count m (the model of tests/e2e/control_flow_test.cc).
ENDLESS_MODEL = """
<ir_version: 8, opset_import: ["" : 16]>
agraph (int64 m, bool go, float[1] start) => (float[1] count)
<float[1] one = {1.0}>
{
  count = Loop(m, go, start) <
    body = count_up (int64 i, bool c, float[1] n) => (bool c_out, float[1] n_out) {
      c_out = Identity(c)
      n_out = Add(n, one)
    }
  >
}
"""


def endless_feed(m):
    return {"m": np.array(m, np.int64), "go": np.array(True), "start": np.zeros(1, np.float32)}


@pytest.fixture
def endless_model(tmp_path):
    path = tmp_path / "endless.onnx"
    path.write_bytes(onnx.parser.parse_model(ENDLESS_MODEL).SerializeToString())
    return str(path)


def test_a_script_written_for_onnxruntime_runs_unchanged(cls_context):
    _, _, ctx = cls_context
    x, expected = reference("resnet18_cls")
    so = epctx.SessionOptions()
    so.graph_optimization_level = epctx.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = epctx.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.enable_cpu_mem_arena = False
    so.enable_mem_pattern = False
    sess = epctx.InferenceSession(ctx, sess_options=so, providers=["CPUExecutionProvider"])
    assert sess.get_session_origin().from_context_blob
    ro = epctx.RunOptions()
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x}, ro)
    assert_matches_pytorch(y, expected)
    # The attributes change nothing: the same outputs, bit for bit, as with the defaults.
    (plain,) = epctx.InferenceSession(ctx).run(None, {"input": x})
    np.testing.assert_array_equal(y, plain)
    kept = sess.get_session_options()
    assert kept.graph_optimization_level == epctx.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert (kept.inter_op_num_threads, kept.enable_cpu_mem_arena, kept.enable_mem_pattern) == (1, False, False)


def test_session_options_attributes():
    so = epctx.SessionOptions()
    assert so.graph_optimization_level == epctx.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert int(epctx.GraphOptimizationLevel.ORT_ENABLE_ALL) == 99
    assert int(epctx.GraphOptimizationLevel.ORT_ENABLE_LAYOUT) == 3
    assert so.execution_mode == epctx.ExecutionMode.ORT_SEQUENTIAL
    assert (so.inter_op_num_threads, so.enable_cpu_mem_arena, so.enable_mem_pattern) == (0, True, True)
    assert (so.enable_profiling, so.profile_file_prefix) == (False, "epctx_profile")
    with pytest.raises(epctx.Unsupported) as e:
        so.execution_mode = epctx.ExecutionMode.ORT_PARALLEL
    assert str(e.value) == ("execution_mode ORT_PARALLEL is not supported: epctx runs nodes one at a "
                            "time in program order, its kernels on intra_op_num_threads threads")
    assert so.execution_mode == epctx.ExecutionMode.ORT_SEQUENTIAL
    with pytest.raises(epctx.InvalidArgument) as e:
        so.inter_op_num_threads = -1
    assert str(e.value) == "inter_op_num_threads must be >= 0, got -1"
    with pytest.raises(TypeError):
        so.graph_optimization_level = 99  # onnxruntime takes only the enum too
    # What epctx cannot honour is refused, saying what to use instead; the rest is an
    # AttributeError, never a silently kept value.
    with pytest.raises(epctx.Unsupported) as e:
        so.log_severity_level = 3
    assert str(e.value) == ("SessionOptions.log_severity_level is not supported: epctx has one log level "
                            "per process: set it with epctx.set_default_logger_severity(level)")
    with pytest.raises(epctx.Unsupported, match="^SessionOptions.log_severity_level is not supported"):
        so.log_severity_level
    with pytest.raises(epctx.Unsupported) as e:
        so.optimized_model_filepath = "optimized.onnx"
    assert str(e.value) == ("SessionOptions.optimized_model_filepath is not supported: epctx's compiled "
                            "form is a context model and its blob: write them with epctx.ModelCompiler "
                            "(or `epctx compile`)")
    with pytest.raises(AttributeError):
        so.register_custom_ops_library("libcustom.so")
    so.enable_profiling = True
    so.profile_file_prefix = "run1"
    so.intra_op_num_threads = 2
    assert repr(so) == "SessionOptions(session.intra_op_num_threads=2, enable_profiling=True, profile_file_prefix=run1)"
    for copied in (copy.copy(so), copy.deepcopy(so)):
        assert isinstance(copied, epctx.SessionOptions)
        assert (copied.enable_profiling, copied.profile_file_prefix, copied.intra_op_num_threads) == (True, "run1", 2)
    copied.enable_profiling = False
    assert so.enable_profiling


def test_profiling_writes_onnxruntime_style_file(tiny_model, tmp_path):
    so = epctx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = epctx.InferenceSession(tiny_model, so)
    feed = {"x": np.ones((2, 4), np.float32), "k": np.arange(3, dtype=np.int64)}
    sess.run(None, feed)
    sess.run(None, feed)
    path = sess.end_profiling()
    assert re.fullmatch(re.escape(str(tmp_path / "prof")) + r"_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.json", path)
    events = json.load(open(path))
    assert [e["name"] for e in events if e["cat"] == "Session" and e["name"] == "model_run"] == ["model_run"] * 2
    relu = [e for e in events if e["cat"] == "Node" and e["args"].get("op_name") == "Relu"]
    assert len(relu) == 2 and all(e["dur"] >= 0 for e in relu)
    assert sess.end_profiling() == ""  # written once
    with pytest.raises(epctx.NotFound):  # the options kept are the caller's
        sess.get_session_options().get_session_config_entry("epctx.profile_file")

    # The entry epctx.profile_file names the file itself; without profiling nothing is written.
    so.add_session_config_entry("epctx.profile_file", str(tmp_path / "named.json"))
    named = epctx.InferenceSession(tiny_model, so)
    assert named.end_profiling() == str(tmp_path / "named.json")
    before = sorted(os.listdir(tmp_path))
    assert epctx.InferenceSession(tiny_model).end_profiling() == ""
    assert sorted(os.listdir(tmp_path)) == before


def test_terminate_stops_a_run_in_flight(endless_model):
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.max_loop_iterations", "0")  # only terminate stops it
    sess = epctx.InferenceSession(endless_model, so)
    ro = epctx.RunOptions()
    assert repr(ro) == "RunOptions(terminate=False)"
    outcome = {}

    def run():
        try:
            sess.run(None, endless_feed(np.iinfo(np.int64).max), ro)
            outcome["error"] = None
        except Exception as e:  # noqa: BLE001 - the test inspects it
            outcome["error"] = e

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    time.sleep(0.2)
    assert runner.is_alive()  # an endless loop, stopped only by the flag
    ro.terminate = True
    runner.join(timeout=60)
    assert not runner.is_alive(), "the run did not stop when terminate was set"
    error = outcome["error"]
    assert isinstance(error, epctx.Cancelled) and isinstance(error, epctx.EpctxError)
    assert error.code == "Cancelled"
    # Caught between iterations, or inside the body before one of its nodes (unnamed, they are
    # named by their position: Identity_0, Add_1).
    assert re.fullmatch(r"model 'endless': Loop node 'Loop_0': (Loop 'Loop_0' attribute 'body': )?the run was "
                        r"terminated \(its RunOptions' terminate flag is set\), "
                        r"(in Loop iteration \d+|before (Identity node 'Identity_0'|Add node 'Add_1'))", str(error))

    # A run started with the flag set stops before its first node; cleared, runs go on.
    with pytest.raises(epctx.Cancelled) as e:
        sess.run(None, endless_feed(3), ro)
    assert str(e.value) == ("model 'endless': the run was terminated (its RunOptions' terminate flag "
                            "is set), before Loop node 'Loop_0'")
    with pytest.raises(epctx.Cancelled):
        sess.run_with_ort_values(None, endless_feed(3), ro)
    binding = sess.io_binding()
    for name, value in endless_feed(3).items():
        binding.bind_cpu_input(name, value)
    binding.bind_output("count")
    with pytest.raises(epctx.Cancelled):
        sess.run_with_iobinding(binding, ro)
    ro.terminate = False
    (count,) = sess.run(None, endless_feed(3), ro)
    np.testing.assert_array_equal(count, [3.0])
    sess.run_with_iobinding(binding, ro)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], [3.0])


def test_run_limits_raise_cancelled(endless_model):
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.max_loop_iterations", "5")
    sess = epctx.InferenceSession(endless_model, so)
    np.testing.assert_array_equal(sess.run(None, endless_feed(5))[0], [5.0])
    with pytest.raises(epctx.Cancelled) as e:
        sess.run(None, endless_feed(6))
    assert str(e.value) == ("model 'endless': Loop node 'Loop_0': the loop was stopped after 5 "
                            "iterations, the limit epctx.max_loop_iterations sets")


def test_run_options_type_is_checked(tiny_model):
    sess = epctx.InferenceSession(tiny_model)
    feed = {"x": np.ones((1, 4), np.float32), "k": np.zeros(1, np.int64)}
    with pytest.raises(TypeError) as e:
        sess.run(None, feed, object())
    assert str(e.value) == "run_options must be an epctx.RunOptions or None, got object"
    with pytest.raises(TypeError):
        sess.run_with_ort_values(None, feed, {"terminate": True})
    with pytest.raises(AttributeError):
        epctx.RunOptions().log_severity_level = 3


# Rows of x times a constant matrix; batch and seq are symbolic.
ROWS_MODEL = """
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[batch, seq, 3] x) => (float[batch, seq, 2] y)
<float[3, 2] w = {1.0, -2.0, 0.5, 3.0, -1.5, 0.25}>
{
  y = MatMul(x, w)
}
"""


def test_free_dimension_overrides_fix_the_inputs_shapes(tmp_path):
    path = tmp_path / "rows.onnx"
    path.write_bytes(onnx.parser.parse_model(ROWS_MODEL).SerializeToString())
    so = epctx.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 1)
    so.add_free_dimension_override_by_name("seq", 5)
    assert so.get_session_config_entry("epctx.free_dimension_overrides") == "batch:1,seq:5"
    sess = epctx.InferenceSession(str(path), so)
    assert sess.get_inputs()[0].shape == [1, 5, 3]
    assert sess.get_outputs()[0].shape == [1, 5, 2]
    x = np.arange(15, dtype=np.float32).reshape(1, 5, 3)
    w = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], np.float32)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x @ w, rtol=1e-6)
    with pytest.raises(epctx.InvalidArgument, match=re.escape(
            "input 'x' has shape [1,4,3], expected [1,5,3] (dim 1 differs)")):
        sess.run(None, {"x": x[:, :4]})
    with pytest.raises(epctx.InvalidArgument, match=re.escape(
            "free dimension override 'seq:0' is not NAME:SIZE with a size of 1 or more")):
        so.add_free_dimension_override_by_name("seq", 0)
    with pytest.raises(epctx.InvalidArgument, match="must be non-empty and hold no ','"):
        so.add_free_dimension_override_by_name("batch,seq", 2)
    assert so.get_session_config_entry("epctx.free_dimension_overrides") == "batch:1,seq:5"
    symbolic = epctx.InferenceSession(str(path))
    assert symbolic.get_inputs()[0].shape == ["batch", "seq", 3]
