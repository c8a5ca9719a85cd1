#!/usr/bin/python3
"""Writes the fuzz seeds of values that lie (issue 31) into tests/fuzz/corpus/: bool bytes other
than 0 or 1 for the tensor file readers, empty inputs whose other dims multiply beyond int64 for
the import, compile and run targets (their declared shapes are the zero inputs the run target
feeds), a bool initializer of such bytes, and a context model whose references hold a NUL byte.
Run with /usr/bin/python3 (Debian's, with onnx) from the repository root; the output is
deterministic, so the committed seeds are what this writes."""

import os
import struct

import onnx
from onnx import TensorProto as TP
from onnx import helper

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
BIG = 2**32  # two of them multiply to 2^64
HUGE = 2**62  # four of them add up to 2^64


def write(target, name, data):
    with open(os.path.join(CORPUS, target, name), "wb") as f:
        f.write(data)


def npy(descr, shape, data):
    """A .npy file of format 1.0, as numpy.save writes it."""
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    total = (10 + len(header) + 1 + 63) // 64 * 64
    header = header.ljust(total - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def model(name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def floats(name, shape):
    return helper.make_tensor_value_info(name, TP.FLOAT, shape)


def tensor_file_seeds():
    # The first byte picks the reader: even .npy, odd .pb.
    write("tensor_file", "bool_not_0_or_1.npy", b"\x00" + npy("|b1", [4], b"\x00\x01\x02\xff"))
    write("tensor_file", "bool_not_0_or_1_long.npy",
          b"\x00" + npy("|b1", [2, 9], b"\x01" * 17 + b"\x80"))
    t = helper.make_tensor("mask", TP.BOOL, [4], b"\x00\x01\x02\xff", raw=True)
    write("tensor_file", "bool_not_0_or_1_raw.pb", b"\x01" + t.SerializeToString())
    write("tensor_file", "f32_huge_empty.npy", b"\x00" + npy("<f4", [0, BIG, BIG], b""))


def model_seeds():
    empty3 = [0, BIG, BIG]
    seeds = {
        "huge_empty_flatten.onnx": model(
            "flatten", [helper.make_node("Flatten", ["x"], ["y"], axis=1)],
            [floats("x", empty3)], [floats("y", ["d0", "d1"])]),
        "huge_empty_concat.onnx": model(
            "concat", [helper.make_node("Concat", ["a", "a", "a", "a"], ["y"], axis=1)],
            [floats("a", [0, HUGE])], [floats("y", ["d0", "d1"])]),
        "huge_empty_reduce_sum.onnx": model(
            "reduce", [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)],
            [floats("x", empty3)], [floats("y", ["d0", "d1", "d2"])],
            [helper.make_tensor("axes", TP.INT64, [2], [1, 2])]),
        "huge_empty_softmax11.onnx": model(
            "softmax", [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
            [floats("x", empty3)], [floats("y", ["d0", "d1", "d2"])], opset=11),
        "huge_empty_matmul.onnx": model(
            "matmul", [helper.make_node("MatMul", ["a", "b"], ["y"])],
            [floats("a", [BIG, BIG, 0, 4]), floats("b", [4, 3])],
            [floats("y", ["d0", "d1", "d2", "d3"])]),
        "huge_empty_space_to_depth.onnx": model(
            "s2d", [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2**16)],
            [floats("x", [0, 2**48, 2**16, 2**16])], [floats("y", ["d0", "d1", "d2", "d3"])]),
        "huge_empty_transpose_add.onnx": model(
            "transpose", [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0]),
                          helper.make_node("Add", ["t", "t"], ["y"])],
            [floats("x", empty3)], [floats("y", ["d0", "d1", "d2"])]),
        # Compile refuses it; mutations keep the raw bool bytes in play.
        "bool_initializer_not_0_or_1.onnx": model(
            "bools", [helper.make_node("Not", ["c"], ["y"])], [],
            [helper.make_tensor_value_info("y", TP.BOOL, [4])],
            [helper.make_tensor("c", TP.BOOL, [4], b"\x00\x01\x02\xff", raw=True)]),
    }
    for name, data in seeds.items():
        write("onnx_import", name, data)


def context_model_seed():
    """A context model whose blob and original model references hold a NUL byte."""
    node = helper.make_node(
        "EPContext", ["a"], ["c"], name="model_ctx", domain="com.microsoft", main_context=1,
        embed_mode=0, ep_cache_context=b"model_ctx.epctx\x00../../etc/passwd",
        ep_sdk_version="0.1.0", partition_name="model", source="epctx")
    graph = helper.make_graph([node], "model", [floats("a", [2, 3])],
                              [floats("c", [2, 4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                helper.make_opsetid("com.microsoft", 1)],
                          producer_name="epctx")
    m.ir_version = 8
    helper.set_model_props(m, {"epctx.original_model": "model.onnx\x00.other",
                               "epctx.original_size": "122"})
    write("context_model", "nul_in_references.onnx", m.SerializeToString())


if __name__ == "__main__":
    tensor_file_seeds()
    model_seeds()
    context_model_seed()
