#!/usr/bin/python3
"""Writes graphs of ONNX Runtime GenAI's attention operators, com.microsoft GroupQueryAttention
and RotaryEmbedding, one operator per graph, for check_real_models.py --list
tests/genai/attention_models.json (epctx against ONNX Runtime 1.30, ORT being the reference for
these operators). Each case is a row of CASES below: the prompt (prefill) with the past omitted
or empty, decode steps with a past of another length than the present, a past buffer longer
than the sequence (present keeps its length), rotary embedding inside the operator (halves or
interleaved pairs), query/KV head ratios 1, 2 and 3 (SmolLM's 9 query heads over 3 KV heads),
a local window, packed QKV, batches of 2 whose sequences end at different lengths (decode, and
the right-padded prompt), a continued prompt, softcap, smooth softmax, an attention bias, head
sinks, given position ids, bidirectional attention, a float16 prompt and decode step, and
RotaryEmbedding alone in both input layouts with partial rotary.

usage: make_attention_models.py --out DIR [--list JSON]
--list also writes the model list (names, input shapes, the integer inputs' values) that
check_real_models.py reads; attention_models.json is that file. The rotary caches are
initializers computed here (base 10000), so the files are the same on every run.
"""

import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MS = "com.microsoft"


def rope_cache(rows, half):
    """cos and sin of position * 10000^(-i/half), [rows, half], float32."""
    inv = 10000.0 ** (-np.arange(half, dtype=np.float64) / half)
    angles = np.arange(rows, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def gqa(name, what, batch=1, seq=1, heads=9, kv_heads=3, head=64, past=None, seqlens=None,
        total=None, rotary=None, cache_rows=64, packed=False, position_ids=None, bias=False,
        head_sink=False, half=False, **attrs):
    """A graph of one GroupQueryAttention node and its list entry.

    past: None (inputs omitted) or the past buffer's length (0: empty tensors); rotary: None,
    "half" or "interleaved"; position_ids: None or the values of a [batch, seq] input; half:
    float16 inputs, caches and outputs (float32 otherwise)."""
    inputs, feeds, values = [], {}, {}
    F = TensorProto.FLOAT16 if half else TensorProto.FLOAT

    def graph_input(n, elem, shape, given=None):
        inputs.append(helper.make_tensor_value_info(n, elem, shape))
        feeds[n] = list(shape)
        if given is not None:
            values[n] = list(given)
        return n

    if packed:
        q = graph_input("query", F, [batch, seq, (heads + 2 * kv_heads) * head])
        k = v = ""
    else:
        q = graph_input("query", F, [batch, seq, heads * head])
        k = graph_input("key", F, [batch, seq, kv_heads * head])
        v = graph_input("value", F, [batch, seq, kv_heads * head])
    pk = pv = ""
    if past is not None:
        pk = graph_input("past_key", F, [batch, kv_heads, past, head])
        pv = graph_input("past_value", F, [batch, kv_heads, past, head])
    sk = graph_input("seqlens_k", TensorProto.INT32, [batch], seqlens)
    tot = graph_input("total_sequence_length", TensorProto.INT32, [], [total])
    inits = []
    cos = sin = ""
    if rotary is not None:
        c, s = rope_cache(cache_rows, head // 2)
        if half:
            c, s = c.astype(np.float16), s.astype(np.float16)
        inits += [numpy_helper.from_array(c, "cos_cache"), numpy_helper.from_array(s, "sin_cache")]
        cos, sin = "cos_cache", "sin_cache"
        attrs["do_rotary"] = 1
        attrs["rotary_interleaved"] = 1 if rotary == "interleaved" else 0
    pos = ""
    if position_ids is not None:
        pos = graph_input("position_ids", TensorProto.INT64, [batch, seq], position_ids)
    ab = sink = ""
    if bias:
        ab = graph_input("attention_bias", F, [batch, heads, seq, total])
    if head_sink:
        sink = graph_input("head_sink", F, [heads])
    node_inputs = [q, k, v, pk, pv, sk, tot, cos, sin, pos, ab, sink]
    while node_inputs[-1] == "":
        node_inputs.pop()
    present = max(total, past or 0)
    node = helper.make_node("GroupQueryAttention", node_inputs,
                            ["output", "present_key", "present_value"], name="gqa", domain=MS,
                            num_heads=heads, kv_num_heads=kv_heads, **attrs)
    outputs = [
        helper.make_tensor_value_info("output", F, [batch, seq, heads * head]),
        helper.make_tensor_value_info("present_key", F, [batch, kv_heads, present, head]),
        helper.make_tensor_value_info("present_value", F, [batch, kv_heads, present, head]),
    ]
    graph = helper.make_graph([node], name, inputs, outputs, inits)
    e = entry(name, what, feeds, values, {"com.microsoft.GroupQueryAttention": 1})
    if half:
        e["atol_of_max"] = 0.004
        e["tolerance"] = ("float16 outputs: ORT 1.30 computes this operator in float16, epctx in "
                          "float32 rounded to float16 once; 4 float16 steps of the largest output")
    return graph, e


def rotary(name, what, shape, position_shape, positions, cache_rows, half, **attrs):
    """A graph of one RotaryEmbedding node and its list entry."""
    c, s = rope_cache(cache_rows, half)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, position_shape)]
    node = helper.make_node("RotaryEmbedding", ["x", "position_ids", "cos_cache", "sin_cache"],
                            ["y"], name="rotary", domain=MS, **attrs)
    graph = helper.make_graph(
        [node], name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(c, "cos_cache"), numpy_helper.from_array(s, "sin_cache")])
    return graph, entry(name, what, {"x": shape, "position_ids": position_shape},
                        {"position_ids": positions}, {"com.microsoft.RotaryEmbedding": 1})


def entry(name, what, feeds, values, ops):
    e = {"name": name, "what": what, "generate": "tests/genai/make_attention_models.py",
         "file": name + ".onnx", "inputs": feeds}
    if values:
        e["values"] = values
    e["expect_ops"] = ops
    return e


CASES = [
    lambda: gqa("gqa_prefill_rotary", "prompt of 16, past omitted, 9 heads over 3 KV heads, "
                "rotary by halves", seq=16, seqlens=[15], total=16, rotary="half"),
    lambda: gqa("gqa_prefill_empty_past", "prompt of 16 with empty past tensors (P = 0), "
                "interleaved rotary", seq=16, past=0, seqlens=[15], total=16,
                rotary="interleaved"),
    lambda: gqa("gqa_decode_rotary", "decode after 16 tokens, 9 heads over 3, rotary by halves",
                past=16, seqlens=[16], total=17, rotary="half"),
    lambda: gqa("gqa_prefill_float16", "float16 prompt of 16 (inputs, caches and outputs), 9 "
                "heads over 3 KV heads, rotary by halves", seq=16, past=0, seqlens=[15], total=16,
                rotary="half", half=True),
    lambda: gqa("gqa_decode_float16", "float16 decode after 16 tokens, 9 heads over 3, rotary by "
                "halves", past=16, seqlens=[16], total=17, rotary="half", half=True),
    lambda: gqa("gqa_decode_ratio2_interleaved", "decode after 31 tokens, 4 heads over 2, head "
                "size 32, interleaved rotary", heads=4, kv_heads=2, head=32, past=31,
                seqlens=[31], total=32, rotary="interleaved"),
    lambda: gqa("gqa_decode_mha", "decode after 8 tokens, 4 heads over 4 (ratio 1), head size "
                "16, no rotary, scale 0.3", heads=4, kv_heads=4, head=16, past=8, seqlens=[8],
                total=9, scale=0.3),
    lambda: gqa("gqa_prefill_local_window", "prompt of 32 with a local window of 8",
                seq=32, seqlens=[31], total=32, rotary="half", local_window_size=8),
    lambda: gqa("gqa_decode_local_window", "decode after 40 tokens with a local window of 16",
                past=40, seqlens=[40], total=41, rotary="half", local_window_size=16),
    lambda: gqa("gqa_decode_packed_qkv", "decode after 12 tokens, packed QKV, 4 heads over 2",
                heads=4, kv_heads=2, head=32, past=12, seqlens=[12], total=13, rotary="half",
                packed=True),
    lambda: gqa("gqa_prefill_packed_qkv", "prompt of 8, packed QKV, interleaved rotary",
                seq=8, heads=4, kv_heads=2, head=32, seqlens=[7], total=8,
                rotary="interleaved", packed=True),
    lambda: gqa("gqa_decode_batch2", "decode, batch of 2 after 20 and 13 tokens (past buffer of "
                "20)", batch=2, past=20, seqlens=[20, 13], total=21, rotary="half"),
    lambda: gqa("gqa_prefill_batch2_padded", "prompt, batch of 2 of 8 and 5 tokens (right "
                "padding)", batch=2, seq=8, seqlens=[7, 4], total=8, rotary="half"),
    lambda: gqa("gqa_prefill_batch2_padded_window", "prompt, batch of 2 of 8 and 5 tokens, local "
                "window of 3", batch=2, seq=8, seqlens=[7, 4], total=8, rotary="half",
                local_window_size=3),
    lambda: gqa("gqa_prefill_batch2_padded_window_softcap", "prompt, batch of 2 of 8 and 5 "
                "tokens, local window of 3, softcap 0.5 (ONNX Runtime's other path for padded "
                "rows)", batch=2, seq=8, seqlens=[7, 4], total=8, rotary="half",
                local_window_size=3, softcap=0.5),
    lambda: gqa("gqa_decode_long", "decode after 1000 tokens (cache blocks over threads)",
                past=1000, seqlens=[1000], total=1001, rotary="half", cache_rows=1024),
    lambda: gqa("gqa_prefill_long", "prompt of 96, rows in blocks over threads",
                seq=96, seqlens=[95], total=96, rotary="interleaved", cache_rows=128),
    lambda: gqa("gqa_decode_max_buffer", "decode after 16 tokens in a past buffer of 64 (not "
                "shared): present keeps 64 rows", past=64, seqlens=[16], total=17,
                rotary="half"),
    lambda: gqa("gqa_subsequent_prompt", "4 more prompt tokens after 10", seq=4, past=10,
                seqlens=[13], total=14, rotary="half"),
    lambda: gqa("gqa_softcap_smooth", "decode after 16 tokens, softcap 0.2, smooth softmax, "
                "scale 0.25", past=16, seqlens=[16], total=17, softcap=0.2, smooth_softmax=1,
                scale=0.25),
    lambda: gqa("gqa_bias_head_sink", "prompt of 8 with an attention bias and head sinks",
                seq=8, seqlens=[7], total=8, bias=True, head_sink=True),
    lambda: gqa("gqa_position_ids", "decode, batch of 2 after 8 and 5 tokens, position ids "
                "given", batch=2, past=8, seqlens=[8, 5], total=9, rotary="half",
                position_ids=[30, 12]),
    lambda: gqa("gqa_bidirectional", "prompt of 8, causal 0", seq=8, seqlens=[7], total=8,
                causal=0),
    lambda: rotary("rotary_bsd_partial", "RotaryEmbedding of [2, 5, 4 x 32] by halves, rotary "
                   "dim 16 of 32, position ids [2, 5]", [2, 5, 128], [2, 5],
                   [3, 4, 5, 6, 7, 0, 1, 2, 9, 20], 64, 8, num_heads=4, rotary_embedding_dim=16),
    lambda: rotary("rotary_bnsh_interleaved", "RotaryEmbedding of [1, 4, 6, 32] (BNSH), "
                   "interleaved, rotary dim 24 of 32, a start offset [1]", [1, 4, 6, 32], [1],
                   [7], 32, 12, num_heads=4, rotary_embedding_dim=24, interleaved=1),
    lambda: rotary("rotary_full", "RotaryEmbedding of [1, 3, 64], head size from the caches "
                   "(32), a scalar start offset", [1, 3, 64], [], [0], 16, 16),
]


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid(MS, 1)],
                              producer_name="epctx tests/genai/make_attention_models.py")
    model.ir_version = 8
    tmp = path + ".part"
    onnx.save(model, tmp)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--list", help="also write the model list here")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    entries = []
    for case in CASES:
        graph, e = case()
        save(graph, os.path.join(args.out, e["file"]))
        entries.append(e)
    if args.list:
        listing = {
            "comment": "GroupQueryAttention and RotaryEmbedding (com.microsoft) graphs written by "
                       "make_attention_models.py (--list writes this file), checked against ONNX "
                       "Runtime by tests/real_models/check_real_models.py --list "
                       "tests/genai/attention_models.json. values: the integer inputs "
                       "(seqlens_k, total_sequence_length, position_ids); float inputs are "
                       "seeded uniform in [-1, 1).",
            "models": entries,
        }
        with open(args.list, "w") as f:
            json.dump(listing, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
