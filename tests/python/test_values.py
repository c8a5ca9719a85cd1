"""Strings, sequences and optionals through InferenceSession, as onnxruntime passes them: string
inputs as '<U' or object arrays and outputs as object arrays of str, sequences as lists of arrays,
empty optionals as None; their type strings in get_inputs()/get_outputs(); and the errors."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import epctx

FLOAT2 = helper.make_tensor_type_proto(TP.FLOAT, [2])


def session(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "values", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return epctx.InferenceSession(model.SerializeToString())


def int64s(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


@pytest.fixture(scope="module")
def strings_session():
    """y = Identity(s); m = Reshape(s, [2, -1]); u = Squeeze(Unsqueeze(t, 0), 0) on a scalar."""
    return session(
        [helper.make_node("Identity", ["s"], ["y"]),
         helper.make_node("Reshape", ["s", "shape"], ["m"]),
         helper.make_node("Unsqueeze", ["t", "zero"], ["t1"]),
         helper.make_node("Squeeze", ["t1", "zero"], ["u"])],
        [helper.make_tensor_value_info("s", TP.STRING, ["n"]),
         helper.make_tensor_value_info("t", TP.STRING, [])],
        [helper.make_tensor_value_info("y", TP.STRING, ["n"]),
         helper.make_tensor_value_info("m", TP.STRING, [2, None]),
         helper.make_tensor_value_info("u", TP.STRING, [])],
        [int64s("shape", [2, -1]), int64s("zero", [0])])


STRINGS = ["h\u00e9llo", "", "\U0001F600 \u4e2d\u6587", "a\x00b", "tab\there", "\U0010FFFF"]


def test_string_arrays_round_trip_exactly(strings_session):
    for s in (np.array(STRINGS), np.array(STRINGS, dtype=object), np.array(STRINGS, dtype="<U40"),
              np.array(STRINGS).astype(">U12")):
        y, m, u = strings_session.run(None, {"s": s, "t": np.array("scalar \u00df")})
        assert y.dtype == object and y.shape == (6,)
        assert y.tolist() == STRINGS and all(type(v) is str for v in y.tolist())
        assert m.dtype == object and m.tolist() == [STRINGS[:3], STRINGS[3:]]
        assert u.dtype == object and u.shape == () and u[()] == "scalar \u00df"
    # bytes in an object array are taken as they are (valid UTF-8 here, so str comes back).
    (y,) = strings_session.run(["y"], {"s": np.array([b"ab", "\u00e9".encode()], dtype=object),
                                       "t": np.array("")})
    assert y.tolist() == ["ab", "\u00e9"]
    (y,) = strings_session.run(["y"], {"s": np.array([], dtype=str), "t": np.array("")})
    assert y.dtype == object and y.shape == (0,)


def test_string_types_are_described_as_onnxruntime_does(strings_session):
    assert [(i.name, i.type, i.shape) for i in strings_session.get_inputs()] == [
        ("s", "tensor(string)", ["n"]), ("t", "tensor(string)", [])]
    assert [o.type for o in strings_session.get_outputs()] == ["tensor(string)"] * 3


def test_string_input_errors(strings_session):
    t = np.array("")
    with pytest.raises(epctx.InvalidArgument) as e:
        strings_session.run(None, {"s": np.array(["a", 3], dtype=object), "t": t})
    assert str(e.value) == ("input 's' string 1 is int, expected str or bytes (an object array is "
                            "taken as strings)")
    with pytest.raises(epctx.InvalidArgument) as e:
        strings_session.run(None, {"s": np.array(["ok", "\ud800"], dtype=object), "t": t})
    assert str(e.value) == ("input 's' string 1 ('\\ud800') cannot be encoded as UTF-8 (it holds "
                            "a surrogate code point)")
    with pytest.raises(epctx.InvalidArgument) as e:
        strings_session.run(None, {"s": np.array([1.5, 2.5]), "t": t})
    assert str(e.value) == "input 's' has type float64, expected string"
    # A string that is not UTF-8 cannot come back as a str.
    with pytest.raises(epctx.InvalidArgument) as e:
        strings_session.run(["y"], {"s": np.array([b"fine", b"\xff"], dtype=object), "t": t})
    assert str(e.value) == "output 'y' element 1 is not UTF-8, so it cannot be a Python str"
    with pytest.raises(epctx.InvalidArgument) as e:
        strings_session.run(None, {"s": None, "t": t})
    assert str(e.value) == "input 's' is an empty optional, expected a tensor"


@pytest.fixture(scope="module")
def sequence_session():
    """seq = SequenceConstruct(x, x + x, x); second = SequenceAt(items, 1);
    n = SequenceLength(items); words = SequenceConstruct(w, w)."""
    return session(
        [helper.make_node("Add", ["x", "x"], ["x2"]),
         helper.make_node("SequenceConstruct", ["x", "x2", "x"], ["seq"]),
         helper.make_node("SequenceAt", ["items", "one"], ["second"]),
         helper.make_node("SequenceLength", ["items"], ["n"]),
         helper.make_node("SequenceConstruct", ["w", "w"], ["words"])],
        [helper.make_tensor_value_info("x", TP.FLOAT, [2]),
         helper.make_tensor_sequence_value_info("items", TP.INT64, [None]),
         helper.make_tensor_value_info("w", TP.STRING, [None])],
        [helper.make_tensor_sequence_value_info("seq", TP.FLOAT, [2]),
         helper.make_tensor_value_info("second", TP.INT64, [None]),
         helper.make_tensor_value_info("n", TP.INT64, []),
         helper.make_tensor_sequence_value_info("words", TP.STRING, [None])],
        [int64s("one", 1)])


def test_sequences_are_lists_of_arrays(sequence_session):
    x = np.array([1.5, -2], np.float32)
    items = [np.array([1, 2], np.int64), np.array([3, 4, 2**40], np.int64), np.array([], np.int64)]
    seq, second, n, words = sequence_session.run(None, {"x": x, "items": items,
                                                        "w": np.array(["\u00e9", "z"])})
    assert isinstance(seq, list) and len(seq) == 3
    for got, want in zip(seq, [x, 2 * x, x]):
        assert got.dtype == np.float32 and np.array_equal(got, want)
    # Every array owns its memory: the same tensor twice in a sequence is not one buffer twice.
    assert not np.shares_memory(seq[0], seq[2])
    seq[0][...] = 0
    assert np.array_equal(seq[2], x)
    assert second.dtype == np.int64 and second.tolist() == [3, 4, 2**40]
    assert n.shape == () and n == 3
    assert [w.dtype for w in words] == [object, object]
    assert [w.tolist() for w in words] == [["\u00e9", "z"], ["\u00e9", "z"]]
    # A tuple is a sequence too.
    (second,) = sequence_session.run(["second"], {"x": x, "items": tuple(items), "w": np.array([""])})
    assert second.tolist() == [3, 4, 2**40]


def test_sequence_outputs_own_their_memory():
    """A sequence input's elements are views of the caller's arrays during the run; an output
    that passes them on must not hand those views out (they outlived the arrays: garbage, then a
    segfault)."""
    s = session(
        [helper.make_node("Identity", ["items"], ["same"]),
         helper.make_node("SequenceInsert", ["items", "t"], ["grown"]),
         helper.make_node("SequenceErase", ["items"], ["shrunk"])],
        [helper.make_tensor_sequence_value_info("items", TP.INT64, [None]),
         helper.make_tensor_value_info("t", TP.INT64, [None])],
        [helper.make_tensor_sequence_value_info(n, TP.INT64, [None])
         for n in ("same", "grown", "shrunk")])
    items = [np.array([1, 2], np.int64), np.array([3], np.int64)]
    t = np.array([7, 8], np.int64)
    same, grown, shrunk = s.run(None, {"items": items, "t": t})
    for out in same + grown + shrunk:
        assert not any(np.shares_memory(out, a) for a in items + [t])
    for a in items + [t]:
        a[...] = -1
    assert [o.tolist() for o in same] == [[1, 2], [3]]
    assert [o.tolist() for o in grown] == [[1, 2], [3], [7, 8]]
    assert [o.tolist() for o in shrunk] == [[1, 2]]


def test_sequence_types_and_errors(sequence_session):
    assert [(i.name, i.type, i.shape) for i in sequence_session.get_inputs()] == [
        ("x", "tensor(float)", [2]), ("items", "seq(tensor(int64))", []),
        ("w", "tensor(string)", [None])]
    assert [o.type for o in sequence_session.get_outputs()] == [
        "seq(tensor(float))", "tensor(int64)", "tensor(int64)", "seq(tensor(string))"]
    feed = {"x": np.zeros(2, np.float32), "w": np.array(["a"])}
    with pytest.raises(epctx.InvalidArgument) as e:
        sequence_session.run(None, {**feed, "items": np.array([1, 2], np.int64)})
    assert str(e.value) == "input 'items' is a sequence: give a list of arrays, not numpy.ndarray"
    with pytest.raises(epctx.InvalidArgument) as e:
        sequence_session.run(None, {**feed, "items": [np.array([1], np.int64), np.array([1.0])]})
    assert str(e.value) == "input 'items' element 1 has type float64, expected int64"
    with pytest.raises(epctx.InvalidArgument) as e:
        sequence_session.run(None, {**feed, "items": [np.array([1], np.int64), np.array([{}])]})
    assert str(e.value) == ("input 'items' element 1 string 0 is dict, expected str or bytes (an "
                            "object array is taken as strings)")


@pytest.fixture(scope="module")
def optional_session():
    """none = Optional() (empty); full = Optional(x); has = OptionalHasElement(opt);
    got = OptionalGetElement(Optional(x))."""
    return session(
        [helper.make_node("Optional", [], ["none"], type=FLOAT2),
         helper.make_node("Optional", ["x"], ["full"]),
         helper.make_node("OptionalHasElement", ["opt"], ["has"]),
         helper.make_node("OptionalGetElement", ["full"], ["got"])],
        [helper.make_tensor_value_info("x", TP.FLOAT, [2]),
         helper.make_value_info("opt", helper.make_optional_type_proto(FLOAT2))],
        [helper.make_value_info("none", helper.make_optional_type_proto(FLOAT2)),
         helper.make_value_info("full", helper.make_optional_type_proto(FLOAT2)),
         helper.make_tensor_value_info("has", TP.BOOL, []),
         helper.make_tensor_value_info("got", TP.FLOAT, [2])])


def test_empty_optionals_are_none(optional_session):
    x = np.array([3, -1], np.float32)
    none, full, has, got = optional_session.run(None, {"x": x, "opt": None})
    assert none is None
    assert full.dtype == np.float32 and np.array_equal(full, x)
    assert has.dtype == np.bool_ and not has
    assert np.array_equal(got, x)
    # Left out of the feed, an optional input is empty too; given, it has its element.
    (has,) = optional_session.run(["has"], {"x": x})
    assert not has
    (has,) = optional_session.run(["has"], {"x": x, "opt": np.array([1, 2], np.float32)})
    assert has


def test_optional_types(optional_session):
    assert [(i.name, i.type, i.shape) for i in optional_session.get_inputs()] == [
        ("x", "tensor(float)", [2]), ("opt", "optional(tensor(float))", [2])]
    assert [o.type for o in optional_session.get_outputs()] == [
        "optional(tensor(float))", "optional(tensor(float))", "tensor(bool)", "tensor(float)"]
    with pytest.raises(epctx.InvalidArgument) as e:
        optional_session.run(None, {"x": None})
    assert str(e.value) == "input 'x' is an empty optional, expected a tensor"


def test_string_initializers_and_constants():
    """String initializers and Constant nodes (value, value_string, value_strings) compile into
    StringConstant nodes: Equal against them, and an output that is one, every run the same."""
    words = helper.make_tensor("words", TP.STRING, [3], [b"red", b"green", b"blue"])
    sess = session(
        [helper.make_node("Equal", ["x", "words"], ["same"]),
         helper.make_node("Constant", [], ["c"], value_string="green"),
         helper.make_node("Equal", ["x", "c"], ["is_green"]),
         helper.make_node("Constant", [], ["pair"], value_strings=["a", "b\u00e9"]),
         helper.make_node("Identity", ["pair"], ["pair_out"])],
        [helper.make_tensor_value_info("x", TP.STRING, [3])],
        [helper.make_tensor_value_info("same", TP.BOOL, [3]),
         helper.make_tensor_value_info("is_green", TP.BOOL, [3]),
         helper.make_tensor_value_info("pair_out", TP.STRING, [2])],
        [words])
    for _ in range(2):
        same, is_green, pair = sess.run(None, {"x": np.array(["red", "green", "pink"])})
        assert same.tolist() == [True, True, False]
        assert is_green.tolist() == [False, True, False]
        assert pair.dtype == object and pair.tolist() == ["a", "b\u00e9"]
        pair[0] = "changed"  # the caller's copy: the next run still sees "a"
