#!/usr/bin/python3
"""Rewrites every MatMul whose right operand is a constant float [K, N] initializer as ONNX Runtime's
com.microsoft MatMulNBits (weight-only int4 or int8, blocks of `block_size` along K), the form ORT's
quantization tools and the GenAI model builder emit for LLMs. Written from the operator's
specification (ORT's ContribOperators.md), not from those tools:

  B            uint8 [N, n_blocks, block_size * bits / 8], n_blocks = ceil(K / block_size); the
               codes of one block along K, two 4-bit codes a byte, the lower index in the low
               nibble; K is padded with zeros to a whole block
  scales       float [N * n_blocks]
  zero_points  (asymmetric only) uint8 [N * ceil(n_blocks * bits / 8)], 4-bit codes packed the
               same way per column; symmetric blocks use the default zero point 2^(bits-1)
  weight       (code - zero_point) * scale

Quantization is round-to-nearest per block: symmetric (default) scales max|w| to 2^(bits-1) - 1;
asymmetric spreads [min(w, 0), max(w, 0)] over the codes 0 .. 2^bits - 1.

usage: quantize_nbits.py IN.onnx OUT.onnx [--bits 4] [--block-size 32] [--asymmetric]
                         [--accuracy-level 4] [--min-elements 0]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_common import die, import_deps, input_passes_checker  # noqa: E402


def quantize_blocks(np, w, bits, block_size, symmetric):
    """w: float32 [K, N] -> (codes uint8 [N, n_blocks, block_size], scales [N, n_blocks],
    zero points uint8 [N, n_blocks] or None)."""
    k, n = w.shape
    n_blocks = (k + block_size - 1) // block_size
    padded = np.zeros((n_blocks * block_size, n), dtype=np.float32)
    padded[:k] = w
    blocks = padded.T.reshape(n, n_blocks, block_size)
    top = (1 << bits) - 1
    if symmetric:
        zero = 1 << (bits - 1)
        scales = np.abs(blocks).max(axis=2) / (zero - 1)
        scales[scales == 0] = 1.0
        codes = np.clip(np.rint(blocks / scales[..., None]) + zero, 0, top)
        return codes.astype(np.uint8), scales.astype(np.float32), None
    lo = np.minimum(blocks.min(axis=2), 0.0)
    hi = np.maximum(blocks.max(axis=2), 0.0)
    scales = (hi - lo) / top
    scales[scales == 0] = 1.0
    zeros = np.clip(np.rint(-lo / scales), 0, top)
    codes = np.clip(np.rint(blocks / scales[..., None]) + zeros[..., None], 0, top)
    return codes.astype(np.uint8), scales.astype(np.float32), zeros.astype(np.uint8)


def pack_codes(np, codes, bits):
    """uint8 codes [..., L] -> bytes [..., L * bits / 8], lower index in the low bits."""
    if bits == 8:
        return codes
    low, high = codes[..., 0::2], codes[..., 1::2]
    return (low | (high << 4)).astype(np.uint8)


def pack_zero_points(np, zeros, bits):
    """uint8 [N, n_blocks] -> uint8 [N * ceil(n_blocks * bits / 8)] (each column padded)."""
    if bits == 8:
        return zeros.reshape(-1)
    n, n_blocks = zeros.shape
    if n_blocks % 2:
        zeros = np.concatenate([zeros, np.zeros((n, 1), dtype=np.uint8)], axis=1)
    return pack_codes(np, zeros, 4).reshape(-1)


def dequantize(np, codes, scales, zeros, bits, k):
    """The weight the operator computes with, [K, N] (for checks)."""
    zero = (1 << (bits - 1)) if zeros is None else zeros[..., None].astype(np.float32)
    w = (codes.astype(np.float32) - zero) * scales[..., None]
    return w.reshape(w.shape[0], -1).T[:k]


def convert(mods, model, bits, block_size, symmetric, accuracy_level, min_elements):
    np, onnx = mods["numpy"], mods["onnx"]
    from onnx import helper, numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    uses = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    new_nodes, dropped, converted = [], set(), 0
    for node in graph.node:
        w_name = node.input[1] if node.op_type == "MatMul" and len(node.input) == 2 else None
        t = inits.get(w_name) if w_name else None
        if (t is None or t.data_type != onnx.TensorProto.FLOAT or len(t.dims) != 2
                or t.dims[0] * t.dims[1] < min_elements):
            new_nodes.append(node)
            continue
        w = numpy_helper.to_array(t).astype(np.float32)
        k, n = w.shape
        codes, scales, zeros = quantize_blocks(np, w, bits, block_size, symmetric)
        stem = w_name.replace("/", "_")
        b = numpy_helper.from_array(pack_codes(np, codes, bits), stem + "_Q%d" % bits)
        s = numpy_helper.from_array(scales.reshape(-1), stem + "_scales")
        inputs = [node.input[0], b.name, s.name]
        graph.initializer.extend([b, s])
        if zeros is not None:
            z = numpy_helper.from_array(pack_zero_points(np, zeros, bits), stem + "_zero_points")
            graph.initializer.append(z)
            inputs.append(z.name)
        attrs = dict(K=k, N=n, bits=bits, block_size=block_size)
        if accuracy_level:
            attrs["accuracy_level"] = accuracy_level
        new_nodes.append(helper.make_node("MatMulNBits", inputs, list(node.output),
                                          name=(node.name or stem) + "_MatMulNBits",
                                          domain="com.microsoft", **attrs))
        uses[w_name] -= 1
        if uses[w_name] == 0:
            dropped.add(w_name)
        converted += 1
    del graph.node[:]
    graph.node.extend(new_nodes)
    kept = [t for t in graph.initializer if t.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return converted


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--bits", type=int, choices=(4, 8), default=4)
    p.add_argument("--block-size", type=int, default=32)
    p.add_argument("--asymmetric", action="store_true", help="zero points per block")
    p.add_argument("--accuracy-level", type=int, default=0, choices=range(5),
                   help="the attribute (ORT: 4 computes with int8 activations); 0 leaves it out")
    p.add_argument("--min-elements", type=int, default=0,
                   help="leave weights with fewer elements in float")
    args = p.parse_args(argv)
    if args.block_size < 16 or args.block_size & (args.block_size - 1):
        die("--block-size must be a power of two, at least 16")
    mods = import_deps(__file__, (("numpy", "python3-numpy"), ("onnx", "python3-onnx")))
    onnx = mods["onnx"]
    model = onnx.load(args.input)
    input_checks = input_passes_checker(onnx, model, args.input)
    n = convert(mods, model, args.bits, args.block_size, not args.asymmetric,
                args.accuracy_level, args.min_elements)
    if n == 0:
        die(f"{args.input}: no MatMul with a constant float [K, N] weight")
    if input_checks:
        onnx.checker.check_model(model)
    tmp = os.path.join(os.path.dirname(os.path.abspath(args.output)),
                       "." + os.path.basename(args.output) + ".tmp")
    onnx.save(model, tmp)
    os.replace(tmp, args.output)
    print(f"{args.output}: {n} MatMuls as MatMulNBits (bits {args.bits}, block {args.block_size}, "
          f"{'asymmetric' if args.asymmetric else 'symmetric'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
