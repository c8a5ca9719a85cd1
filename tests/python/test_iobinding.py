"""OrtValue and IOBinding as onnxruntime's Python API has them. The decode loops below are
written against onnxruntime's documented API (onnxruntime_inference_collection.py, and the
GroupQueryAttention tests' shared past/present buffer) and take the module as a parameter: they
run unchanged with `import epctx` in its place. The GQA graphs are checked against a NumPy
reference of the attention and against plain runs; the shared buffer against the bytes each run
copies (the profile's output_bytes_copied) and the rows it leaves alone."""

import gc
import json

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper

import epctx

HEADS, KV_HEADS, HEAD = 4, 2, 16
MAX_LEN = 12
LAYERS = 2


# ---- the loops, as an onnxruntime user writes them (`ort` is onnxruntime or epctx) ----

def decode_shared_buffer(ort, model, steps, query, key, value, layers, max_len, **session_kw):
    """GroupQueryAttention's shared past/present buffer: past_key_i and present_key_i bound to
    one OrtValue of max_len rows, updated in place by each run."""
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"], **session_kw)
    shape = [1, KV_HEADS, max_len, HEAD]
    caches = {}
    for i in range(layers):
        for kind in ("key", "value"):
            caches[f"{kind}_{i}"] = ort.OrtValue.ortvalue_from_numpy(np.zeros(shape, np.float32))
    binding = sess.io_binding()
    outputs = []
    for t in range(steps):
        binding.bind_cpu_input("query", query[t])
        binding.bind_cpu_input("key", key[t])
        binding.bind_cpu_input("value", value[t])
        binding.bind_cpu_input("seqlens_k", np.array([t], np.int32))
        binding.bind_cpu_input("total_sequence_length", np.array([t + 1], np.int32))
        for i in range(layers):
            for kind in ("key", "value"):
                cache = caches[f"{kind}_{i}"]
                binding.bind_input(f"past_{kind}_{i}", "cpu", 0, np.float32, cache.shape(),
                                   cache.data_ptr())
                binding.bind_ortvalue_output(f"present_{kind}_{i}", cache)
        binding.bind_output("output")
        binding.synchronize_inputs()
        sess.run_with_iobinding(binding)
        binding.synchronize_outputs()
        outputs.append(binding.copy_outputs_to_cpu()[-1])
    return outputs, caches


def decode_presents_as_pasts(ort, model, steps, query, key, value, layers):
    """The classic loop: each run allocates its presents, which go back in as the next run's
    pasts (OrtValues, no copy)."""
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    binding = sess.io_binding()
    pasts = {}
    for i in range(layers):
        for kind in ("key", "value"):
            empty = np.zeros([1, KV_HEADS, 0, HEAD], np.float32)
            pasts[f"past_{kind}_{i}"] = ort.OrtValue.ortvalue_from_numpy(empty)
    outputs = []
    for t in range(steps):
        binding.clear_binding_inputs()
        binding.clear_binding_outputs()
        binding.bind_cpu_input("query", query[t])
        binding.bind_cpu_input("key", key[t])
        binding.bind_cpu_input("value", value[t])
        binding.bind_cpu_input("seqlens_k", np.array([t], np.int32))
        binding.bind_cpu_input("total_sequence_length", np.array([t + 1], np.int32))
        for name, past in pasts.items():
            binding.bind_ortvalue_input(name, past)
        binding.bind_output("output")
        for i in range(layers):
            binding.bind_output(f"present_key_{i}")
            binding.bind_output(f"present_value_{i}")
        sess.run_with_iobinding(binding)
        values = binding.get_outputs()
        outputs.append(values[0].numpy())
        for i in range(layers):
            pasts[f"past_key_{i}"] = values[1 + 2 * i]
            pasts[f"past_value_{i}"] = values[2 + 2 * i]
    return outputs, pasts


# ---- the graph and its reference ----

def gqa_decoder(layers, past_dim="past_len", present_dim="total_len"):
    """`layers` GroupQueryAttention nodes in a chain (each one's output is the next one's
    query), sharing key and value, each with its own past and present."""
    inputs = [helper.make_tensor_value_info("query", TP.FLOAT, [1, 1, HEADS * HEAD]),
              helper.make_tensor_value_info("key", TP.FLOAT, [1, 1, KV_HEADS * HEAD]),
              helper.make_tensor_value_info("value", TP.FLOAT, [1, 1, KV_HEADS * HEAD]),
              helper.make_tensor_value_info("seqlens_k", TP.INT32, [1]),
              helper.make_tensor_value_info("total_sequence_length", TP.INT32, [])]
    outputs, nodes = [], []
    query = "query"
    for i in range(layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_{kind}_{i}", TP.FLOAT,
                                                        [1, KV_HEADS, past_dim, HEAD]))
            outputs.append(helper.make_tensor_value_info(f"present_{kind}_{i}", TP.FLOAT,
                                                         [1, KV_HEADS, present_dim, HEAD]))
        out = "output" if i == layers - 1 else f"hidden_{i}"
        nodes.append(helper.make_node(
            "GroupQueryAttention",
            [query, "key", "value", f"past_key_{i}", f"past_value_{i}", "seqlens_k",
             "total_sequence_length"],
            [out, f"present_key_{i}", f"present_value_{i}"], name=f"gqa_{i}",
            domain="com.microsoft", num_heads=HEADS, kv_num_heads=KV_HEADS))
        query = out
    outputs.insert(0, helper.make_tensor_value_info("output", TP.FLOAT, [1, 1, HEADS * HEAD]))
    graph = helper.make_graph(nodes, "gqa_decoder", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


def reference_decode(steps, query, key, value, layers):
    """Causal attention of each step's query over the keys so far, layer after layer."""
    keys = [[] for _ in range(layers)]
    group = HEADS // KV_HEADS
    outs = []
    for t in range(steps):
        q = query[t].reshape(HEADS, HEAD).astype(np.float64)
        k_new = key[t].reshape(KV_HEADS, HEAD).astype(np.float64)
        v_new = value[t].reshape(KV_HEADS, HEAD).astype(np.float64)
        for i in range(layers):
            keys[i].append((k_new, v_new))
            k = np.stack([kv[0] for kv in keys[i]], axis=1)  # [kv heads, t + 1, head]
            v = np.stack([kv[1] for kv in keys[i]], axis=1)
            out = np.empty((HEADS, HEAD))
            for h in range(HEADS):
                scores = k[h // group] @ q[h] / np.sqrt(HEAD)
                weights = np.exp(scores - scores.max())
                out[h] = (weights / weights.sum()) @ v[h // group]
            q = out
        outs.append(q.reshape(1, 1, HEADS * HEAD).astype(np.float32))
    return outs


def random_steps(steps, seed=7):
    rng = np.random.default_rng(seed)
    q = [rng.standard_normal((1, 1, HEADS * HEAD)).astype(np.float32) for _ in range(steps)]
    k = [rng.standard_normal((1, 1, KV_HEADS * HEAD)).astype(np.float32) for _ in range(steps)]
    v = [rng.standard_normal((1, 1, KV_HEADS * HEAD)).astype(np.float32) for _ in range(steps)]
    return q, k, v


def profile_bytes_copied(path):
    with open(path) as f:
        events = json.load(f)
    return [int(e["args"]["output_bytes_copied"]) for e in events if e["name"] == "model_run"]


# ---- tests ----

def test_shared_buffer_decode_loop_matches_the_reference_and_copies_nothing(tmp_path):
    steps = 10
    q, k, v = random_steps(steps)
    expected = reference_decode(steps, q, k, v, LAYERS)
    assert np.abs(expected[-1]).max() > 0.05, "the reference computes nothing"
    so = epctx.SessionOptions()
    so.add_session_config_entry("epctx.profile_file", str(tmp_path / "profile.json"))
    outputs, caches = decode_shared_buffer(epctx, gqa_decoder(LAYERS), steps, q, k, v, LAYERS,
                                           MAX_LEN, sess_options=so)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # The buffers hold every step's key rows, in place; the rows after them stay zeros.
    key0 = caches["key_0"].numpy()
    for t in range(steps):
        np.testing.assert_array_equal(key0[0, :, t, :], k[t].reshape(KV_HEADS, HEAD))
    assert not key0[0, :, steps:, :].any()
    gc.collect()  # the session (inside the loop function) writes its profile when it goes
    assert profile_bytes_copied(tmp_path / "profile.json") == [0] * steps


def test_presents_fed_back_as_pasts_match_the_shared_buffer(tmp_path):
    steps = 7
    q, k, v = random_steps(steps, seed=3)
    shared, _ = decode_shared_buffer(epctx, gqa_decoder(LAYERS), steps, q, k, v, LAYERS, MAX_LEN)
    fed_back, pasts = decode_presents_as_pasts(epctx, gqa_decoder(LAYERS), steps, q, k, v, LAYERS)
    for a, b in zip(shared, fed_back):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert pasts["past_key_1"].shape() == [1, KV_HEADS, steps, HEAD]
    assert pasts["past_key_1"].data_type() == "tensor(float)"


def test_run_with_ort_values_and_ortvalue_feeds():
    sess = epctx.InferenceSession(gqa_decoder(1), providers=["CPUExecutionProvider"])
    q, k, v = random_steps(1)
    past = np.zeros([1, KV_HEADS, 0, HEAD], np.float32)
    feed = {"query": q[0], "key": k[0], "value": v[0], "seqlens_k": np.array([0], np.int32),
            "total_sequence_length": np.array(1, np.int32), "past_key_0": past,
            "past_value_0": past}
    plain = sess.run(None, feed)
    ort_feed = {name: epctx.OrtValue.ortvalue_from_numpy(a) for name, a in feed.items()}
    values = sess.run_with_ort_values(["output", "present_key_0"], ort_feed)
    assert [type(x) for x in values] == [epctx.OrtValue, epctx.OrtValue]
    np.testing.assert_array_equal(values[0].numpy(), plain[0])
    np.testing.assert_array_equal(values[1].numpy(), plain[1])
    # run() takes OrtValues in its feed too.
    again = sess.run(["output"], ort_feed)
    np.testing.assert_array_equal(again[0], plain[0])


# ---- OrtValue on its own ----

def test_ortvalue_from_numpy_is_a_view_that_keeps_the_array_alive():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = epctx.OrtValue.ortvalue_from_numpy(a)
    assert value.shape() == [2, 3]
    assert value.data_type() == "tensor(float)"
    assert value.element_type() == TP.FLOAT
    assert value.is_tensor() and value.has_value() and not value.is_tensor_sequence()
    assert value.device_name() == "cpu"
    assert value.data_ptr() == a.ctypes.data
    view = value.numpy()
    assert np.shares_memory(view, a)
    a[0, 0] = 42.0
    assert view[0, 0] == 42.0
    del a
    assert value.numpy()[0, 0] == 42.0  # the OrtValue keeps the array
    value.update_inplace(np.full((2, 3), 5.0, np.float32))
    assert (view == 5.0).all()


def test_ortvalue_from_shape_and_type():
    value = epctx.OrtValue.ortvalue_from_shape_and_type([2, 4], np.int64)
    assert value.shape() == [2, 4] and value.data_type() == "tensor(int64)"
    assert value.element_type() == TP.INT64
    assert (value.numpy() == 0).all()
    by_onnx_type = epctx.OrtValue.ortvalue_from_shape_and_type((3,), TP.FLOAT16)
    assert by_onnx_type.numpy().dtype == np.float16
    arr = by_onnx_type.numpy()
    arr[:] = 1.5
    assert (by_onnx_type.numpy() == 1.5).all()  # numpy() views the same memory


def test_ortvalue_errors():
    with pytest.raises(epctx.Unsupported, match="device_type 'cuda' is not supported") as error:
        epctx.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32), "cuda", 0)
    # Raised by the package's Python code, it has its code like the engine's errors.
    assert error.value.code == "Unsupported"
    with pytest.raises(epctx.InvalidArgument, match="is not a numeric type epctx takes"):
        epctx.OrtValue.ortvalue_from_shape_and_type([2], np.str_)
    with pytest.raises(epctx.InvalidArgument, match="element_type 99 is not an ONNX tensor type"):
        epctx.OrtValue.ortvalue_from_shape_and_type([2], 99)
    with pytest.raises(ValueError, match="`element_type` and `shape` are to be provided"):
        epctx.OrtValue.ortvalue_from_shape_and_type(None, np.float32)
    small = epctx.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32))
    with pytest.raises(epctx.InvalidArgument, match=r"the array is float32 \[3\], the OrtValue "
                                                     r"float32 \[2\]"):
        small.update_inplace(np.zeros(3, np.float32))


# ---- IOBinding's errors and bookkeeping ----

def relu_model():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
        [helper.make_tensor_value_info("x", TP.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TP.FLOAT, ["n", 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.fixture(scope="module")
def relu_session():
    return epctx.InferenceSession(relu_model())


def test_bound_output_memory_is_the_callers(relu_session):
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    y = np.full((2, 3), -9.0, np.float32)
    binding = relu_session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_output("y", "cpu", 0, np.float32, list(y.shape), y.ctypes.data)
    relu_session.run_with_iobinding(binding)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    (out,) = binding.get_outputs()
    assert out.data_ptr() == y.ctypes.data
    (copy,) = binding.copy_outputs_to_cpu()
    assert not np.shares_memory(copy, y)
    np.testing.assert_array_equal(copy, y)


def test_outputs_bound_to_a_device_get_new_memory_every_run(relu_session):
    binding = relu_session.io_binding()
    binding.bind_cpu_input("x", np.ones((1, 3), np.float32))
    binding.bind_output("y")
    assert not binding.get_outputs()[0].has_value()  # nothing run yet
    relu_session.run_with_iobinding(binding)
    first = binding.get_outputs()[0]
    binding.bind_cpu_input("x", np.full((2, 3), 2.0, np.float32))  # another shape is fine
    relu_session.run_with_iobinding(binding)
    second = binding.get_outputs()[0]
    np.testing.assert_array_equal(first.numpy(), np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(second.numpy(), np.full((2, 3), 2.0, np.float32))


def test_iobinding_errors(relu_session):
    binding = relu_session.io_binding()
    x = np.ones((2, 3), np.float32)
    with pytest.raises(epctx.Unsupported, match="device_type 'cuda' is not supported"):
        binding.bind_input("x", "cuda", 0, np.float32, [2, 3], x.ctypes.data)
    with pytest.raises(epctx.Unsupported, match="device_id 1 is not supported"):
        binding.bind_output("y", "cpu", 1)
    with pytest.raises(ValueError, match="`element_type` and `shape` are to be provided"):
        binding.bind_output("y", "cpu", 0, None, None, x.ctypes.data)
    # A name the model does not have is refused when bound, as onnxruntime does.
    with pytest.raises(epctx.InvalidArgument,
                       match=r"^bind_output\('z'\): the model has no output 'z'; its outputs are: y$"):
        binding.bind_output("z")
    with pytest.raises(epctx.InvalidArgument, match=r"^bind_input\('w'\): the model has no input 'w'"):
        binding.bind_cpu_input("w", x)
    with pytest.raises(epctx.InvalidArgument, match=r"^bind_input\('w'\): the model has no input 'w'"):
        binding.bind_input("w", "cpu", 0, np.float32, [2, 3], x.ctypes.data)
    with pytest.raises(epctx.InvalidArgument, match=r"^bind_output\('z'\): the model has no output"):
        binding.bind_ortvalue_output("z", epctx.OrtValue.ortvalue_from_numpy(x))
    binding.bind_cpu_input("x", x)
    small = np.zeros((1, 3), np.float32)
    binding.bind_ortvalue_output("y", epctx.OrtValue.ortvalue_from_numpy(small))
    with pytest.raises(epctx.InvalidArgument,
                       match=r"Relu node 'relu': output 'y' is bound to float32 \[1,3\], but "
                             r"the node makes float32 \[2,3\]"):
        relu_session.run_with_iobinding(binding)
    read_only = np.zeros((2, 3), np.float32)
    read_only.setflags(write=False)
    binding.bind_ortvalue_output("y", epctx.OrtValue.ortvalue_from_numpy(read_only))
    with pytest.raises(epctx.InvalidArgument, match="read-only array"):
        relu_session.run_with_iobinding(binding)
    binding.clear_binding_inputs()
    binding.bind_output("y")
    with pytest.raises(epctx.InvalidArgument, match=r"missing input 'x'"):
        relu_session.run_with_iobinding(binding)
    with pytest.raises(TypeError, match="run_options must be an epctx.RunOptions or None, got object"):
        relu_session.run_with_iobinding(binding, run_options=object())
    other = epctx.InferenceSession(relu_model())
    with pytest.raises(ValueError, match="IOBinding made by this session"):
        other.run_with_iobinding(binding)


def test_output_bound_over_its_input_is_safe(relu_session):
    """Relu does not write in place: y is computed apart and copied over x after the run."""
    x = np.array([[-1, 2, -3]], np.float32)
    binding = relu_session.io_binding()
    value = epctx.OrtValue.ortvalue_from_numpy(x)
    binding.bind_ortvalue_input("x", value)
    binding.bind_ortvalue_output("y", value)
    relu_session.run_with_iobinding(binding)
    np.testing.assert_array_equal(x, [[0, 2, 0]])
