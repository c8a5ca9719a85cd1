#!/usr/bin/python3
"""Writes weight-only quantized models in ONNX Runtime's com.microsoft MatMulNBits form, for
check_real_models.py --list tests/quantized/nbits_models.json (epctx against ONNX Runtime):

  nbits_q4_bs32.onnx          4-bit, blocks of 32, no zero points (8 implied), float arithmetic
  nbits_q4_bs16_zp_bias.onnx  4-bit, blocks of 16, packed zero points, bias, K = 70 (a partial
                              last block)
  nbits_q4_bs128_level4.onnx  4-bit, blocks of 128, zero points, accuracy_level 4 (int8
                              activations), three activation rows and a batch of two
  nbits_q4_floatzp.onnx       4-bit, blocks of 32, float zero points
  nbits_q8_bs32_zp.onnx       8-bit, blocks of 32, zero points, float arithmetic
  nbits_q8_bs64_level4.onnx   8-bit, blocks of 64, accuracy_level 4
  llama_q4_prefill.onnx,      the Llama-style test model (tests/models/export_llama.py --config
  llama_q4_decode.onnx        tiny) with every MatMul as MatMulNBits (quantize_nbits.py: 4-bit,
                              blocks of 32, symmetric, accuracy_level 4)
  llama_q4zp_decode.onnx      its decode graph quantized asymmetric (zero points), level 0
  gbq_q4_zp.onnx              GatherBlockQuantized (token embeddings): 4-bit rows of 72 values in
                              blocks of 16 (a partial last block), packed zero points, int64
                              indices [2, 3] with a negative one
  gbq_q8.onnx                 GatherBlockQuantized 8-bit, blocks of 32, no zero points (128
                              implied), int32 indices
  gbq_q4_f16.onnx             GatherBlockQuantized 4-bit with float16 scales and output (epctx
                              lifts them to float32), cast to float32

usage: make_nbits_models.py --out DIR
Weights come from a fixed seed, so the files are the same on every run.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(HERE), "models")
sys.path.insert(0, MODELS)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import quantize_nbits  # noqa: E402

OPSET = 17


def matmul_nbits_model(path, a_shape, n, bits, block_size, zero_points, bias, level, seed):
    """A [.., K] x MatMulNBits(W [K, N]) with W quantized from seeded floats."""
    rng = np.random.default_rng(seed)
    k = a_shape[-1]
    w = rng.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
    codes, scales, zeros = quantize_nbits.quantize_blocks(np, w, bits, block_size,
                                                          symmetric=zero_points is None)
    inits = [numpy_helper.from_array(quantize_nbits.pack_codes(np, codes, bits), "B"),
             numpy_helper.from_array(scales.reshape(-1), "scales")]
    inputs = ["A", "B", "scales"]
    if zero_points == "packed":
        inits.append(numpy_helper.from_array(quantize_nbits.pack_zero_points(np, zeros, bits), "zp"))
        inputs.append("zp")
    elif zero_points == "float":
        # Non-integer zero points, as HQQ-style quantizers write them.
        fz = (zeros.astype(np.float32) + rng.uniform(-0.5, 0.5, zeros.shape)).astype(np.float32)
        inits.append(numpy_helper.from_array(fz.reshape(-1), "zp"))
        inputs.append("zp")
    if bias:
        if len(inputs) == 3:
            inputs.append("")
        inputs += ["", "bias"]
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
    attrs = dict(K=k, N=n, bits=bits, block_size=block_size)
    if level:
        attrs["accuracy_level"] = level
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", name="mm", **attrs)
    out_shape = list(a_shape[:-1]) + [n]
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, a_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def gather_block_quantized_model(path, rows, k, bits, block_size, zero_points, index_type,
                                 index_shape, seed, float16=False):
    """One GatherBlockQuantized node over a uint8 table [rows, k * bits / 8] (data, scales and
    zero points are initializers; the indices a graph input); float16: float16 scales and
    output, cast to float32 for the graph output."""
    rng = np.random.default_rng(seed)
    blocks = (k + block_size - 1) // block_size
    per_byte = 8 // bits
    data = rng.integers(0, 256, (rows, k // per_byte), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.1, (rows, blocks)).astype(np.float16 if float16 else np.float32)
    inits = [numpy_helper.from_array(data, "data"), numpy_helper.from_array(scales, "scales")]
    inputs = ["data", "indices", "scales"]
    if zero_points:
        zp = rng.integers(0, 256, (rows, (blocks + per_byte - 1) // per_byte), dtype=np.uint8)
        inits.append(numpy_helper.from_array(zp, "zero_points"))
        inputs.append("zero_points")
    nodes = [helper.make_node("GatherBlockQuantized", inputs,
                              ["embeddings_f16" if float16 else "embeddings"],
                              domain="com.microsoft", bits=bits, block_size=block_size,
                              gather_axis=0, quantize_axis=1)]
    if float16:
        nodes.append(helper.make_node("Cast", ["embeddings_f16"], ["embeddings"],
                                      to=TensorProto.FLOAT))
    graph = helper.make_graph(
        nodes, "gbq", [helper.make_tensor_value_info("indices", index_type, index_shape)],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, index_shape + [k])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out = lambda name: os.path.join(args.out, name)  # noqa: E731
    matmul_nbits_model(out("nbits_q4_bs32.onnx"), [1, 5, 96], 40, 4, 32, None, False, 0, 1)
    matmul_nbits_model(out("nbits_q4_bs16_zp_bias.onnx"), [1, 3, 70], 24, 4, 16, "packed", True, 0, 2)
    matmul_nbits_model(out("nbits_q4_bs128_level4.onnx"), [2, 3, 256], 64, 4, 128, "packed", False, 4, 3)
    matmul_nbits_model(out("nbits_q4_floatzp.onnx"), [1, 4, 64], 32, 4, 32, "float", False, 0, 4)
    matmul_nbits_model(out("nbits_q8_bs32_zp.onnx"), [1, 5, 96], 40, 8, 32, "packed", True, 0, 5)
    matmul_nbits_model(out("nbits_q8_bs64_level4.onnx"), [1, 7, 128], 48, 8, 64, None, False, 4, 6)

    gather_block_quantized_model(out("gbq_q4_zp.onnx"), 10, 72, 4, 16, True, TensorProto.INT64,
                                 [2, 3], 7)
    gather_block_quantized_model(out("gbq_q8.onnx"), 6, 64, 8, 32, False, TensorProto.INT32, [4],
                                 8)
    gather_block_quantized_model(out("gbq_q4_f16.onnx"), 8, 64, 4, 32, True, TensorProto.INT64,
                                 [1, 5], 9, float16=True)

    llama = os.path.join(args.out, "llama")
    subprocess.run([sys.executable, os.path.join(MODELS, "export_llama.py"), "--config", "tiny",
                    "--out", llama], check=True, stdout=subprocess.DEVNULL)
    quant = os.path.join(MODELS, "quantize_nbits.py")
    for stem in ("prefill", "decode"):
        subprocess.run([sys.executable, quant, os.path.join(llama, f"llama_tiny_{stem}.onnx"),
                        out(f"llama_q4_{stem}.onnx"), "--accuracy-level", "4"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, quant, os.path.join(llama, "llama_tiny_decode.onnx"),
                    out("llama_q4zp_decode.onnx"), "--asymmetric"], check=True,
                   stdout=subprocess.DEVNULL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
