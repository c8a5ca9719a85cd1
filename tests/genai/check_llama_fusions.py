#!/usr/bin/python3
"""The tiny Llama of tests/models/export_llama.py, as PyTorch exports it, compiles to the kernels
its node-by-node spellings stand for, and its logits still match PyTorch's (atol 1e-4 + rtol
1e-3):
  - RMSNorms (Pow, ReduceMean, Add, Sqrt, Div, Mul, Mul) to ONNX Runtime GenAI's normalizations:
    every norm but the first layer's first (on the embeddings) reads a residual sum, so each of
    the prefill and decode graphs of its 2 layers holds 1 SimplifiedLayerNormalization and 4
    com.microsoft SkipSimplifiedLayerNormalization, and no Pow, ReduceMean or Sqrt;
  - attention (MatMul, Div, the causal Where, Softmax, MatMul, with repeat_kv's Unsqueeze, Expand
    and Reshape for its 4 heads over 2 KV heads) to one com.epctx Attention per layer, with no
    Softmax, Expand or oneDNN batched matmul left.

usage: check_llama_fusions.py --epctx BIN --work DIR
Exports into DIR/llama (torch, once per run), compiles, inspects and runs each graph there.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXPECT = {"SimplifiedLayerNormalization": 1, "com.microsoft.SkipSimplifiedLayerNormalization": 4,
          "Pow": 0, "Sqrt": 0, "ReduceMean": 0, "com.epctx.Attention": 2, "Softmax": 0,
          "com.epctx.MaskedSoftmax": 0, "com.epctx.DnnlBatchMatMul": 0, "Expand": 0}
ATOL, RTOL = "1e-4", "1e-3"


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"check_llama_fusions: {' '.join(cmd)} failed:\n{p.stdout}")
    return p.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epctx", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    out = os.path.join(args.work, "llama")
    os.makedirs(out, exist_ok=True)
    run(["/usr/bin/python3", os.path.join(REPO, "tests", "models", "export_llama.py"),
         "--config", "tiny", "--out", out])
    with open(os.path.join(out, "llama_tiny.json")) as f:
        layers = json.load(f)["layers"]
    failed = []
    for stem in ("prefill", "decode"):
        model = os.path.join(out, f"llama_tiny_{stem}.onnx")
        ctx = os.path.join(out, f"llama_tiny_{stem}_ctx.onnx")
        run([args.epctx, "compile", model, "-o", ctx])
        ops = {}
        for m in json.loads(run([args.epctx, "inspect", "--json", ctx]))["blob"]["models"]:
            for program in m["programs"]:
                for op, count in program["ops"].items():
                    ops[op] = ops.get(op, 0) + count
        wrong = {op: ops.get(op, 0) for op, want in EXPECT.items() if ops.get(op, 0) != want}
        if wrong:
            failed.append(f"{stem}: ops {wrong}, expected {({op: EXPECT[op] for op in wrong})} "
                          f"(all ops: {ops})")
        inputs = ["-i", f"input_ids={os.path.join(out, f'llama_tiny_{stem}.input_ids.npy')}"]
        if stem == "decode":
            for i in range(layers):
                for kind in ("key", "value"):
                    name = f"past.{i}.{kind}"
                    inputs += ["-i", f"{name}={os.path.join(out, f'llama_tiny_decode.{name}.npy')}"]
        results = os.path.join(out, f"{stem}_epctx")
        run([args.epctx, "run", ctx, *inputs, "--output-dir", results, "-C", "epctx.fallback|deny"])
        p = subprocess.run([args.epctx, "compare", os.path.join(results, "logits.npy"),
                            os.path.join(out, f"llama_tiny_{stem}.logits.npy"), "--atol", ATOL,
                            "--rtol", RTOL], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        print(f"{stem}: {p.stdout.strip()}")
        if p.returncode != 0:
            failed.append(f"{stem}: logits differ from PyTorch's: {p.stdout.strip()}")
    if failed:
        sys.exit("\n".join(failed))
    print("prefill and decode: fused norms and attention, logits match PyTorch's")


if __name__ == "__main__":
    main()
