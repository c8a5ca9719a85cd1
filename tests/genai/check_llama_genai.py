#!/usr/bin/python3
"""The tiny Llama of tests/models/export_llama.py in ONNX Runtime GenAI's layout
(tests/models/export_llama_genai.py: one graph for the prompt and the decode steps, with
GroupQueryAttention, SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, seqlens_k
and total_sequence_length computed from the attention mask) compiles with those operators kept,
and a generation through it matches PyTorch's logits (atol 1e-4 + rtol 1e-3):
  - the prompt, with empty pasts ([1, kv_heads, 0, head_dim]) and a mask of ones;
  - one decode step, fed the prompt's presents as its pasts and a mask one longer;
  - the prompt through the same graph in float16 (tests/models/convert_float16.py, float32
    inputs and outputs), which keeps those operators too, within float16's rounding of the
    weights (atol 1e-2 + rtol 1e-2).
The GenAI form of the model runs on the same weights as the PyTorch export, so its logits are
PyTorch's too; ONNX Runtime 1.30 gives them within 2.2e-6 (bench/llm measures it at SmolLM's
shapes).

usage: check_llama_genai.py --epctx BIN --work DIR
Exports into DIR/llama_genai (torch, once per run), compiles and runs there.
"""

import os

import numpy as np
from llama_checks import REPO, compile_with_ops, export_tiny, finish, logits_differ, run

WHO = "check_llama_genai"
NAME = "llama_tiny_genai"
# The float16 graph's logits against PyTorch's float32 ones: its weights are rounded to float16
# (3.4e-3 apart at most, of logits up to 3.9).
F16_ATOL, F16_RTOL = "1e-2", "1e-2"
EXPECT = {"com.microsoft.GroupQueryAttention": 2, "SimplifiedLayerNormalization": 1,
          "com.microsoft.SkipSimplifiedLayerNormalization": 4}


def main():
    args, out, config = export_tiny(__doc__, "export_llama_genai.py", "llama_genai",
                                    f"{NAME}.json", WHO)
    head_dim = config["hidden"] // config["heads"]
    ctx = os.path.join(out, f"{NAME}_ctx.onnx")
    failed = []
    wrong = compile_with_ops(args.epctx, os.path.join(out, f"{NAME}.onnx"), ctx, EXPECT, WHO)
    if wrong:
        failed.append(wrong)

    def step(stem, input_ids, total, pasts, ctx=ctx):
        """Runs one step; pasts: {layer: (key file, value file)}. Returns its output folder."""
        feeds = {"input_ids": input_ids,
                 "attention_mask": np.ones((1, total), dtype=np.int64)}
        args_in = []
        for name, array in feeds.items():
            path = os.path.join(out, f"{stem}.{name}.npy")
            np.save(path, array)
            args_in += ["-i", f"{name}={path}"]
        for i, (key, value) in pasts.items():
            args_in += ["-i", f"past_key_values.{i}.key={key}",
                        "-i", f"past_key_values.{i}.value={value}"]
        results = os.path.join(out, f"{stem}_epctx")
        run([args.epctx, "run", ctx, *args_in, "--output-dir", results,
             "-C", "epctx.fallback|deny"], WHO)
        return results

    prompt = np.load(os.path.join(out, f"{NAME}.input_ids.npy"))
    empty = os.path.join(out, "empty_past.npy")
    np.save(empty, np.zeros((1, config["kv_heads"], 0, head_dim), dtype=np.float32))
    empty_pasts = {i: (empty, empty) for i in range(config["layers"])}
    prefill = step("prefill", prompt, prompt.shape[1], empty_pasts)
    token = np.load(os.path.join(out, f"{NAME}.decode_input_ids.npy"))
    decode = step("decode", token, prompt.shape[1] + 1,
                  {i: (os.path.join(prefill, f"present.{i}.key.npy"),
                       os.path.join(prefill, f"present.{i}.value.npy"))
                   for i in range(config["layers"])})
    for stem, results, reference in (("prefill", prefill, f"{NAME}.logits.npy"),
                                     ("decode", decode, f"{NAME}.decode_logits.npy")):
        differ = logits_differ(args.epctx, os.path.join(results, "logits.npy"),
                               os.path.join(out, reference), stem)
        if differ:
            failed.append(differ)

    # The same graph in float16 (tests/models/convert_float16.py, GroupQueryAttention's inputs
    # and outputs included), as the builder writes for GPUs: its weights rounded to float16.
    f16 = os.path.join(out, f"{NAME}_f16.onnx")
    run(["/usr/bin/python3", os.path.join(REPO, "tests", "models", "convert_float16.py"),
         os.path.join(out, f"{NAME}.onnx"), f16], WHO)
    ctx16 = os.path.join(out, f"{NAME}_f16_ctx.onnx")
    wrong = compile_with_ops(args.epctx, f16, ctx16, EXPECT, WHO)
    if wrong:
        failed.append(f"float16: {wrong}")
    prefill16 = step("prefill_f16", prompt, prompt.shape[1], empty_pasts, ctx16)
    differ = logits_differ(args.epctx, os.path.join(prefill16, "logits.npy"),
                           os.path.join(out, f"{NAME}.logits.npy"), "prefill, float16",
                           F16_ATOL, F16_RTOL)
    if differ:
        failed.append(differ)
    finish(failed, "GenAI layout: prompt and decode step match PyTorch's logits, and the "
           "float16 graph's prompt")


if __name__ == "__main__":
    main()
