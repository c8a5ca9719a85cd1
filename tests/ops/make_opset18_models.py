#!/usr/bin/python3
"""Writes graphs of the operators opset 18 added to ONNX (Debian's onnx 1.12 knows opsets up to
17; epctx registers their schemas), for check_real_models.py --list tests/ops/opset18_models.json
(epctx against ONNX Runtime, which runs each of them):

  mish.onnx               Mish on values from -100 to 100 (softplus overflows to infinity above
      ~88 in float) and on a Conv's output (a post-op of the convolution, computed after it, or
      inside oneDNN's primitive before a residual addition)
  mish_spelled.onnx       Mish as exports of opset 17 and before spell it after a Conv,
      x * Tanh(Softplus(x)), which the compiler also makes the convolution's post-op (opset 17)
  bitwise.onnx            BitwiseAnd, BitwiseOr, BitwiseXor with broadcasting and BitwiseNot, on
      int32 and int64 inputs with negative values, and on uint8 (Cast in the graph)
  group_norm.onnx         GroupNormalization of [2, 6, 4, 5] in 3 groups and of [2, 4, 7] in 4
      groups (one channel each), scale and bias per group, epsilon 1e-5 and 1e-2
  group_norm21.onnx       GroupNormalization of opset 21 (scale and bias per channel) of
      [2, 6, 4, 5] in 2 groups
  center_crop_pad.onnx    CenterCropPad cropping and padding by odd and even differences, on named
      axes (negative too) and on every axis, of float32 and int32
  col2im.onnx             Col2Im of 2x2 blocks over a 5x5 image, and of 2x3 blocks with strides,
      dilations and uneven pads over a 6x7 image (overlapping blocks sum)
  lp_pool18.onnx          LpPool with ceil_mode (a last window cut by the border) and dilations

usage: make_opset18_models.py --out DIR
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import onnx

OPSET = 18
F, I32, I64, U8 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8


def save(out, name, nodes, inputs, outputs, inits=(), opset=OPSET):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))


def vi(name, elem, shape):
    """A value of `shape`, or of that rank with every dim left to inference when an int."""
    if isinstance(shape, int):
        shape = [f"{name}_{i}" for i in range(shape)]
    return helper.make_tensor_value_info(name, elem, shape)


def tensor(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def mish(out):
    w = np.random.default_rng(18).uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Mish", ["x"], ["y"]),
        helper.make_node("Conv", ["image", "w"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Mish", ["conv"], ["conv_mish"]),
        # Mish before a residual addition: oneDNN's eltwise_mish inside the primitive
        helper.make_node("Conv", ["image", "w"], ["conv2"], pads=[1, 1, 1, 1]),
        helper.make_node("Mish", ["conv2"], ["conv2_mish"]),
        helper.make_node("Add", ["conv2_mish", "residual"], ["conv_mish_add"]),
    ]
    save(out, "mish", nodes,
         [vi("x", F, [12]), vi("image", F, [1, 3, 6, 6]), vi("residual", F, [1, 8, 6, 6])],
         [vi("y", F, 1), vi("conv_mish", F, 4), vi("conv_mish_add", F, 4)],
         [numpy_helper.from_array(w, "w")])


def mish_spelled(out):
    w = np.random.default_rng(17).uniform(-1, 1, (8, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Softplus", ["conv"], ["softplus"]),
        helper.make_node("Tanh", ["softplus"], ["tanh"]),
        helper.make_node("Mul", ["conv", "tanh"], ["y"]),
    ]
    save(out, "mish_spelled", nodes, [vi("image", F, [1, 3, 6, 6])], [vi("y", F, 4)],
         [numpy_helper.from_array(w, "w")], opset=17)


def bitwise(out):
    nodes = [
        helper.make_node("BitwiseAnd", ["a", "b"], ["and32"]),
        helper.make_node("BitwiseOr", ["a", "b"], ["or32"]),
        helper.make_node("BitwiseXor", ["a", "b"], ["xor32"]),
        helper.make_node("BitwiseNot", ["a"], ["not32"]),
        helper.make_node("BitwiseAnd", ["c", "d"], ["and64"]),
        helper.make_node("BitwiseXor", ["d", "c"], ["xor64"]),
        helper.make_node("BitwiseNot", ["d"], ["not64"]),
        helper.make_node("Cast", ["a"], ["a8"], to=U8),
        helper.make_node("Cast", ["b"], ["b8"], to=U8),
        helper.make_node("BitwiseOr", ["a8", "b8"], ["or8"]),
        helper.make_node("BitwiseNot", ["a8"], ["not8"]),
    ]
    save(out, "bitwise", nodes,
         [vi("a", I32, [2, 4]), vi("b", I32, [4]), vi("c", I64, [3]), vi("d", I64, [3])],
         [vi("and32", I32, 2), vi("or32", I32, 2), vi("xor32", I32, 2), vi("not32", I32, 2),
          vi("and64", I64, 1), vi("xor64", I64, 1), vi("not64", I64, 1), vi("or8", U8, 2),
          vi("not8", U8, 2)])


def group_norm(out):
    rng = np.random.default_rng(180)
    nodes = [
        helper.make_node("GroupNormalization", ["x", "scale3", "bias3"], ["y"], num_groups=3),
        helper.make_node("GroupNormalization", ["x3d", "scale4", "bias4"], ["y3d"], num_groups=4,
                         epsilon=1e-2),
    ]
    save(out, "group_norm", nodes, [vi("x", F, [2, 6, 4, 5]), vi("x3d", F, [2, 4, 7])],
         [vi("y", F, 4), vi("y3d", F, 3)],
         [tensor("scale3", rng.uniform(0.5, 2, 3), np.float32),
          tensor("bias3", rng.uniform(-1, 1, 3), np.float32),
          tensor("scale4", rng.uniform(0.5, 2, 4), np.float32),
          tensor("bias4", rng.uniform(-1, 1, 4), np.float32)])


def group_norm21(out):
    rng = np.random.default_rng(210)
    nodes = [helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2)]
    save(out, "group_norm21", nodes, [vi("x", F, [2, 6, 4, 5])], [vi("y", F, 4)],
         [tensor("scale", rng.uniform(0.5, 2, 6), np.float32),
          tensor("bias", rng.uniform(-1, 1, 6), np.float32)], opset=21)


def center_crop_pad(out):
    nodes = [
        # 7 -> 5 crops 1 at each end; 8 -> 11 pads 1 before, 2 after
        helper.make_node("CenterCropPad", ["x", "hw"], ["crop_pad_hw"], axes=[2, 3]),
        # every axis: 1 -> 2 pads after only, 3 stays, 7 -> 4 crops 1 before and 2 after,
        # 8 -> 6 crops 1 at each end
        helper.make_node("CenterCropPad", ["x", "all_axes"], ["crop_pad_all"]),
        helper.make_node("CenterCropPad", ["x", "last"], ["crop_last"], axes=[-1]),
        helper.make_node("CenterCropPad", ["ints", "ints_shape"], ["ints_crop_pad"]),
    ]
    save(out, "center_crop_pad", nodes, [vi("x", F, [1, 3, 7, 8]), vi("ints", I32, [4, 5])],
         [vi("crop_pad_hw", F, 4), vi("crop_pad_all", F, 4), vi("crop_last", F, 4),
          vi("ints_crop_pad", I32, 2)],
         [tensor("hw", [5, 11], np.int64), tensor("all_axes", [2, 3, 4, 6], np.int64),
          tensor("last", [3], np.int64), tensor("ints_shape", [7, 2], np.int64)])


def col2im(out):
    nodes = [
        helper.make_node("Col2Im", ["cols", "image5", "block22"], ["image"]),
        helper.make_node("Col2Im", ["cols_strided", "image67", "block23"], ["image_strided"],
                         strides=[2, 2], dilations=[2, 1], pads=[1, 0, 1, 1]),
    ]
    # 2 channels x 4 taps over 4x4 positions; 3 channels x 6 taps over 3x3 positions
    save(out, "col2im", nodes, [vi("cols", F, [1, 8, 16]), vi("cols_strided", F, [2, 18, 9])],
         [vi("image", F, 4), vi("image_strided", F, 4)],
         [tensor("image5", [5, 5], np.int64), tensor("block22", [2, 2], np.int64),
          tensor("image67", [6, 7], np.int64), tensor("block23", [2, 3], np.int64)])


def lp_pool18(out):
    nodes = [
        helper.make_node("LpPool", ["x"], ["ceil"], kernel_shape=[3, 3], strides=[2, 2],
                         ceil_mode=1),
        helper.make_node("LpPool", ["x"], ["dilated"], kernel_shape=[2, 2], dilations=[2, 2],
                         p=1),
    ]
    save(out, "lp_pool18", nodes, [vi("x", F, [1, 2, 8, 8])], [vi("ceil", F, 4),
                                                                vi("dilated", F, 4)])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for make in (mish, mish_spelled, bitwise, group_norm, group_norm21, center_crop_pad, col2im, lp_pool18):
        make(args.out)


if __name__ == "__main__":
    main()
