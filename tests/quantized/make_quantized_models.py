#!/usr/bin/python3
"""Writes two int8 models the way ONNX Runtime's quantization tools emit them, for
check_real_models.py --list tests/quantized/models.json (epctx against ONNX Runtime):

  qdq_cnn.onnx        static quantization, QDQ format (quantize_static's default): uint8
                      activations (asymmetric, calibrated on a seeded input), int8 weights
                      symmetric per output channel, int32 biases with scale = x_scale * w_scale;
                      Conv+Relu, Conv, a residual Add, GlobalAveragePool and a MatMul classifier,
                      every tensor between them a QuantizeLinear -> DequantizeLinear pair.
  qdq_ffn.onnx        static quantization, QDQ format, of a transformer feed-forward block:
                      LayerNormalization, MatMul (int8 weight per column) + bias, erf GELU,
                      MatMul (int8 weight per tensor) + bias, residual Add; uint8 activations
                      around both MatMuls.
  qdyn_encoder.onnx   dynamic quantization (quantize_dynamic's output): a transformer encoder
                      layer whose weight MatMuls are DynamicQuantizeLinear -> MatMulInteger ->
                      Cast -> Mul(x_scale * w_scale) -> Add(bias), int8 weights per tensor; the
                      attention MatMuls, Softmax, LayerNormalization and the erf GELU stay float.
  qdyn_contrib.onnx   ONNX Runtime's fused forms of those products (com.microsoft): DynamicQuantizeMatMul
                      with a per-tensor scale and a bias, with per-column scales and zero points,
                      and with a uint8 weight; MatMulIntegerToFloat on DynamicQuantizeLinear's
                      output with both zero points and a bias, and with b_zero_point alone.
  qdq_cnn_reduce_range.onnx, qdyn_encoder_reduce_range.onnx
                      the same two with reduce_range (the quantizers' option for CPUs without
                      VNNI): int8 weights of 7 bits, in [-64, 64].

usage: make_quantized_models.py --out DIR
Weights come from a fixed seed, so the files are the same on every run.
"""

import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from numpy.lib.stride_tricks import sliding_window_view

OPSET = 17
rng = np.random.default_rng(20261124)


# --- ONNX Runtime's quantization parameters (onnxruntime/python/tools/quantization) -------------

def activation_params(lo, hi):
    """uint8 asymmetric over [min(lo, 0), max(hi, 0)]: scale, zero point."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zero = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


# Set by main() for the reduce_range models: weights in [-64, 64] instead of [-127, 127].
REDUCE_RANGE = False


def weight_params(w, axis=None):
    """int8 symmetric in [-127, 127] ([-64, 64] with REDUCE_RANGE), per tensor or per slice along
    `axis`: scale(s), q."""
    qmax = 64.0 if REDUCE_RANGE else 127.0
    if axis is None:
        scale = np.float32(max(np.abs(w).max(), 1e-8) / qmax)
        q = np.clip(np.round(w / scale), -qmax, qmax).astype(np.int8)
        return scale, q
    other = tuple(i for i in range(w.ndim) if i != axis)
    scale = (np.maximum(np.abs(w).max(axis=other), 1e-8) / qmax).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -qmax, qmax).astype(np.int8)
    return scale, q


def fake_quant(x, scale, zero):
    return ((np.clip(np.round(x / scale) + int(zero), 0, 255) - int(zero)) * scale).astype(np.float32)


# --- graph building ----------------------------------------------------------------------------

class Graph:
    def __init__(self):
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem, array):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(self, op, inputs, stem, outputs=1, **attrs):
        outs = [self.name(stem) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs[0] if outputs == 1 else outs

    def qdq(self, x, scale, zero):
        """x -> QuantizeLinear -> DequantizeLinear, as the QDQ format puts around each tensor."""
        s, z = self.const("scale", scale), self.const("zero_point", zero)
        q = self.node("QuantizeLinear", [x, s, z], "q")
        return self.node("DequantizeLinear", [q, s, z], "dq")

    def dq_weight(self, q, scale, zero, axis=None):
        attrs = {} if axis is None else {"axis": axis}
        return self.node("DequantizeLinear",
                         [self.const("w_q", q), self.const("w_scale", scale),
                          self.const("w_zero", zero)], "w", **attrs)


def conv_nchw(x, w, b, stride, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[2]
    win = sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("nchwij,ocij->nohw", win, w) + b.reshape(1, -1, 1, 1)


def qdq_cnn(path, name="qdq_cnn"):
    """Static QDQ CNN: [1,3,32,32] -> 10 logits."""
    x_cal = rng.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    g = Graph()
    layers = [(3, 16, 1, True), (16, 16, 1, True), (16, 32, 2, False)]

    s_in, z_in = activation_params(-1, 1)
    cur_name, cur = g.qdq("x", s_in, z_in), fake_quant(x_cal, s_in, z_in)
    cur_scale = s_in
    skip_name = skip = None
    for i, (cin, cout, stride, relu) in enumerate(layers):
        w = (rng.standard_normal((cout, cin, 3, 3)) * math.sqrt(2.0 / (cin * 9))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        sw, wq = weight_params(w, axis=0)
        bias_scale = (cur_scale * sw).astype(np.float32)
        bq = np.round(b / bias_scale).astype(np.int32)
        w_name = g.dq_weight(wq, sw, np.zeros(cout, np.int8), axis=0)
        b_name = g.dq_weight(bq, bias_scale, np.zeros(cout, np.int32), axis=0)
        y_name = g.node("Conv", [cur_name, w_name, b_name], "conv", kernel_shape=[3, 3],
                        pads=[1, 1, 1, 1], strides=[stride, stride])
        y = conv_nchw(cur, (wq * sw.reshape(-1, 1, 1, 1)).astype(np.float32),
                      bq * bias_scale, stride, 1)
        if relu:
            y_name = g.node("Relu", [y_name], "relu")
            y = np.maximum(y, 0)
        s, z = activation_params(y.min(), y.max())
        cur_name, cur, cur_scale = g.qdq(y_name, s, z), fake_quant(y, s, z), s
        if i == 0:
            skip_name, skip = cur_name, cur
        if i == 1:  # residual: layer 2's output + layer 1's
            y_name = g.node("Add", [cur_name, skip_name], "add")
            y = cur + skip
            s, z = activation_params(y.min(), y.max())
            cur_name, cur, cur_scale = g.qdq(y_name, s, z), fake_quant(y, s, z), s
    pooled_name = g.node("GlobalAveragePool", [cur_name], "gap")
    pooled = cur.mean(axis=(2, 3), keepdims=True)
    s, z = activation_params(pooled.min(), pooled.max())
    flat_name = g.node("Flatten", [g.qdq(pooled_name, s, z)], "flat")
    flat = fake_quant(pooled, s, z).reshape(1, -1)
    w = (rng.standard_normal((32, 10)) * 0.3).astype(np.float32)
    sw, wq = weight_params(w, axis=1)
    logits_name = g.node("MatMul", [flat_name, g.dq_weight(wq, sw, np.zeros(10, np.int8), axis=1)],
                         "matmul")
    logits = flat @ (wq * sw)
    s, z = activation_params(logits.min() * 1.5, logits.max() * 1.5)
    g.nodes.append(helper.make_node("Identity", [g.qdq(logits_name, s, z)], ["logits"],
                                    name="output"))
    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], g.inits)
    save(graph, path)


def qdq_ffn(path, seq=16, hidden=64, ffn=256):
    """Static QDQ feed-forward block: x [1, seq, hidden] -> y [1, seq, hidden]."""
    g = Graph()
    x_cal = rng.standard_normal((1, seq, hidden)).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
    ln = g.node("LayerNormalization", ["x", g.const("gamma", gamma), g.const("beta", beta)], "ln",
                axis=-1, epsilon=1e-5)
    mean = x_cal.mean(-1, keepdims=True)
    h = (x_cal - mean) / np.sqrt(x_cal.var(-1, keepdims=True) + 1e-5) * gamma + beta

    def qdq_matmul(name, value, k, n, per_column):
        w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
        b = (rng.standard_normal(n) * 0.05).astype(np.float32)
        s, z = activation_params(value.min(), value.max())
        xq_name, xq = g.qdq(name, s, z), fake_quant(value, s, z)
        if per_column:
            sw, wq = weight_params(w, axis=1)
            w_name = g.dq_weight(wq, sw, np.zeros(n, np.int8), axis=1)
            wf = wq * sw
        else:
            sw, wq = weight_params(w)
            w_name = g.dq_weight(wq, sw, np.int8(0))
            wf = wq * sw
        y_name = g.node("Add", [g.node("MatMul", [xq_name, w_name], "mm"), g.const("bias", b)],
                        "lin")
        return y_name, (xq @ wf + b).astype(np.float32)

    up_name, up = qdq_matmul(ln, h, hidden, ffn, True)
    gelu_name = g.node("Mul", [g.node("Mul", [up_name, g.node("Add", [
        g.node("Erf", [g.node("Div", [up_name, g.const("sqrt2", np.float32(math.sqrt(2)))], "us")],
               "erf"), g.const("one", np.float32(1))], "erf1")], "ue"), g.const("half", np.float32(0.5))],
        "gelu")
    gelu = 0.5 * up * (1 + np.vectorize(math.erf)(up / math.sqrt(2))).astype(np.float32)
    down_name, _ = qdq_matmul(gelu_name, gelu, ffn, hidden, False)
    g.nodes.append(helper.make_node("Add", ["x", down_name], ["y"], name="residual"))
    graph = helper.make_graph(
        g.nodes, "qdq_ffn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], g.inits)
    save(graph, path)


def qdyn_encoder(path, seq=16, hidden=64, heads=4, ffn=128, name="qdyn_encoder"):
    """Dynamically quantized encoder layer: x [1, seq, hidden] -> y [1, seq, hidden]."""
    g = Graph()

    def qlinear(x, k, n):
        """quantize_dynamic's MatMul: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add."""
        w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
        sw, wq = weight_params(w)
        xq, xs, xz = g.node("DynamicQuantizeLinear", [x], "dql", outputs=3)
        acc = g.node("MatMulInteger", [xq, g.const("w_q", wq), xz, g.const("w_zero", np.int8(0))],
                     "mmi")
        scale = g.node("Mul", [xs, g.const("w_scale", sw)], "scale")
        y = g.node("Mul", [g.node("Cast", [acc], "acc_f", to=TensorProto.FLOAT), scale], "mm")
        return g.node("Add", [y, g.const("bias", (rng.standard_normal(n) * 0.02)
                                         .astype(np.float32))], "lin")

    def layer_norm(x):
        return g.node("LayerNormalization",
                      [x, g.const("gamma", (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)),
                       g.const("beta", (0.1 * rng.standard_normal(hidden)).astype(np.float32))],
                      "ln", axis=-1, epsilon=1e-5)

    def split_heads(t):
        r = g.node("Reshape", [t, g.const("shape", np.array([1, seq, heads, hidden // heads]))],
                   "heads")
        return g.node("Transpose", [r], "bhsd", perm=[0, 2, 1, 3])

    x = "x"
    q, k, v = (split_heads(qlinear(x, hidden, hidden)) for _ in range(3))
    kt = g.node("Transpose", [k], "kt", perm=[0, 1, 3, 2])
    scores = g.node("Div", [g.node("MatMul", [q, kt], "qk"),
                            g.const("sqrt_d", np.float32(math.sqrt(hidden // heads)))], "scaled")
    probs = g.node("Softmax", [scores], "probs", axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v], "ctx")], "bshd", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.const("shape", np.array([1, seq, hidden]))], "merged")
    h = layer_norm(g.node("Add", [x, qlinear(ctx, hidden, hidden)], "res1"))
    f = qlinear(h, hidden, ffn)
    gelu = g.node("Mul", [g.node("Mul", [f, g.node("Add", [
        g.node("Erf", [g.node("Div", [f, g.const("sqrt2", np.float32(math.sqrt(2)))], "fs")], "erf"),
        g.const("one", np.float32(1))], "erf1")], "fe"), g.const("half", np.float32(0.5))], "gelu")
    out = layer_norm(g.node("Add", [h, qlinear(gelu, ffn, hidden)], "res2"))
    g.nodes.append(helper.make_node("Identity", [out], ["y"], name="output"))
    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], g.inits)
    save(graph, path)


def qdyn_contrib(path, seq=16, hidden=64):
    """com.microsoft DynamicQuantizeMatMul and MatMulIntegerToFloat on x [1, seq, hidden]."""
    g = Graph()
    ms = "com.microsoft"

    def weight(n, dtype=np.int8):
        w = (rng.standard_normal((hidden, n)) / math.sqrt(hidden)).astype(np.float32)
        if dtype == np.uint8:
            scale = np.float32(np.abs(w).max() / 127)
            return np.clip(np.round(w / scale) + 128, 0, 255).astype(np.uint8), scale
        scale, q = weight_params(w, axis=1)
        return q, scale

    def output(op, inputs, n, **attrs):
        y = g.name("y")
        g.nodes.append(helper.make_node(op, inputs, [y], name=g.name(op), domain=ms, **attrs))
        outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, seq, n]))

    outputs = []
    bias = lambda n: g.const("bias", (rng.standard_normal(n) * 0.1).astype(np.float32))  # noqa
    q, scale = weight(48)
    output("DynamicQuantizeMatMul",
           ["x", g.const("w_q", q), g.const("w_scale", np.float32(scale.max())), "", bias(48)], 48)
    q, scale = weight(32)
    output("DynamicQuantizeMatMul", ["x", g.const("w_q", q), g.const("w_scale", scale),
                                     g.const("w_zero", np.zeros(32, np.int8))], 32)
    q, scale = weight(24, np.uint8)
    output("DynamicQuantizeMatMul", ["x", g.const("w_q", q), g.const("w_scale", scale),
                                     g.const("w_zero", np.uint8(128))], 24)
    xq, xs, xz = g.node("DynamicQuantizeLinear", ["x"], "dql", outputs=3)
    q, scale = weight(40)
    output("MatMulIntegerToFloat", [xq, g.const("w_q", q), xs, g.const("w_scale", scale), xz,
                                    g.const("w_zero", np.zeros(40, np.int8)), bias(40)], 40)
    q, scale = weight(16)
    output("MatMulIntegerToFloat", [xq, g.const("w_q", q), xs, g.const("w_scale", scale), "",
                                    g.const("w_zero", np.int8(0))], 16)
    graph = helper.make_graph(
        g.nodes, "qdyn_contrib",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])], outputs, g.inits)
    # onnx's checker knows no com.microsoft operator: saved unchecked.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid(ms, 1)],
                              producer_name="epctx tests/quantized/make_quantized_models.py")
    model.ir_version = 8
    onnx.save(model, path + ".part")
    os.replace(path + ".part", path)


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="epctx tests/quantized/make_quantized_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    tmp = path + ".part"
    onnx.save(model, tmp)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    qdq_cnn(os.path.join(args.out, "qdq_cnn.onnx"))
    qdyn_encoder(os.path.join(args.out, "qdyn_encoder.onnx"))
    qdq_ffn(os.path.join(args.out, "qdq_ffn.onnx"))
    # After the others, so that their weights (one seeded generator) stay what they were.
    global REDUCE_RANGE
    REDUCE_RANGE = True
    qdq_cnn(os.path.join(args.out, "qdq_cnn_reduce_range.onnx"), "qdq_cnn_reduce_range")
    qdyn_encoder(os.path.join(args.out, "qdyn_encoder_reduce_range.onnx"),
                 name="qdyn_encoder_reduce_range")
    REDUCE_RANGE = False
    qdyn_contrib(os.path.join(args.out, "qdyn_contrib.onnx"))


if __name__ == "__main__":
    main()
