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

import os

from llama_checks import compile_with_ops, export_tiny, finish, logits_differ, run
EXPECT = {"SimplifiedLayerNormalization": 1, "com.microsoft.SkipSimplifiedLayerNormalization": 4,
          "Pow": 0, "Sqrt": 0, "ReduceMean": 0, "com.epctx.Attention": 2, "Softmax": 0,
          "com.epctx.MaskedSoftmax": 0, "com.epctx.DnnlBatchMatMul": 0, "Expand": 0}


WHO = "check_llama_fusions"


def main():
    args, out, config = export_tiny(__doc__, "export_llama.py", "llama", "llama_tiny.json", WHO)
    layers = config["layers"]
    failed = []
    for stem in ("prefill", "decode"):
        model = os.path.join(out, f"llama_tiny_{stem}.onnx")
        ctx = os.path.join(out, f"llama_tiny_{stem}_ctx.onnx")
        wrong = compile_with_ops(args.epctx, model, ctx, EXPECT, WHO)
        if wrong:
            failed.append(f"{stem}: {wrong}")
        inputs = ["-i", f"input_ids={os.path.join(out, f'llama_tiny_{stem}.input_ids.npy')}"]
        if stem == "decode":
            for i in range(layers):
                for kind in ("key", "value"):
                    name = f"past.{i}.{kind}"
                    inputs += ["-i", f"{name}={os.path.join(out, f'llama_tiny_decode.{name}.npy')}"]
        results = os.path.join(out, f"{stem}_epctx")
        run([args.epctx, "run", ctx, *inputs, "--output-dir", results, "-C", "epctx.fallback|deny"],
            WHO)
        differ = logits_differ(args.epctx, os.path.join(results, "logits.npy"),
                               os.path.join(out, f"llama_tiny_{stem}.logits.npy"), stem)
        if differ:
            failed.append(differ)
    finish(failed, "prefill and decode: fused norms and attention, logits match PyTorch's")


if __name__ == "__main__":
    main()
