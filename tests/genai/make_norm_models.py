#!/usr/bin/python3
"""Writes graphs of ONNX Runtime GenAI's normalization and activation operators, for
check_real_models.py --list tests/genai/norm_models.json (epctx against ONNX Runtime):

  norms_{prefill,decode,odd}.onnx   every op on hidden states of [1, 7, 64] (a prompt),
      [1, 1, 64] (one decode step) and [2, 5, 45] (a hidden size that is not a multiple of 8):
      SimplifiedLayerNormalization (with and without inv_std_var), SkipSimplifiedLayerNormalization
      and SkipLayerNormalization with their optional inputs (beta, bias) present and absent and
      every optional output (mean, inv_std_var, input_skip_bias_sum) requested by one node or
      another, FastGelu with and without its bias, BiasGelu, QuickGelu with the default alpha and
      another; the epsilon attributes left out on inputs scaled down to 1e-4, so that their
      defaults (1e-5, 1e-12) decide the result.
  norms_layouts.onnx   what the shapes allow beyond the common case: SimplifiedLayerNormalization
      from axis 1 with a [3, 12] scale, with a scale of one row per batch ([2, 1, 12]) and with a
      scale broadcast inside the row ([1, 12] for rows of [3, 12]); the skip ops with a skip of
      [S, H] and of [1, S, H] under a batch of 2, and with 2-D [tokens, hidden] inputs.

usage: make_norm_models.py --out DIR
Weights come from a fixed seed, so the files are the same on every run. onnx's checker is not run:
onnx knows neither the com.microsoft operators nor SimplifiedLayerNormalization (ONNX Runtime
registers its schemas itself, as epctx does).
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MS = "com.microsoft"
rng = np.random.default_rng(20261127)


class Graph:
    def __init__(self):
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        return name

    def weight(self, stem, shape, lo, hi):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), n))
        return n

    def const(self, stem, array):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), n))
        return n

    def node(self, op, inputs, outputs, domain="", **attrs):
        """`outputs`: (name, shape) pairs, or None for an omitted optional output; each named
        output becomes a graph output."""
        names = []
        for out in outputs:
            if out is None:
                names.append("")
                continue
            names.append(out[0])
            self.outputs.append(helper.make_tensor_value_info(out[0], TensorProto.FLOAT, out[1]))
        self.nodes.append(helper.make_node(op, inputs, names, name=self.name(op), domain=domain,
                                           **attrs))

    def small(self, x):
        """x * 1e-4: rows whose mean square is far below the default epsilons."""
        out = self.name("small")
        self.nodes.append(helper.make_node("Mul", [x, self.const("tiny", 1e-4)], [out],
                                           name=self.name("Mul")))
        return out

    def save(self, name, path):
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)],
            producer_name="epctx tests/genai/make_norm_models.py")
        model.ir_version = 8
        tmp = path + ".part"
        onnx.save(model, tmp)
        os.replace(tmp, path)


def stats(shape):
    return list(shape[:-1]) + [1]


def every_op(path, name, shape):
    """Every op and optional input/output on hidden states of `shape` ([.., hidden])."""
    g = Graph()
    h = shape[-1]
    x = g.input("x", shape)
    skip = g.input("skip", shape)
    st = stats(shape)

    # SimplifiedLayerNormalization: with inv_std_var, without, and with the default epsilon.
    scale = g.weight("scale", [h], 0.5, 1.5)
    g.node("SimplifiedLayerNormalization", [x, scale], [("sln", shape), ("sln_inv_std_var", st)],
           epsilon=1e-6)
    g.node("SimplifiedLayerNormalization", [x, scale], [("sln_y_only", shape)], epsilon=1e-5,
           axis=-1, stash_type=1)
    g.node("SimplifiedLayerNormalization", [g.small(x), scale], [("sln_default_eps", shape)])

    gamma = g.weight("gamma", [h], 0.5, 1.5)
    beta = g.weight("beta", [h], -0.5, 0.5)
    bias = g.weight("bias", [h], -0.5, 0.5)
    # SkipSimplifiedLayerNormalization: bias and every output; no bias and only the sum; the
    # default epsilon.
    g.node("SkipSimplifiedLayerNormalization", [x, skip, gamma, bias],
           [("ssln", shape), ("ssln_mean", st), ("ssln_inv_std_var", st), ("ssln_sum", shape)],
           domain=MS, epsilon=1e-6)
    g.node("SkipSimplifiedLayerNormalization", [x, skip, gamma],
           [("ssln_nobias", shape), None, None, ("ssln_nobias_sum", shape)], domain=MS,
           epsilon=1e-5)
    g.node("SkipSimplifiedLayerNormalization", [g.small(x), g.small(skip), gamma],
           [("ssln_default_eps", shape)], domain=MS)
    # SkipLayerNormalization: beta, bias and every output; neither, with inv_std_var alone; beta
    # only with mean alone; bias only (beta omitted) with the sum; the default epsilon.
    g.node("SkipLayerNormalization", [x, skip, gamma, beta, bias],
           [("sln_skip", shape), ("sln_skip_mean", st), ("sln_skip_inv_std_var", st),
            ("sln_skip_sum", shape)], domain=MS, epsilon=1e-6)
    g.node("SkipLayerNormalization", [x, skip, gamma],
           [("sln_skip_plain", shape), None, ("sln_skip_plain_inv_std_var", st)], domain=MS,
           epsilon=1e-5)
    g.node("SkipLayerNormalization", [x, skip, gamma, beta],
           [("sln_skip_beta", shape), ("sln_skip_beta_mean", st)], domain=MS, epsilon=1e-5)
    g.node("SkipLayerNormalization", [x, skip, gamma, "", bias],
           [("sln_skip_bias", shape), None, None, ("sln_skip_bias_sum", shape)], domain=MS,
           epsilon=1e-5)
    g.node("SkipLayerNormalization", [g.small(x), g.small(skip), gamma],
           [("sln_skip_default_eps", shape)], domain=MS)

    # Activations, on inputs scaled to [-4, 4) so that both tails are reached.
    wide = g.name("wide")
    g.nodes.append(helper.make_node("Mul", [x, g.const("four", 4.0)], [wide], name=g.name("Mul")))
    gelu_bias = g.weight("gelu_bias", [h], -1, 1)
    g.node("FastGelu", [wide, gelu_bias], [("fast_gelu_bias", shape)], domain=MS)
    g.node("FastGelu", [wide], [("fast_gelu", shape)], domain=MS)
    g.node("BiasGelu", [wide, gelu_bias], [("bias_gelu", shape)], domain=MS)
    g.node("QuickGelu", [wide], [("quick_gelu", shape)], domain=MS)
    g.node("QuickGelu", [wide], [("quick_gelu_alpha1", shape)], domain=MS, alpha=1.0)
    g.save(name, path)


def layouts(path):
    """Scale and skip shapes beyond one row of the hidden size."""
    g = Graph()
    x = g.input("x", [2, 3, 12])
    g.node("SimplifiedLayerNormalization", [x, g.weight("scale_3x12", [3, 12], 0.5, 1.5)],
           [("axis1", [2, 3, 12]), ("axis1_inv_std_var", [2, 1, 1])], axis=1, epsilon=1e-6)
    g.node("SimplifiedLayerNormalization", [x, g.weight("scale_per_batch", [2, 1, 12], 0.5, 1.5)],
           [("scale_per_batch", [2, 3, 12])], epsilon=1e-6)
    g.node("SimplifiedLayerNormalization", [x, g.weight("scale_row", [1, 12], 0.5, 1.5)],
           [("axis1_scale_broadcast", [2, 3, 12])], axis=1, epsilon=1e-6)

    h = 40
    hidden = g.input("hidden", [2, 7, h])
    gamma = g.weight("gamma", [h], 0.5, 1.5)
    beta = g.weight("beta", [h], -0.5, 0.5)
    skip_2d = g.input("skip_2d", [7, h])
    skip_b1 = g.input("skip_b1", [1, 7, h])
    g.node("SkipSimplifiedLayerNormalization", [hidden, skip_2d, gamma],
           [("ssln_skip_2d", [2, 7, h]), None, ("ssln_skip_2d_inv_std_var", [2, 7, 1]),
            ("ssln_skip_2d_sum", [2, 7, h])], domain=MS, epsilon=1e-6)
    g.node("SkipLayerNormalization", [hidden, skip_b1, gamma, beta],
           [("skip_b1_ln", [2, 7, h]), ("skip_b1_mean", [2, 7, 1]), None, ("skip_b1_sum", [2, 7, h])],
           domain=MS, epsilon=1e-6)
    tokens = g.input("tokens", [9, h])
    tokens_skip = g.input("tokens_skip", [9, h])
    g.node("SkipSimplifiedLayerNormalization", [tokens, tokens_skip, gamma],
           [("tokens_ssln", [9, h]), ("tokens_ssln_mean", [9, 1])], domain=MS, epsilon=1e-6)
    g.node("SkipLayerNormalization", [tokens, tokens_skip, gamma, beta],
           [("tokens_skip_ln", [9, h]), None, ("tokens_skip_ln_inv_std_var", [9, 1])],
           domain=MS, epsilon=1e-6)
    g.save("norms_layouts", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, shape in (("norms_prefill", [1, 7, 64]), ("norms_decode", [1, 1, 64]),
                        ("norms_odd", [2, 5, 45])):
        every_op(os.path.join(args.out, name + ".onnx"), name, shape)
    layouts(os.path.join(args.out, "norms_layouts.onnx"))


if __name__ == "__main__":
    main()
