#!/usr/bin/python3
"""Writes the Llama-style decoder of export_llama.py (same configuration, same seeded weights) in
the layout ONNX Runtime GenAI's model builder gives an LLM, built node by node with onnx.helper:
one graph for the prompt and for every decode step,

  NAME.onnx  input_ids [batch, sequence_length], attention_mask [batch, total_sequence_length],
             past_key_values.L.key/value [batch, kv_heads, past_sequence_length, head_dim]
               -> logits [batch, sequence_length, vocab],
                  present.L.key/value [batch, kv_heads, total_sequence_length, head_dim]

whose layers are the builder's operators: com.microsoft GroupQueryAttention with the rotary
embedding inside (do_rotary, cos/sin caches of [max_pos, head_dim / 2]; seqlens_k and
total_sequence_length computed from the attention mask), SimplifiedLayerNormalization (in the
default domain, where ONNX Runtime registers it) for the first norm and
com.microsoft SkipSimplifiedLayerNormalization for every norm after a residual sum, SiLU as
Sigmoid and Mul. The prompt runs with empty pasts (past_sequence_length 0), as GenAI feeds them
on the CPU.

The weights are the PyTorch module's of export_llama.py, so the references are PyTorch's: into
--out go NAME.onnx, NAME.input_ids.npy (the same seeded prompt as export_llama.py writes),
NAME.logits.npy (PyTorch's prompt logits), NAME.decode_input_ids.npy and NAME.decode_logits.npy
(one decode step after that prompt: the prompt's greedy token and PyTorch's logits for it), and
NAME.json (the configuration). onnx's checker is not run: it refuses
SimplifiedLayerNormalization in the default domain, as it refuses every model the builder writes.

usage: export_llama_genai.py --config tiny --out DIR [--prompt-length 16] [--name NAME]
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_common import OPSET, atomic_path, save_npy  # noqa: E402
from export_llama import exporter_main, seeded_run  # noqa: E402

MS = "com.microsoft"
SKIP_NORM = "SkipSimplifiedLayerNormalization"  # com.microsoft


def build_graph(np, onnx, model, c, name):
    """The GenAI-layout ModelProto of `model` (export_llama's Llama with its weights)."""
    from onnx import TensorProto as TP, helper, numpy_helper
    head_dim = c["hidden"] // c["heads"]
    params = {k: v.detach().numpy() for k, v in model.named_parameters()}
    nodes, inits = [], []

    def const(n, array):
        inits.append(numpy_helper.from_array(np.array(array, order="C"), n))
        return n

    def node(op, inputs, outputs, domain="", **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"/{op}_{len(nodes)}",
                                      domain=domain, **attrs))
        return outputs[0]

    def linear(x, weight, out):
        # nn.Linear keeps [out, in]; the builder's MatMul reads [in, out].
        return node("MatMul", [x, const(weight, params[weight].T)], [out])

    # seqlens_k: each row's length minus one; total_sequence_length: the mask's width.
    one = const("const_one_i64", np.array(1, dtype=np.int64))
    node("ReduceSum", ["attention_mask", const("const_axis_1", np.array([1], dtype=np.int64))],
         ["mask_rows"], keepdims=0)
    node("Sub", ["mask_rows", one], ["seqlens_k_i64"])
    node("Cast", ["seqlens_k_i64"], ["seqlens_k"], to=TP.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    node("Gather", ["mask_shape", one], ["total_i64"], axis=0)
    node("Cast", ["total_i64"], ["total_sequence_length"], to=TP.INT32)

    cos = model.cos_cached.numpy()[:, : head_dim // 2]
    sin = model.sin_cached.numpy()[:, : head_dim // 2]
    const("cos_cache", cos.astype(np.float32))
    const("sin_cache", sin.astype(np.float32))

    x = node("Gather", [const("embed_tokens.weight", params["embed_tokens.weight"]), "input_ids"],
             ["embeddings"], axis=0)
    eps = c["rms_eps"]
    residual, pending = x, None  # pending: the last block's output, not yet added to residual
    for i in range(c["layers"]):
        p = f"layers.{i}."
        ln = const(p + "input_layernorm.weight", params[p + "input_layernorm.weight"])
        if pending is None:
            normed = node("SimplifiedLayerNormalization", [residual, ln], [f"l{i}.in_norm"],
                          axis=-1, epsilon=eps, stash_type=1)
        else:
            normed = node(SKIP_NORM, [pending, residual, ln], [f"l{i}.in_norm", "", "",
                                                              f"l{i}.in_sum"],
                          domain=MS, epsilon=eps)
            residual = f"l{i}.in_sum"
        q = linear(normed, p + "self_attn.q_proj.weight", f"l{i}.q")
        k = linear(normed, p + "self_attn.k_proj.weight", f"l{i}.k")
        v = linear(normed, p + "self_attn.v_proj.weight", f"l{i}.v")
        attended = node("GroupQueryAttention",
                        [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value",
                         "seqlens_k", "total_sequence_length", "cos_cache", "sin_cache"],
                        [f"l{i}.attn", f"present.{i}.key", f"present.{i}.value"], domain=MS,
                        num_heads=c["heads"], kv_num_heads=c["kv_heads"], do_rotary=1,
                        rotary_interleaved=0)
        o = linear(attended, p + "self_attn.o_proj.weight", f"l{i}.o")
        ln2 = const(p + "post_attention_layernorm.weight",
                    params[p + "post_attention_layernorm.weight"])
        normed2 = node(SKIP_NORM, [o, residual, ln2], [f"l{i}.post_norm", "", "", f"l{i}.post_sum"],
                       domain=MS, epsilon=eps)
        residual = f"l{i}.post_sum"
        gate = linear(normed2, p + "mlp.gate_proj.weight", f"l{i}.gate")
        node("Sigmoid", [gate], [f"l{i}.gate_sigmoid"])
        node("Mul", [gate, f"l{i}.gate_sigmoid"], [f"l{i}.silu"])
        up = linear(normed2, p + "mlp.up_proj.weight", f"l{i}.up")
        node("Mul", [f"l{i}.silu", up], [f"l{i}.swiglu"])
        pending = linear(f"l{i}.swiglu", p + "mlp.down_proj.weight", f"l{i}.mlp")
    final = node(SKIP_NORM, [pending, residual, const("norm.weight", params["norm.weight"])],
                 ["final_norm"], domain=MS, epsilon=eps)
    linear(final, "lm_head.weight", "logits")

    f32 = TP.FLOAT
    kv = ["batch_size", c["kv_heads"], "past_sequence_length", head_dim]
    present = ["batch_size", c["kv_heads"], "total_sequence_length", head_dim]
    inputs = [helper.make_tensor_value_info("input_ids", TP.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TP.INT64,
                                            ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", f32,
                                             ["batch_size", "sequence_length", c["vocab"]])]
    for i in range(c["layers"]):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", f32, kv))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", f32, present))
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(graph, producer_name="epctx export_llama_genai.py",
                             opset_imports=[helper.make_opsetid("", OPSET),
                                            helper.make_opsetid(MS, 1)])


def export(mods, c, name, out_dir, prompt_length):
    np, torch, onnx = mods["numpy"], mods["torch"], mods["onnx"]
    model, _, _, prompt, logits, token, _, decode_logits = seeded_run(np, torch, c, prompt_length)

    path = os.path.join(out_dir, f"{name}.onnx")
    tmp = atomic_path(path)
    with open(tmp, "wb") as f:
        f.write(build_graph(np, onnx, model, c, name).SerializeToString())
    save_npy(np, os.path.join(out_dir, f"{name}.input_ids.npy"), prompt)
    save_npy(np, os.path.join(out_dir, f"{name}.logits.npy"), logits)
    save_npy(np, os.path.join(out_dir, f"{name}.decode_input_ids.npy"), token)
    save_npy(np, os.path.join(out_dir, f"{name}.decode_logits.npy"), decode_logits)
    os.replace(tmp, path)
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(dict(c, name=name, layout="genai", prompt_length=prompt_length, opset=OPSET,
                       torch=torch.__version__), f, indent=2)
        f.write("\n")


def main(argv=None):
    return exporter_main(argv, __doc__, export, "_genai", lambda name: f"{name}.onnx")


if __name__ == "__main__":
    sys.exit(main())
