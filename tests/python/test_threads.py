"""Several Python threads running one session at once, with the GIL released by the engine."""

import threading

import numpy as np

import epctx
from conftest import assert_matches_pytorch, model_path, reference


def test_threads_share_one_session(cls_context):
    sess = epctx.InferenceSession(cls_context[2])
    x, y = reference("resnet18_cls")
    rng = np.random.default_rng(7)
    feeds = [x] + [rng.standard_normal(x.shape).astype(np.float32) for _ in range(3)]
    expected = [sess.run(None, {"input": f})[0] for f in feeds]
    assert_matches_pytorch(expected[0], y)
    assert not np.allclose(expected[1], expected[2])  # the feeds give different answers

    results = {}
    errors = []

    def worker(t):
        try:
            for r in range(3):
                i = (t + r) % len(feeds)
                results[(t, r)] = (i, sess.run(None, {"input": feeds[i]})[0])
        except Exception as e:  # reported below; a thread's exception is otherwise lost
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(results) == 12
    for i, got in results.values():
        np.testing.assert_allclose(got, expected[i], rtol=1e-6, atol=1e-6)


def test_engine_calls_release_the_gil(tmp_path, tiny_model):
    epctx.InferenceSession(model_path("resnet18_reg"))
    assert epctx._epctx._last_engine_call_held_gil() is False
    sess = epctx.InferenceSession(tiny_model)
    x = np.ones((1, 4), np.float32)
    k = np.ones(1, np.int64)
    sess.run(None, {"x": x, "k": k})
    assert epctx._epctx._last_engine_call_held_gil() is False
    epctx.ModelCompiler(epctx.SessionOptions(), tiny_model).compile_to_file(str(tmp_path / "t_ctx.onnx"))
    assert epctx._epctx._last_engine_call_held_gil() is False
    epctx.ModelCompiler(epctx.SessionOptions(), tiny_model, True).compile_to_bytes()
    assert epctx._epctx._last_engine_call_held_gil() is False


def test_sessions_in_threads_while_python_runs(tiny_model):
    # Two sessions of one model created and run from threads at once.
    out = {}

    def worker(t):
        s = epctx.InferenceSession(tiny_model)
        x = np.full((2, 4), t - 1.5, np.float32)
        out[t] = s.run(["y"], {"x": x, "k": np.arange(t + 1, dtype=np.int64)})[0]

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(3):
        assert np.array_equal(out[t], np.maximum(np.full((2, 4), t - 1.5, np.float32), 0))
