#!/usr/bin/python3
"""Writes graphs of the operators ONNX Runtime's transformer optimizer puts in BERT- and GPT-2-style
models, com.microsoft Attention, QAttention, MultiHeadAttention, EmbedLayerNormalization,
QEmbedLayerNormalization and Gelu, for check_real_models.py --list tests/genai/bert_contrib_models.json (epctx against ONNX
Runtime 1.30, ORT being the reference for these operators). Each case is a row of CASES below:
Attention without a mask, with every mask_index form ([B] end positions, [2B] end and start
positions, [B, T] and [B, S, T] raw masks), unidirectional with and without a past
([2, B, N, P, head]) and its present, an attention bias, a scale and mask_filter_value of its own,
a query row whose keys are all masked; QAttention (the dynamic quantizer's form) with scales
per tensor and per column; QEmbedLayerNormalization with uint8 and int8 tables; MultiHeadAttention for self- and cross-attention (key and
value [B, L, D] with a bias, or a [B, N, L, head] cache), with a past, masks, unidirectional and
an attention bias; float16 Attention and MultiHeadAttention (inputs, weights and outputs
float16, expanded as float32 between Casts); EmbedLayerNormalization with and without segments, mask
and position ids (given per row and broadcast), with its optional outputs; and one encoder layer
as the optimizer writes it (EmbedLayerNormalization, Attention on its mask_index,
SkipLayerNormalization, BiasGelu, SkipLayerNormalization).

usage: make_bert_contrib_models.py --out DIR [--list JSON] [--bert-base]
--list also writes the model list (names, input shapes, the integer inputs' values) that
check_real_models.py reads; bert_contrib_models.json is that file. --bert-base also writes
bert_base_optimized.onnx (435 MB) and its inputs (input_ids, segment_ids, attention_mask .npy,
[1, 128]): BERT-base's shapes (12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522) in
the optimizer's form, random weights, to time against ONNX Runtime on the same file (not a test).
Weights come from a fixed seed, so the files are the same on every run.
"""

import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
GENERATOR = "tests/genai/make_bert_contrib_models.py"


class Case:
    def __init__(self, name, what):
        self.name, self.what = name, what
        self.rng = np.random.default_rng(len(name) * 7919)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.feeds, self.values, self.ops = {}, {}, {}

    def input(self, name, shape, elem=TensorProto.FLOAT, values=None):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        self.feeds[name] = list(shape)
        if values is not None:
            self.values[name] = [int(v) for v in np.asarray(values).reshape(-1)]
        return name

    def weight(self, name, shape, scale=0.5, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(
            (self.rng.uniform(-1, 1, shape) * scale).astype(dtype), name))
        return name

    def node(self, op, inputs, outputs, domain="", **attrs):
        """`outputs`: (name, elem, shape) triples, or None for an omitted optional output; each
        named output becomes a graph output."""
        names = []
        for out in outputs:
            if out is None:
                names.append("")
                continue
            names.append(out[0])
            self.outputs.append(helper.make_tensor_value_info(out[0], out[1], out[2]))
        self.nodes.append(helper.make_node(op, inputs, names, name=f"{op}_{len(self.nodes)}",
                                           domain=domain, **attrs))
        key = f"{domain}.{op}" if domain else op
        self.ops[key] = self.ops.get(key, 0) + 1

    def inner(self, op, inputs, output, domain="", **attrs):
        """A node whose output is not a graph output."""
        self.nodes.append(helper.make_node(op, inputs, [output], name=f"{op}_{len(self.nodes)}",
                                           domain=domain, **attrs))
        return output

    def save(self, out_dir):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid(MS, 1)],
                                  producer_name="epctx " + GENERATOR)
        model.ir_version = 8
        path = os.path.join(out_dir, self.name + ".onnx")
        onnx.save(model, path + ".part")
        os.replace(path + ".part", path)
        entry = {"name": self.name, "what": self.what, "generate": GENERATOR,
                 "file": self.name + ".onnx", "inputs": self.feeds}
        if self.values:
            entry["values"] = self.values
        return entry


def attention(name, what, batch=2, seq=7, hidden=32, heads=4, mask=None, past=None,
              present=False, attention_bias=False, half=False, **attrs):
    """One Attention node. mask: None or (shape, values) of an int32 mask_index; past: None or
    the past length P ([2, B, N, P, head] input); half: float16 inputs, weights and outputs."""
    c = Case(name, what)
    head = hidden // heads
    elem, dtype = (TensorProto.FLOAT16, np.float16) if half else (TensorProto.FLOAT, np.float32)
    x = c.input("input", [batch, seq, hidden], elem)
    inputs = [x, c.weight("weights", [hidden, 3 * hidden], dtype=dtype),
              c.weight("bias", [3 * hidden], dtype=dtype)]
    inputs.append(c.input("mask_index", mask[0], TensorProto.INT32, mask[1]) if mask else "")
    total = seq + (past or 0)
    inputs.append(c.input("past", [2, batch, heads, past, head], elem) if past is not None else "")
    inputs.append(c.input("attention_bias", [batch, heads, seq, total], elem)
                  if attention_bias else "")
    while inputs[-1] == "":
        inputs.pop()
    outputs = [("output", elem, [batch, seq, hidden])]
    if present:
        outputs.append(("present", elem, [2, batch, heads, total, head]))
    c.node("Attention", inputs, outputs, domain=MS, num_heads=heads, **attrs)
    # Expanded into ONNX operators: no Attention of ORT's is left in the program.
    c.ops = {"com.microsoft.Attention": 0}
    return c


def qattention(name, what, batch=2, seq=7, hidden=32, heads=4, mask=None, past=None,
               present=False, per_column=False, weight_zero_point=True, **attrs):
    """DynamicQuantizeLinear of a float input, then one QAttention node on it (ORT's dynamic
    quantizer's form): int8 weight, float bias, the input's scale and zero point from the
    DynamicQuantizeLinear, a weight scale per tensor or per column."""
    c = Case(name, what)
    head = hidden // heads
    x = c.input("input", [batch, seq, hidden])
    w = c.rng.uniform(-1, 1, (hidden, 3 * hidden)).astype(np.float32) * 0.3
    if per_column:
        w_scale = (np.abs(w).max(axis=0) / 127).astype(np.float32)
    else:
        w_scale = np.float32(np.abs(w).max() / 127)
    w_q = np.clip(np.round(w / w_scale), -127, 127).astype(np.int8)
    c.inits += [numpy_helper.from_array(w_q, "weight"),
                numpy_helper.from_array(np.asarray(w_scale), "weight_scale")]
    c.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], ["x_q", "x_scale", "x_zero"],
                                    name="quantize_input"))
    inputs = ["x_q", "weight", c.weight("bias", [3 * hidden]), "x_scale", "weight_scale",
              c.input("mask_index", mask[0], TensorProto.INT32, mask[1]) if mask else "",
              "x_zero", ""]
    if weight_zero_point:
        c.inits.append(numpy_helper.from_array(np.int8(0), "weight_zero_point"))
        inputs[7] = "weight_zero_point"
    total = seq + (past or 0)
    inputs.append(c.input("past", [2, batch, heads, past, head]) if past is not None else "")
    while inputs[-1] == "":
        inputs.pop()
    outputs = [("output", TensorProto.FLOAT, [batch, seq, hidden])]
    if present:
        outputs.append(("present", TensorProto.FLOAT, [2, batch, heads, total, head]))
    c.node("QAttention", inputs, outputs, domain=MS, num_heads=heads, **attrs)
    c.ops = {"com.microsoft.QAttention": 0}
    return c


def mha(name, what, batch=2, seq=5, kv=None, hidden=32, heads=4, bias=True, mask=None,
        past=None, present=False, bnsh_kv=False, attention_bias=None, half=False, **attrs):
    """One MultiHeadAttention node. kv: the key/value length (default seq); mask: None or (shape,
    values) of key_padding_mask; past: None or P (past_key / past_value [B, N, P, head]);
    attention_bias: None or its shape; half: float16 inputs, bias and outputs."""
    c = Case(name, what)
    head = hidden // heads
    kv = seq if kv is None else kv
    elem, dtype = (TensorProto.FLOAT16, np.float16) if half else (TensorProto.FLOAT, np.float32)
    q = c.input("query", [batch, seq, hidden], elem)
    if bnsh_kv:
        k = c.input("key", [batch, heads, kv, head], elem)
        v = c.input("value", [batch, heads, kv, head], elem)
    else:
        k = c.input("key", [batch, kv, hidden], elem)
        v = c.input("value", [batch, kv, hidden], elem)
    inputs = [q, k, v, c.weight("bias", [3 * hidden], dtype=dtype) if bias else "",
              c.input("key_padding_mask", mask[0], TensorProto.INT32, mask[1]) if mask else "",
              c.input("attention_bias", attention_bias, elem) if attention_bias else ""]
    if past is not None:
        inputs += [c.input("past_key", [batch, heads, past, head], elem),
                   c.input("past_value", [batch, heads, past, head], elem)]
    while inputs[-1] == "":
        inputs.pop()
    total = kv + (past or 0)
    outputs = [("output", elem, [batch, seq, hidden])]
    if present:
        outputs += [("present_key", elem, [batch, heads, total, head]),
                    ("present_value", elem, [batch, heads, total, head])]
    c.node("MultiHeadAttention", inputs, outputs, domain=MS, num_heads=heads, **attrs)
    c.ops = {"com.microsoft.MultiHeadAttention": 0}
    return c


def embed_layer_norm(name, what, batch=2, seq=6, hidden=24, vocab=50, positions=16,
                     segments=True, mask=True, position_ids=None, sum_output=True, **attrs):
    """One EmbedLayerNormalization node; position_ids: None, "rows" ([B, S]) or "broadcast"."""
    c = Case(name, what)
    rng = np.random.default_rng(len(name))
    ids = c.input("input_ids", [batch, seq], TensorProto.INT32, rng.integers(0, vocab, (batch, seq)))
    seg = c.input("segment_ids", [batch, seq], TensorProto.INT32,
                  rng.integers(0, 2, (batch, seq))) if segments else ""
    inputs = [ids, seg, c.weight("word_embedding", [vocab, hidden], 1.0),
              c.weight("position_embedding", [positions, hidden], 1.0),
              c.weight("segment_embedding", [2, hidden], 1.0) if segments else "",
              c.weight("gamma", [hidden]), c.weight("beta", [hidden])]
    if mask:
        # 1s, then padding; one element that is neither 0 nor 1 (ORT counts only the 1s).
        m = np.ones((batch, seq), np.int32)
        m[1, seq - 2:] = 0
        m[0, seq - 1] = 2
        inputs.append(c.input("mask", [batch, seq], TensorProto.INT32, m))
    else:
        inputs.append("")
    if position_ids == "rows":
        inputs.append(c.input("position_ids", [batch, seq], TensorProto.INT32,
                              rng.integers(0, positions, (batch, seq))))
    elif position_ids == "broadcast":
        inputs.append(c.input("position_ids", [1, seq], TensorProto.INT32,
                              np.arange(seq)[::-1] + 3))
    while inputs[-1] == "":
        inputs.pop()
    outputs = [("output", TensorProto.FLOAT, [batch, seq, hidden]),
               ("mask_index", TensorProto.INT32, [batch])]
    if sum_output:
        outputs.append(("embedding_sum", TensorProto.FLOAT, [batch, seq, hidden]))
    c.node("EmbedLayerNormalization", inputs, outputs, domain=MS, **attrs)
    return c


def qembed_layer_norm(name, what, batch=2, seq=6, hidden=24, vocab=50, positions=16,
                      segments=True, mask=True, signed=False):
    """One QEmbedLayerNormalization node (the dynamic quantizer's form): each table, gamma and
    beta quantized per tensor to uint8 (or int8) with a scale and zero point of its own."""
    c = Case(name, what)
    rng = np.random.default_rng(len(name) + 100)
    ids = c.input("input_ids", [batch, seq], TensorProto.INT32, rng.integers(0, vocab, (batch, seq)))
    seg = c.input("segment_ids", [batch, seq], TensorProto.INT32,
                  rng.integers(0, 2, (batch, seq))) if segments else ""
    qtype = np.int8 if signed else np.uint8
    lo, hi = (-128, 127) if signed else (0, 255)

    def table(stem, shape, center):
        c.inits += [
            numpy_helper.from_array(rng.integers(lo, hi + 1, shape).astype(qtype), stem + "_q"),
            numpy_helper.from_array(np.float32(rng.uniform(0.005, 0.02)), stem + "_scale"),
            numpy_helper.from_array(np.asarray(center, qtype), stem + "_zero")]
        return stem

    zero = 0 if signed else 128
    names = [table("word", [vocab, hidden], zero), table("position", [positions, hidden], zero),
             table("segment", [2, hidden], zero) if segments else None,
             table("gamma", [hidden], -100 if signed else 28),
             table("beta", [hidden], zero)]
    m = ""
    if mask:
        values = np.ones((batch, seq), np.int32)
        values[1, seq - 2:] = 0
        m = c.input("mask", [batch, seq], TensorProto.INT32, values)
    inputs = [ids, seg] + [n + "_q" if n else "" for n in names] + [m]
    inputs += [n + "_scale" if n else "" for n in names]
    inputs += [n + "_zero" if n else "" for n in names]
    c.node("QEmbedLayerNormalization", inputs,
           [("layernorm_out", TensorProto.FLOAT, [batch, seq, hidden]),
            ("mask_index_out", TensorProto.INT32, [batch])], domain=MS, epsilon=1e-5)
    c.ops = {"com.microsoft.QEmbedLayerNormalization": 0,
             "com.microsoft.EmbedLayerNormalization": 1}
    return c


def gelus():
    c = Case("gelu", "com.microsoft Gelu on inputs in [-4, 4)")
    x = c.input("x", [3, 5, 16])
    c.inits.append(numpy_helper.from_array(np.array(4.0, np.float32), "four"))
    wide = c.inner("Mul", [x, "four"], "wide")
    c.node("Gelu", [wide], [("ms_gelu", TensorProto.FLOAT, [3, 5, 16])], domain=MS)
    return c


def encoder_layer():
    """One BERT layer as ORT's optimizer writes it, batch 2 with the second row padded."""
    c = Case("bert_layer_optimized", "EmbedLayerNormalization, Attention on its mask_index, "
             "SkipLayerNormalization, MatMul + BiasGelu, SkipLayerNormalization (hidden 64, "
             "4 heads, batch 2 of 9 and 6 tokens)")
    b, s, h, ff = 2, 9, 64, 128
    rng = np.random.default_rng(5)
    ids = c.input("input_ids", [b, s], TensorProto.INT32, rng.integers(0, 100, (b, s)))
    seg = c.input("segment_ids", [b, s], TensorProto.INT32, np.zeros((b, s)))
    m = np.ones((b, s), np.int32)
    m[1, 6:] = 0
    mask = c.input("attention_mask", [b, s], TensorProto.INT32, m)
    c.nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        [ids, seg, c.weight("word", [100, h], 1.0), c.weight("pos", [32, h], 1.0),
         c.weight("seg", [2, h], 1.0), c.weight("ln0_g", [h]), c.weight("ln0_b", [h]), mask],
        ["emb", "mask_index"], name="embed", domain=MS, epsilon=1e-12))
    c.nodes.append(helper.make_node(
        "Attention", ["emb", c.weight("qkv_w", [h, 3 * h], 0.2), c.weight("qkv_b", [3 * h]),
                      "mask_index"], ["attn"], name="attention", domain=MS, num_heads=4))
    c.inner("MatMul", ["attn", c.weight("o_w", [h, h], 0.2)], "attn_o")
    c.nodes.append(helper.make_node(
        "SkipLayerNormalization", ["attn_o", "emb", c.weight("ln1_g", [h]), c.weight("ln1_b", [h]),
                                   c.weight("o_b", [h])], ["ln1"], name="skip1", domain=MS,
        epsilon=1e-12))
    c.inner("MatMul", ["ln1", c.weight("ff1_w", [h, ff], 0.2)], "ff1")
    c.nodes.append(helper.make_node("BiasGelu", ["ff1", c.weight("ff1_b", [ff])], ["ff1_act"],
                                    name="gelu", domain=MS))
    c.inner("MatMul", ["ff1_act", c.weight("ff2_w", [ff, h], 0.2)], "ff2")
    c.node("SkipLayerNormalization", ["ff2", "ln1", c.weight("ln2_g", [h]), c.weight("ln2_b", [h]),
                                      c.weight("ff2_b", [h])],
           [("hidden_states", TensorProto.FLOAT, [b, s, h])], domain=MS, epsilon=1e-12)
    c.ops = {"com.microsoft.Attention": 0, "com.microsoft.EmbedLayerNormalization": 1,
             "com.microsoft.SkipLayerNormalization": 2, "com.microsoft.BiasGelu": 1}
    return c


def bert_base_optimized(out_dir):
    """BERT-base's shapes in the optimizer's form: EmbedLayerNormalization, then 12 layers of
    Attention, MatMul, SkipLayerNormalization, MatMul, BiasGelu, MatMul, SkipLayerNormalization."""
    rng = np.random.default_rng(0)
    h, ff, layers, vocab, heads, seq = 768, 3072, 12, 30522, 12, 128
    inits, nodes = [], []

    def w(name, shape):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def const(name, shape, value):
        inits.append(numpy_helper.from_array(np.full(shape, value, np.float32), name))
        return name

    nodes.append(helper.make_node(
        "EmbedLayerNormalization",
        ["input_ids", "segment_ids", w("word", [vocab, h]), w("position", [512, h]),
         w("segment", [2, h]), const("ln0_gamma", [h], 1), const("ln0_beta", [h], 0),
         "attention_mask"], ["hidden_0", "mask_index"], domain=MS, epsilon=1e-12))
    x = "hidden_0"
    for i in range(layers):
        p = f"layer{i}_"
        nodes += [
            helper.make_node("Attention", [x, w(p + "qkv", [h, 3 * h]),
                                           const(p + "qkv_bias", [3 * h], 0), "mask_index"],
                             [p + "attention"], domain=MS, num_heads=heads),
            helper.make_node("MatMul", [p + "attention", w(p + "out", [h, h])], [p + "out_mm"]),
            helper.make_node("SkipLayerNormalization",
                             [p + "out_mm", x, const(p + "ln1_gamma", [h], 1),
                              const(p + "ln1_beta", [h], 0), const(p + "out_bias", [h], 0)],
                             [p + "ln1"], domain=MS, epsilon=1e-12),
            helper.make_node("MatMul", [p + "ln1", w(p + "ffn1", [h, ff])], [p + "ffn1_mm"]),
            helper.make_node("BiasGelu", [p + "ffn1_mm", const(p + "ffn1_bias", [ff], 0)],
                             [p + "gelu"], domain=MS),
            helper.make_node("MatMul", [p + "gelu", w(p + "ffn2", [ff, h])], [p + "ffn2_mm"]),
        ]
        y = "last_hidden_state" if i == layers - 1 else f"hidden_{i + 1}"
        nodes.append(helper.make_node(
            "SkipLayerNormalization", [p + "ffn2_mm", p + "ln1", const(p + "ln2_gamma", [h], 1),
                                       const(p + "ln2_beta", [h], 0),
                                       const(p + "ffn2_bias", [h], 0)],
            [y], domain=MS, epsilon=1e-12))
        x = y
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, ["batch", "sequence"])
              for n in ("input_ids", "segment_ids", "attention_mask")]
    graph = helper.make_graph(nodes, "bert_base_optimized", inputs, [helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", h])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(MS, 1)],
                              producer_name="epctx " + GENERATOR)
    model.ir_version = 8
    path = os.path.join(out_dir, "bert_base_optimized.onnx")
    onnx.save(model, path + ".part")
    os.replace(path + ".part", path)
    np.save(os.path.join(out_dir, "input_ids.npy"),
            rng.integers(0, vocab, (1, seq)).astype(np.int32))
    np.save(os.path.join(out_dir, "segment_ids.npy"), np.zeros((1, seq), np.int32))
    np.save(os.path.join(out_dir, "attention_mask.npy"), np.ones((1, seq), np.int32))


CASES = [
    lambda: attention("attention_no_mask", "B 2, S 7, hidden 32, 4 heads, no mask"),
    lambda: attention("attention_one_head", "1 head of 16, no mask", hidden=16, heads=1),
    lambda: attention("attention_mask_end", "mask_index [B]: rows end at 7 and 4",
                      mask=([2], [7, 4])),
    lambda: attention("attention_mask_end_start", "mask_index [2B]: ends 7 and 6, starts 0 and 2 "
                      "(left padding)", mask=([4], [7, 6, 0, 2])),
    lambda: attention("attention_mask_2d", "raw mask [B, S] with padding on the right of row 2",
                      mask=([2, 7], [1] * 7 + [1] * 5 + [0] * 2)),
    lambda: attention("attention_mask_3d", "raw mask [B, S, S], a different pattern per query",
                      mask=([2, 7, 7], (np.arange(98) % 3 != 1).astype(np.int32))),
    lambda: attention("attention_causal_prefill", "unidirectional prompt of 6, present output",
                      seq=6, present=True, unidirectional=1),
    lambda: attention("attention_gpt2_past", "unidirectional, past of 5, 3 new tokens, a [B, T] "
                      "mask with left padding in row 2, present output", seq=3, past=5,
                      present=True, mask=([2, 8], [1] * 8 + [0, 0] + [1] * 6), unidirectional=1),
    lambda: attention("attention_gpt2_decode", "unidirectional decode step after a past of 11",
                      seq=1, past=11, present=True, unidirectional=1),
    lambda: attention("attention_bias_scale", "an attention bias [B, N, S, T], scale 0.3, "
                      "mask_filter_value -1000 with a 2-D mask", attention_bias=True, scale=0.3,
                      mask_filter_value=-1000.0, mask=([2, 7], [1] * 12 + [0] * 2)),
    lambda: attention("attention_all_masked_row", "row 2 of mask_index [B] ends at 0: all its "
                      "keys masked (ORT averages them by their scores)", mask=([2], [7, 0])),
    lambda: attention("attention_float16_gpt2_past", "float16 inputs, weights and outputs: "
                      "unidirectional, past of 5, 3 new tokens, a [B, T] mask, present output",
                      seq=3, past=5, present=True, mask=([2, 8], [1] * 8 + [0, 0] + [1] * 6),
                      unidirectional=1, half=True),
    lambda: qattention("qattention_mask2d", "QAttention on DynamicQuantizeLinear's output, "
                       "weight scale per tensor, both zero points, a [B, T] mask",
                       mask=([2, 7], [1] * 12 + [0] * 2)),
    lambda: qattention("qattention_gpt2_past", "QAttention, weight scale per column, no weight "
                       "zero point, unidirectional with a past of 4 and its present", seq=3,
                       past=4, present=True, per_column=True, weight_zero_point=False,
                       unidirectional=1),
    lambda: mha("mha_self_mask2d", "separate Q, K, V of [2, 5, 32], bias, key_padding_mask [B, T] "
                "with padding in row 2", mask=([2, 5], [1] * 5 + [1] * 3 + [0] * 2)),
    lambda: mha("mha_cross", "cross-attention: 5 queries over 9 keys, bias, no mask", kv=9),
    lambda: mha("mha_cross_bnsh", "cross-attention cache: key and value [B, N, 9, head], no bias",
                kv=9, bias=False, bnsh_kv=True),
    lambda: mha("mha_decode_past", "unidirectional decode step after a past of 6, bias, a [B, T] "
                "mask, present outputs", seq=1, past=6, present=True,
                mask=([2, 7], [1] * 7 + [0] + [1] * 6), unidirectional=1),
    lambda: mha("mha_causal_bias_scale", "unidirectional prompt, attention bias [1, 4, 5, 5], "
                "scale 0.25, no bias input", bias=False, attention_bias=[1, 4, 5, 5], scale=0.25,
                unidirectional=1),
    lambda: mha("mha_float16_decode_past", "float16 inputs, bias and outputs: unidirectional "
                "decode step after a past of 6, a [B, T] mask, present outputs", seq=1, past=6,
                present=True, mask=([2, 7], [1] * 7 + [0] + [1] * 6), unidirectional=1,
                half=True),
    lambda: mha("mha_cross_float16_bias", "float16 cross-attention: 5 queries over 9 keys, "
                "an attention bias [1, 4, 5, 9]", kv=9, attention_bias=[1, 4, 5, 9], half=True),
    lambda: mha("mha_mask1d", "key_padding_mask [B]: key lengths 5 and 3", mask=([2], [5, 3])),
    lambda: mha("mha_mask3d", "key_padding_mask [B, S, T]",
                mask=([2, 5, 5], (np.arange(50) % 4 != 2).astype(np.int32))),
    lambda: embed_layer_norm("embed_layer_norm_full", "segments, mask (with a 2 ORT does not "
                             "count), mask_index and embedding_sum outputs, epsilon 1e-5",
                             epsilon=1e-5),
    lambda: embed_layer_norm("embed_layer_norm_distilbert", "no segments, no mask (mask_index "
                             "0), no embedding_sum, the default epsilon", segments=False,
                             mask=False, sum_output=False),
    lambda: embed_layer_norm("embed_layer_norm_position_ids", "position ids per row", seq=5,
                             position_ids="rows"),
    lambda: embed_layer_norm("embed_layer_norm_position_broadcast", "position ids [1, S] for "
                             "every row", position_ids="broadcast", batch=3),
    lambda: qembed_layer_norm("qembed_layer_norm", "QEmbedLayerNormalization: uint8 tables with "
                              "segments and a mask, epsilon 1e-5"),
    lambda: qembed_layer_norm("qembed_layer_norm_int8", "QEmbedLayerNormalization: int8 tables, "
                              "no segments, no mask", segments=False, mask=False, signed=True),
    gelus,
    encoder_layer,
]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--list", help="also write the model list here")
    parser.add_argument("--bert-base", action="store_true",
                        help="also write bert_base_optimized.onnx and its inputs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.bert_base:
        bert_base_optimized(args.out)
    entries = []
    for case in CASES:
        c = case()
        e = c.save(args.out)
        e["expect_ops"] = c.ops
        entries.append(e)
    if args.list:
        listing = {
            "comment": "com.microsoft Attention, QAttention, MultiHeadAttention, "
                       "EmbedLayerNormalization, QEmbedLayerNormalization and Gelu in graphs written by make_bert_contrib_models.py (--list writes "
                       "this file), checked against ONNX Runtime by "
                       "tests/real_models/check_real_models.py --list "
                       "tests/genai/bert_contrib_models.json. values: the integer inputs; float "
                       "inputs are seeded uniform in [-1, 1). expect_ops: Attention, QAttention, "
                       "MultiHeadAttention and QEmbedLayerNormalization are expanded into ONNX "
                       "operators (0 left), the others run on their own kernels.",
            "models": entries,
        }
        with open(args.list, "w") as f:
            json.dump(listing, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
