#!/usr/bin/python3
"""Writes one-node graphs of standard operators at the edges of their definitions, for
check_real_models.py --list tests/ops/edge_models.json (epctx against ONNX Runtime). Each case is
one where a search for differences found epctx apart from ONNX Runtime (docs/TESTING.md); the
list says what each checks.

  convtranspose_output_shape.onnx    ConvTranspose with output_shape asking for an odd total
      padding (the beginning gets the odd pixel except for SAME_UPPER) and for an output larger
      than the natural size (it grows at the end)
  convtranspose_same_upper.onnx      ConvTranspose with auto_pad SAME_UPPER and SAME_LOWER,
      strides 2, no output_shape (output = input * stride)
  cast_bfloat16.onnx                 Cast float -> bfloat16 -> float on values between two
      bfloat16 numbers (rounded to nearest even, not truncated)
  pool_ceil_mode.onnx                MaxPool and AveragePool in ceil mode where the last window
      would start in the end padding (it is dropped)
  slice_negative_step.onnx           Slice with a negative step whose start lies below the
      dimension (-dim - k): clamped to 0, as the spec says (numpy's slicing would select
      nothing), of an input and of an initializer (folded at compile time)
  nan_activations.onnx               Sign, HardSigmoid, Celu, Relu, LeakyRelu on NaN and infinities
  clip_float16.onnx                  Clip of float16 with neither bound, on infinities
  opset18.onnx                       the operators whose signature changed in opset 18, which
      Debian's onnx 1.12 does not know (not checked here): Reduce* with axes as an input and
      noop_with_empty_axes, Split with num_outputs (5 into 2, 2, 1), Pad with axes, Resize with
      axes
  gelu20.onnx                        Gelu of opset 20, exact and tanh, on a matrix, a scalar and a
      MatMul's output (which the compiler fuses into the product)

usage: make_edge_models.py --out DIR
Each graph's inputs are filled by the list's "values" where the case needs exact numbers.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
F, F16, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64


def save(out, name, nodes, inputs, outputs, inits=(), opset=OPSET):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if opset <= 17:  # what Debian's onnx 1.12 checks
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def vi(name, elem, shape):
    """A value of `shape`, or of that rank with every dim left to inference when an int."""
    if isinstance(shape, int):
        shape = [f"{name}_{i}" for i in range(shape)]
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def convtranspose_output_shape(out):
    w = np.random.default_rng(3).uniform(-1, 1, (1, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w"], ["y_notset"], strides=[2, 2],
                         output_shape=[6, 6]),
        helper.make_node("ConvTranspose", ["x", "w"], ["y_same_upper"], strides=[2, 2],
                         output_shape=[6, 6], auto_pad="SAME_UPPER"),
        helper.make_node("ConvTranspose", ["x", "w"], ["y_same_lower"], strides=[2, 2],
                         output_shape=[6, 6], auto_pad="SAME_LOWER"),
        helper.make_node("ConvTranspose", ["x", "w"], ["y_larger"], strides=[2, 2],
                         output_shape=[8, 8]),
        helper.make_node("ConvTranspose", ["x", "w"], ["y_larger_same_lower"], strides=[2, 2],
                         output_shape=[8, 8], auto_pad="SAME_LOWER"),
    ]
    names = ("y_notset", "y_same_upper", "y_same_lower", "y_larger", "y_larger_same_lower")
    save(out, "convtranspose_output_shape", nodes, [vi("x", F, [1, 1, 3, 3])],
         [vi(n, F, 4) for n in names],
         [numpy_helper.from_array(w, "w")])


def convtranspose_same_upper(out):
    w = np.random.default_rng(4).uniform(-1, 1, (1, 2, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w"], ["y_same_upper"], strides=[2, 2],
                         auto_pad="SAME_UPPER"),
        helper.make_node("ConvTranspose", ["x", "w"], ["y_same_lower"], strides=[2, 2],
                         auto_pad="SAME_LOWER"),
    ]
    save(out, "convtranspose_same_upper", nodes, [vi("x", F, [1, 1, 3, 3])],
         [vi(n, F, 4) for n in ("y_same_upper", "y_same_lower")],
         [numpy_helper.from_array(w, "w")])


def cast_bfloat16(out):
    nodes = [
        helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BFLOAT16),
        helper.make_node("Cast", ["b"], ["y"], to=F),
    ]
    save(out, "cast_bfloat16", nodes, [vi("x", F, [8])], [vi("y", F, [8])])


def pool_ceil_mode(out):
    nodes = [
        helper.make_node("MaxPool", ["x"], ["y_max"], kernel_shape=[2, 2], strides=[2, 2],
                         pads=[0, 0, 1, 1], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["y_avg"], kernel_shape=[2, 2], strides=[2, 2],
                         pads=[0, 0, 1, 1], ceil_mode=1),
    ]
    save(out, "pool_ceil_mode", nodes, [vi("x", F, [1, 1, 4, 4])],
         [vi("y_max", F, 4), vi("y_avg", F, 4)])


def slice_negative_step(out):
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"]),
        helper.make_node("Slice", ["x", "starts_near", "ends", "axes", "steps"], ["y_near"]),
        helper.make_node("Shape", ["y"], ["y_shape"]),
        helper.make_node("Slice", ["c", "starts", "ends", "axes", "steps"], ["c_sliced"]),
        helper.make_node("Add", ["x", "c_sliced"], ["y_const"]),
    ]
    c = np.arange(15, dtype=np.float32).reshape(5, 3)
    save(out, "slice_negative_step", nodes, [vi("x", F, [5, 3])],
         [vi("y", F, 2), vi("y_near", F, 2), vi("y_shape", I64, [2]), vi("y_const", F, 2)],
         [const("starts", [-7]), const("starts_near", [-5]), const("ends", [-9]),
          const("axes", [0]), const("steps", [-1]), numpy_helper.from_array(c, "c")])


def nan_activations(out):
    nodes = [
        helper.make_node("Sign", ["x"], ["sign"]),
        helper.make_node("HardSigmoid", ["x"], ["hard_sigmoid"]),
        helper.make_node("Celu", ["x"], ["celu"]),
        helper.make_node("Relu", ["x"], ["relu"]),
        helper.make_node("LeakyRelu", ["x"], ["leaky_relu"]),
    ]
    names = ["sign", "hard_sigmoid", "celu", "relu", "leaky_relu"]
    save(out, "nan_activations", nodes, [vi("x", F, [6])], [vi(n, F, [6]) for n in names])


def clip_float16(out):
    nodes = [
        helper.make_node("Cast", ["x"], ["h"], to=F16),
        helper.make_node("Clip", ["h"], ["c"]),
        helper.make_node("Cast", ["c"], ["y"], to=F),
    ]
    save(out, "clip_float16", nodes, [vi("x", F, [4])], [vi("y", F, [4])])


def opset18(out):
    nodes = [
        helper.make_node("ReduceMean", ["x", "axis1"], ["mean"], keepdims=1),
        helper.make_node("ReduceMax", ["x", "axes01"], ["max"], keepdims=0),
        helper.make_node("ReduceSumSquare", ["x"], ["noop_sum_square"], noop_with_empty_axes=1),
        helper.make_node("ReduceL1", ["x"], ["noop_l1"], noop_with_empty_axes=1),
        helper.make_node("ReduceL2", ["x"], ["noop_l2"], noop_with_empty_axes=1),
        helper.make_node("ReduceLogSum", ["x"], ["noop_log_sum"], noop_with_empty_axes=1),
        helper.make_node("ReduceLogSumExp", ["x"], ["noop_log_sum_exp"], noop_with_empty_axes=1),
        helper.make_node("ReduceMean", ["x"], ["noop_mean"], noop_with_empty_axes=1),
        helper.make_node("ReduceL2", ["x"], ["l2_all"], keepdims=0),
        helper.make_node("Split", ["x"], ["part0", "part1", "part2"], axis=1, num_outputs=3),
        helper.make_node("Pad", ["x", "pads", "", "axis1"], ["padded"], mode="reflect"),
        helper.make_node("Resize", ["x4", "", "scales_hw"], ["resized"], mode="linear",
                         axes=[2, 3]),
    ]
    save(out, "opset18", nodes, [vi("x", F, [3, 5]), vi("x4", F, [1, 2, 3, 4])],
         [vi("mean", F, 2), vi("max", F, 0), vi("l2_all", F, 0)]
         + [vi("noop_" + n, F, 2) for n in ("sum_square", "l1", "l2", "log_sum", "log_sum_exp",
                                             "mean")]
         + [
          vi("part0", F, 2), vi("part1", F, 2), vi("part2", F, 2), vi("padded", F, 2),
          vi("resized", F, 4)],
         [const("axis1", [1]), const("axes01", [0, 1]), const("pads", [2, 1]),
          const("scales_hw", [2.0, 1.5], np.float32)], opset=18)


def gelu20(out):
    w = np.random.default_rng(20).uniform(-1, 1, (16, 8)).astype(np.float32)
    nodes = [
        helper.make_node("Gelu", ["x"], ["gelu"]),
        helper.make_node("Gelu", ["x"], ["gelu_tanh"], approximate="tanh"),
        helper.make_node("Gelu", ["s"], ["gelu_scalar"], approximate="tanh"),
        helper.make_node("MatMul", ["x", "w"], ["product"]),
        helper.make_node("Gelu", ["product"], ["product_gelu"]),
        helper.make_node("MatMul", ["x", "w"], ["product_t"]),
        helper.make_node("Gelu", ["product_t"], ["product_gelu_tanh"], approximate="tanh"),
    ]
    save(out, "gelu20", nodes, [vi("x", F, [2, 16]), vi("s", F, [])],
         [vi("gelu", F, 2), vi("gelu_tanh", F, 2), vi("gelu_scalar", F, 0),
          vi("product_gelu", F, 2), vi("product_gelu_tanh", F, 2)],
         [numpy_helper.from_array(w, "w")], opset=20)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for make in (convtranspose_output_shape, convtranspose_same_upper, cast_bfloat16, pool_ceil_mode, slice_negative_step,
                 nan_activations, clip_float16, opset18, gelu20):
        make(args.out)


if __name__ == "__main__":
    main()
