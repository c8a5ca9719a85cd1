#!/usr/bin/python3
"""Exports a Llama-style decoder (RMSNorm, rotary positions, grouped-query attention, SwiGLU) as
the two graphs a generative model ships as, with PyTorch's own outputs as references:

  NAME_prefill.onnx  input_ids [batch, seq]                -> logits [batch, seq, vocab],
                                                              present.L.key/value [batch, kv_heads, seq, head_dim]
  NAME_decode.onnx   input_ids [batch, 1],
                     past.L.key/value [batch, kv_heads, past, head_dim]
                                                           -> logits [batch, 1, vocab],
                                                              present.L.key/value [.., past + 1, ..]

Both are exported from one module with seeded weights, so every weight of one is a weight of the
other (`epctx compile -m NAME_prefill.onnx -m NAME_decode.onnx` stores them once). Positions come
from the past's length (the graph computes them), so a decode loop feeds only the new token and
the previous step's presents.

Configurations: `micro` (1 layer, hidden 16: fuzz seeds of about 10 KB), `tiny` (2 layers,
hidden 64: for tests), `smollm` (SmolLM-135M's shapes: vocab
49152, hidden 576, 30 layers, 9 heads, 3 KV heads, FFN 1536: for bench/llm). The weights are
random (seeded), not a trained model's: the greedy tokens are a property of the arithmetic.

Into --out: the two .onnx files (weights inline; a model over 2 GB would need external data),
NAME_prefill.input_ids.npy (a seeded prompt), NAME_prefill.logits.npy (PyTorch's logits for it),
NAME_decode.*.npy (one decode step after that prompt: its inputs and PyTorch's logits) and
NAME.json (the configuration).

usage: export_llama.py --config tiny --out DIR [--prompt-length 16] [--name NAME]
"""

import argparse
import json
import math
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_common import OPSET, atomic_path, die, import_deps, save_npy  # noqa: E402

CONFIGS = {
    "micro": dict(vocab=16, hidden=16, layers=1, heads=1, kv_heads=1, ffn=24, max_pos=32,
                  rope_theta=10000.0, rms_eps=1e-5, seed=7003),
    "tiny": dict(vocab=256, hidden=64, layers=2, heads=4, kv_heads=2, ffn=160, max_pos=512,
                 rope_theta=10000.0, rms_eps=1e-5, seed=7001),
    "smollm": dict(vocab=49152, hidden=576, layers=30, heads=9, kv_heads=3, ffn=1536,
                   max_pos=2048, rope_theta=10000.0, rms_eps=1e-5, seed=7002),
}
DEPS = (("numpy", "python3-numpy"), ("onnx", "python3-onnx"), ("torch", "python3-torch"))


def define_model(torch, c):
    nn = torch.nn
    head_dim = c["hidden"] // c["heads"]
    group = c["heads"] // c["kv_heads"]

    class RmsNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(c["hidden"]))

        def forward(self, x):
            variance = x.pow(2).mean(-1, keepdim=True)
            return self.weight * (x * torch.rsqrt(variance + c["rms_eps"]))

    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            h = c["hidden"]
            self.q_proj = nn.Linear(h, c["heads"] * head_dim, bias=False)
            self.k_proj = nn.Linear(h, c["kv_heads"] * head_dim, bias=False)
            self.v_proj = nn.Linear(h, c["kv_heads"] * head_dim, bias=False)
            self.o_proj = nn.Linear(c["heads"] * head_dim, h, bias=False)

        def forward(self, x, cos, sin, past_k, past_v):
            batch, seq, _ = x.shape
            q = self.q_proj(x).view(batch, seq, c["heads"], head_dim).transpose(1, 2)
            k = self.k_proj(x).view(batch, seq, c["kv_heads"], head_dim).transpose(1, 2)
            v = self.v_proj(x).view(batch, seq, c["kv_heads"], head_dim).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            if past_k is not None:
                k = torch.cat([past_k, k], dim=2)
                v = torch.cat([past_v, v], dim=2)
            present_k, present_v = k, v
            total = k.shape[2]
            if group > 1:  # each KV head serves `group` query heads
                k = k[:, :, None].expand(batch, c["kv_heads"], group, total, head_dim)
                k = k.reshape(batch, c["heads"], total, head_dim)
                v = v[:, :, None].expand(batch, c["kv_heads"], group, total, head_dim)
                v = v.reshape(batch, c["heads"], total, head_dim)
            scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(head_dim)
            # Causal: query i (at position total - seq + i) sees keys up to its own position.
            rows = torch.arange(seq).unsqueeze(1) + (total - seq)
            cols = torch.arange(total).unsqueeze(0)
            scores = scores.masked_fill(cols > rows, float("-inf"))
            probs = torch.softmax(scores, dim=-1)
            out = torch.matmul(probs, v).transpose(1, 2).reshape(batch, seq, -1)
            return self.o_proj(out), present_k, present_v

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(c["hidden"], c["ffn"], bias=False)
            self.up_proj = nn.Linear(c["hidden"], c["ffn"], bias=False)
            self.down_proj = nn.Linear(c["ffn"], c["hidden"], bias=False)

        def forward(self, x):
            gate = self.gate_proj(x)
            return self.down_proj(gate * torch.sigmoid(gate) * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = RmsNorm()
            self.self_attn = Attention()
            self.post_attention_layernorm = RmsNorm()
            self.mlp = Mlp()

        def forward(self, x, cos, sin, past_k, past_v):
            attended, pk, pv = self.self_attn(self.input_layernorm(x), cos, sin, past_k, past_v)
            x = x + attended
            return x + self.mlp(self.post_attention_layernorm(x)), pk, pv

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
            self.layers = nn.ModuleList(Layer() for _ in range(c["layers"]))
            self.norm = RmsNorm()
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
            inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, head_dim, 2).float() / head_dim))
            t = torch.arange(c["max_pos"]).float()
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos_cached", emb.cos())
            self.register_buffer("sin_cached", emb.sin())

        def forward(self, input_ids, pasts):
            seq = input_ids.shape[1]
            past_len = 0 if pasts is None else pasts[0].shape[2]
            positions = torch.arange(seq) + past_len
            cos = self.cos_cached[positions].unsqueeze(0).unsqueeze(0)
            sin = self.sin_cached[positions].unsqueeze(0).unsqueeze(0)
            x = self.embed_tokens(input_ids)
            presents = []
            for i, layer in enumerate(self.layers):
                pk = None if pasts is None else pasts[2 * i]
                pv = None if pasts is None else pasts[2 * i + 1]
                x, k, v = layer(x, cos, sin, pk, pv)
                presents += [k, v]
            return (self.lm_head(self.norm(x)), *presents)

    class Prefill(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids, None)

    class Decode(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, *pasts):
            return self.model(input_ids, list(pasts))

    model = Llama()
    return model, Prefill(model).eval(), Decode(model).eval()


def init_weights(torch, model, c):
    """Seeded weights of a plausible scale: activations stay O(1) through every layer."""
    gen = torch.Generator().manual_seed(c["seed"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("layernorm.weight") or name == "norm.weight":
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name == "embed_tokens.weight":
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                fan_in = p.shape[1]
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(fan_in))


def io_names(c):
    pasts, presents = [], []
    for i in range(c["layers"]):
        pasts += [f"past.{i}.key", f"past.{i}.value"]
        presents += [f"present.{i}.key", f"present.{i}.value"]
    return pasts, presents


def seeded_run(np, torch, c, prompt_length):
    """The configuration's module with its seeded weights, run as a generation would start: a
    seeded prompt through the prefill, its greedy token through one decode step. Returns
    (model, prefill, decode, prompt, prefill logits, token, past arrays, decode logits), the
    arrays as NumPy's. export_llama_genai.py writes the same model and references."""
    torch.manual_seed(c["seed"])
    model, prefill, decode = define_model(torch, c)
    init_weights(torch, model, c)
    model.eval()
    rng = np.random.default_rng(c["seed"])
    prompt = rng.integers(0, c["vocab"], size=(1, prompt_length), dtype=np.int64)
    with torch.no_grad():
        prefill_out = prefill(torch.from_numpy(prompt))
        logits = prefill_out[0].numpy()
        token = np.array([[int(logits[0, -1].argmax())]], dtype=np.int64)
        decode_logits = decode(torch.from_numpy(token), *prefill_out[1:])[0].numpy()
    pasts = [t.numpy() for t in prefill_out[1:]]
    return model, prefill, decode, prompt, logits, token, pasts, decode_logits


def export(mods, c, name, out_dir, prompt_length):
    np, torch, onnx = mods["numpy"], mods["torch"], mods["onnx"]
    _, prefill, decode, prompt, logits, next_token, past_arrays, decode_logits = seeded_run(
        np, torch, c, prompt_length)
    pasts, presents = io_names(c)

    kv_axes = {0: "batch", 2: "past_sequence"}
    present_axes = {0: "batch", 2: "total_sequence"}
    files = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about Python ints taken from sizes
        for stem, module, args, inputs, axes in (
            ("prefill", prefill, (torch.from_numpy(prompt),), ["input_ids"],
             {"input_ids": {0: "batch", 1: "sequence"}}),
            ("decode", decode, (torch.from_numpy(next_token), *[torch.from_numpy(p) for p in past_arrays]),
             ["input_ids"] + pasts, dict({"input_ids": {0: "batch"}}, **{p: kv_axes for p in pasts})),
        ):
            path = os.path.join(out_dir, f"{name}_{stem}.onnx")
            tmp = atomic_path(path)
            dynamic = dict(axes, logits={0: "batch", 1: "sequence"} if stem == "prefill" else {0: "batch"},
                           **{p: present_axes for p in presents})
            with torch.no_grad():
                torch.onnx.export(module, args, tmp, export_params=True, opset_version=OPSET,
                                  input_names=inputs, output_names=["logits"] + presents,
                                  dynamic_axes=dynamic, do_constant_folding=True)
            onnx.checker.check_model(onnx.load(tmp))
            files[stem] = (tmp, path)

    save_npy(np, os.path.join(out_dir, f"{name}_prefill.input_ids.npy"), prompt)
    save_npy(np, os.path.join(out_dir, f"{name}_prefill.logits.npy"), logits)
    save_npy(np, os.path.join(out_dir, f"{name}_decode.input_ids.npy"), next_token)
    for p, arr in zip(pasts, past_arrays):
        save_npy(np, os.path.join(out_dir, f"{name}_decode.{p}.npy"), arr)
    save_npy(np, os.path.join(out_dir, f"{name}_decode.logits.npy"), decode_logits)
    for tmp, path in files.values():
        os.replace(tmp, path)
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(dict(c, name=name, prompt_length=prompt_length, opset=OPSET,
                       torch=torch.__version__), f, indent=2)
        f.write("\n")


def exporter_main(argv, doc, export_fn, default_suffix, written):
    """The command line of this exporter and of export_llama_genai.py: --config, --out, --name
    (default llama_CONFIG + default_suffix), --prompt-length; export_fn(mods, config, name,
    out_dir, prompt_length) writes, written(name) says what."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--name", help=f"file name stem (default: llama_CONFIG{default_suffix})")
    p.add_argument("--prompt-length", type=int, default=16)
    args = p.parse_args(argv)
    if args.prompt_length < 1:
        die("--prompt-length must be at least 1")
    mods = import_deps(__file__, DEPS)
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    name = args.name or f"llama_{args.config}{default_suffix}"
    export_fn(mods, CONFIGS[args.config], name, out_dir, args.prompt_length)
    print(f"wrote {written(name)} with references into {out_dir}")
    return 0


def main(argv=None):
    return exporter_main(argv, __doc__, export, "",
                         lambda name: f"{name}_prefill.onnx and {name}_decode.onnx")


if __name__ == "__main__":
    sys.exit(main())
