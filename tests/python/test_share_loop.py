"""The ORT-style share/stop-share loop: one shared blob for two models with one trunk, the same
blob the command line writes, and sessions from it that match PyTorch."""

import os
import subprocess

import numpy as np

import epctx
from conftest import assert_matches_pytorch, model_path, reference


def test_loop_writes_two_context_models_and_one_shared_blob(shared_pair):
    out, ctx = shared_pair
    assert sorted(os.listdir(out)) == [
        "resnet18_cls_ctx.onnx", "resnet18_cls_shared.epctx", "resnet18_reg_ctx.onnx"]
    assert [os.path.basename(p) for p in ctx] == ["resnet18_cls_ctx.onnx", "resnet18_reg_ctx.onnx"]


def test_loop_blob_equals_the_command_lines(shared_pair, tmp_path):
    out, _ = shared_pair
    cli = os.environ["EPCTX_CLI"]
    subprocess.run([cli, "compile", "-m", model_path("resnet18_cls"), "-m",
                    model_path("resnet18_reg"), "--output-dir", str(tmp_path)],
                   check=True, capture_output=True)
    ours = (out / "resnet18_cls_shared.epctx").read_bytes()
    theirs = (tmp_path / "resnet18_cls_shared.epctx").read_bytes()
    assert len(ours) == len(theirs) and ours == theirs


def test_shared_trunk_is_stored_once(shared_pair, tmp_path):
    out, _ = shared_pair
    alone = str(tmp_path / "resnet18_cls_ctx.onnx")
    epctx.ModelCompiler(epctx.SessionOptions(), model_path("resnet18_cls")).compile_to_file(alone)
    single = os.path.getsize(tmp_path / "resnet18_cls_ctx.epctx")
    shared = os.path.getsize(out / "resnet18_cls_shared.epctx")
    # The reg head adds 512x4 weights; a second trunk would add ~45 MB.
    assert single < shared < single * 1.05


def test_sessions_run_from_the_shared_blob_and_match_pytorch(shared_pair):
    out, ctx = shared_pair
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.fallback", "deny")
    for path, name in zip(ctx, ["resnet18_cls", "resnet18_reg"]):
        sess = epctx.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        origin = sess.get_session_origin()
        assert origin.from_context_blob
        assert origin.fallback_reason == ""
        assert os.path.samefile(origin.blob_path, out / "resnet18_cls_shared.epctx")
        x, y = reference(name)
        (got,) = sess.run(None, {"input": x})
        assert_matches_pytorch(got, y)


def test_the_two_heads_differ(shared_pair):
    # Guards the test above against comparing one model with itself.
    _, y_cls = reference("resnet18_cls")
    _, y_reg = reference("resnet18_reg")
    assert y_cls.shape != y_reg.shape
    assert not np.allclose(y_cls[0, :4], y_reg[0])
