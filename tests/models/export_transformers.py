#!/usr/bin/python3
"""Export seeded, randomly initialised transformer encoders/decoders and a log-mel front end.

What: for each requested model this writes, into --out DIR (conventions of export_common.py):
    <name>.onnx             opset 17
    <name>.<input>.npy      the seeded inputs
    <name>.<output>.npy     the reference output for exactly those inputs
and its entry in DIR/manifest.json, shared with export_torchvision.py.

Models (--models; default: the small ones the test suite uses):
    bert_tiny      BERT encoder, 2 layers, hidden 128, 2 heads, FFN 512, vocab 1000, seq 16
    gpt2_tiny      GPT-2 decoder, 2 layers, hidden 64, 4 heads, FFN 256, vocab 500, seq 16
    logmel         log-mel spectrogram of 1 s of 16 kHz audio (~0.4 MB)
    bert_base      BERT-base: 12 layers, hidden 768, 12 heads, FFN 3072, vocab 30522, seq 128
                   (440 MB; exported when asked, by the benchmark)
    gpt2_decoder   GPT-2-style: 6 layers, hidden 512, 8 heads, FFN 2048, vocab 50257, seq 128

The transformers are plain torch.nn modules written below, shaped like Hugging Face's BertModel
and GPT2LMHeadModel (no `transformers` package, no downloads), exported by the TorchScript
exporter with batch and sequence as dynamic axes; their reference is PyTorch's own float32 output.
Weights are drawn as Hugging Face initialises them (normal, std 0.02) from a per-model seed, with
two departures that make the fixtures sensitive: the LayerNorm affine parameters are randomised
mildly (an identity LayerNorm would let a broken scale or bias go unnoticed), and the query and
key projections are drawn with std 1.2/sqrt(hidden), so attention scores have a spread of ~1.5
and the softmax is peaked (with std 0.02 they are ~0.01, the softmax is nearly uniform, and a
wrong 1/sqrt(head_dim) scale or a lost mask would barely change the output).

torch 1.13 cannot export torch.stft to ONNX, so logmel is built with onnx.helper (Pad reflect,
STFT, ReduceSumSquare, MatMul, Max, Log) and its reference is computed with NumPy in float64 from
the same definition; that reference is cross-checked against torch.stft.

Unless --no-verify, each .onnx is also evaluated by the float64 NumPy evaluator in
onnx_numpy_ref.py and compared with the reference (exit 1 above REL_TOL).

Requires Debian packages python3-torch python3-onnx python3-numpy; run with /usr/bin/python3.
"""

import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)

from export_common import OPSET, die, export_groups, import_deps, model_entry, parse_args, \
    publish, rel_err, script_version  # noqa: E402

REL_TOL = 1e-4  # the .onnx in float64 (NumPy) vs the reference, relative to max |ref|

BERT_BASE = dict(layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_pos=512, seq=128)
BERT_TINY = dict(layers=2, hidden=128, heads=2, ffn=512, vocab=1000, max_pos=64, seq=16)
GPT2_DECODER = dict(layers=6, hidden=512, heads=8, ffn=2048, vocab=50257, max_pos=1024, seq=128)
GPT2_TINY = dict(layers=2, hidden=64, heads=4, ffn=256, vocab=500, max_pos=64, seq=16)
# 1 s of 16 kHz audio; Whisper-style framing: 25 ms windows, 10 ms hop, 80 mel bands.
LOGMEL = dict(samples=16000, sample_rate=16000, n_fft=400, hop=160, mels=80, floor=1e-10)

MODEL_SPECS = {
    "bert_tiny": [dict(name="bert_tiny", seed=6001, arch="bert", cfg=BERT_TINY, masked=4)],
    "gpt2_tiny": [dict(name="gpt2_tiny", seed=6002, arch="gpt2", cfg=GPT2_TINY)],
    "logmel": [dict(name="logmel", seed=6003, arch="logmel", cfg=LOGMEL)],
    # The last 8 positions are padding (mask 0), as in a batch padded to length 128.
    "bert_base": [dict(name="bert_base", seed=6004, arch="bert", cfg=BERT_BASE, masked=8)],
    "gpt2_decoder": [dict(name="gpt2_decoder", seed=6005, arch="gpt2", cfg=GPT2_DECODER)],
}
DEFAULT_GROUPS = ["bert_tiny", "gpt2_tiny", "logmel"]
DEPS = (("numpy", "python3-numpy"), ("onnx", "python3-onnx"), ("torch", "python3-torch"))


def version_files():
    return [os.path.abspath(__file__), os.path.join(HERE, "export_common.py"),
            os.path.join(HERE, "onnx_numpy_ref.py")]


# --------------------------------------------------------------------------
# modules (defined inside a function: torch is imported only after the dependency check)


def define_modules(torch):
    nn = torch.nn

    class BertEmbeddings(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.word_embeddings = nn.Embedding(c["vocab"], c["hidden"])
            self.position_embeddings = nn.Embedding(c["max_pos"], c["hidden"])
            self.token_type_embeddings = nn.Embedding(2, c["hidden"])
            self.LayerNorm = nn.LayerNorm(c["hidden"], eps=1e-12)
            self.register_buffer("position_ids", torch.arange(c["max_pos"]).expand((1, -1)))
            self.register_buffer("token_type_ids", torch.zeros((1, c["max_pos"]), dtype=torch.long))

        def forward(self, input_ids):
            batch, seq = input_ids.size()
            position_ids = self.position_ids[:, :seq]
            token_type_ids = self.token_type_ids[:, :seq].expand(batch, seq)
            e = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
            return self.LayerNorm(e + self.position_embeddings(position_ids))

    class BertLayer(nn.Module):
        def __init__(self, c):
            super().__init__()
            h = c["hidden"]
            self.heads, self.head_dim = c["heads"], h // c["heads"]
            self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
            self.attention_output = nn.Linear(h, h)
            self.attention_norm = nn.LayerNorm(h, eps=1e-12)
            self.intermediate = nn.Linear(h, c["ffn"])
            self.gelu = nn.GELU()  # exact (erf) GELU, as BERT's "gelu"
            self.output = nn.Linear(c["ffn"], h)
            self.output_norm = nn.LayerNorm(h, eps=1e-12)

        def split_heads(self, x):
            x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
            return x.permute(0, 2, 1, 3)

        def query_key_weights(self):
            return [self.query.weight, self.key.weight]

        def forward(self, hidden, extended_mask):
            q = self.split_heads(self.query(hidden))
            k = self.split_heads(self.key(hidden))
            v = self.split_heads(self.value(hidden))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            probs = torch.softmax(scores + extended_mask, dim=-1)
            context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            context = context.view(context.size()[:-2] + (self.heads * self.head_dim,))
            attended = self.attention_norm(self.attention_output(context) + hidden)
            ffn = self.output(self.gelu(self.intermediate(attended)))
            return self.output_norm(ffn + attended)

    class Bert(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.embeddings = BertEmbeddings(c)
            self.layers = nn.ModuleList(BertLayer(c) for _ in range(c["layers"]))

        def forward(self, input_ids, attention_mask):
            # Hugging Face's extended mask: 0 where attended, -10000 where padded.
            extended = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            hidden = self.embeddings(input_ids)
            for layer in self.layers:
                hidden = layer(hidden, extended)
            return hidden

    def gelu_tanh(x):
        # GPT-2's "gelu_new", written out as GPT-2 does.
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class Gpt2Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            h = c["hidden"]
            self.hidden, self.heads, self.head_dim = h, c["heads"], h // c["heads"]
            self.ln_1 = nn.LayerNorm(h, eps=1e-5)
            self.c_attn = nn.Linear(h, 3 * h)
            self.c_proj = nn.Linear(h, h)
            self.ln_2 = nn.LayerNorm(h, eps=1e-5)
            self.c_fc = nn.Linear(h, c["ffn"])
            self.mlp_proj = nn.Linear(c["ffn"], h)
            n = c["max_pos"]
            self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n))

        def split_heads(self, x):
            x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
            return x.permute(0, 2, 1, 3)

        def query_key_weights(self):
            return [self.c_attn.weight[:2 * self.hidden]]  # rows of q and k in the fused qkv

        def attend(self, x):
            q, k, v = self.c_attn(x).split(self.hidden, dim=2)
            q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
            w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5)
            q_len, k_len = q.size(-2), k.size(-2)
            causal = self.bias[:, :, k_len - q_len:k_len, :k_len]
            w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min))
            a = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
            return self.c_proj(a.view(a.size()[:-2] + (self.hidden,)))

        def forward(self, x):
            x = x + self.attend(self.ln_1(x))
            return x + self.mlp_proj(gelu_tanh(self.c_fc(self.ln_2(x))))

    class Gpt2(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.wte = nn.Embedding(c["vocab"], c["hidden"])
            self.wpe = nn.Embedding(c["max_pos"], c["hidden"])
            self.blocks = nn.ModuleList(Gpt2Block(c) for _ in range(c["layers"]))
            self.ln_f = nn.LayerNorm(c["hidden"], eps=1e-5)
            self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
            self.lm_head.weight = self.wte.weight  # tied, as GPT-2's

        def forward(self, input_ids):
            seq = input_ids.size(-1)
            positions = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
            x = self.wte(input_ids) + self.wpe(positions)
            for block in self.blocks:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    return {"bert": Bert, "gpt2": Gpt2}


def init_weights(torch, model, gen, hidden):
    """Normal std 0.02 weights and biases drawn from `gen`, LayerNorm weights in [0.5, 1.5) and
    biases N(0, 0.1), query/key projections std 1.2/sqrt(hidden) (see the module docstring)."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (torch.nn.Linear, torch.nn.Embedding)):
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=gen) * 0.02)
                if getattr(mod, "bias", None) is not None:
                    mod.bias.copy_(torch.randn(mod.bias.shape, generator=gen) * 0.02)
            elif isinstance(mod, torch.nn.LayerNorm):
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=gen) + 0.5)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=gen) * 0.1)
        for mod in model.modules():
            for w in mod.query_key_weights() if hasattr(mod, "query_key_weights") else []:
                w.copy_(torch.randn(w.shape, generator=gen) * (1.2 / math.sqrt(hidden)))


def transformer_inputs(np, spec):
    c = spec["cfg"]
    rng = np.random.default_rng(spec["seed"])
    ids = rng.integers(0, c["vocab"], size=(1, c["seq"]), dtype=np.int64)
    if spec["arch"] == "gpt2":
        return {"input_ids": ids}
    mask = np.ones((1, c["seq"]), dtype=np.int64)
    mask[:, c["seq"] - spec["masked"]:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def export_transformer(mods, spec, tmp):
    """torch.onnx.export of the seeded module; returns (feeds, outputs)."""
    np, torch = mods["numpy"], mods["torch"]
    torch.manual_seed(spec["seed"])
    model = define_modules(torch)[spec["arch"]](spec["cfg"]).eval()
    init_weights(torch, model, torch.Generator().manual_seed(spec["seed"] + 1), spec["cfg"]["hidden"])
    feeds = transformer_inputs(np, spec)
    args = tuple(torch.from_numpy(v.copy()) for v in feeds.values())
    output = "logits" if spec["arch"] == "gpt2" else "last_hidden_state"
    with torch.no_grad():
        y = model(*args).numpy().astype(np.float32)
    dynamic = {n: {0: "batch", 1: "sequence"} for n in list(feeds) + [output]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings about Python ints from sizes
        with torch.no_grad():
            torch.onnx.export(model, args, tmp, export_params=True, opset_version=OPSET,
                              input_names=list(feeds), output_names=[output],
                              dynamic_axes=dynamic, do_constant_folding=True)
    with torch.no_grad():
        if not np.array_equal(model(*args).numpy(), y):
            die(f"{spec['name']}: module output changed across export")
    return feeds, {output: y}


# --------------------------------------------------------------------------
# log-mel front end


def hz_to_mel(np, f):
    """Slaney's mel scale (librosa's default, Whisper's filters): linear below 1 kHz, log above."""
    f = np.asarray(f, dtype=np.float64)
    lin = f / (200.0 / 3)
    log_part = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log_part, lin)


def mel_to_hz(np, m):
    m = np.asarray(m, dtype=np.float64)
    return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * (200.0 / 3))


def mel_filterbank(np, c):
    """[n_fft/2+1, mels] triangular filters on the Slaney mel scale, area-normalised."""
    bins = c["n_fft"] // 2 + 1
    freqs = np.linspace(0, c["sample_rate"] / 2, bins)
    edges = mel_to_hz(np, np.linspace(hz_to_mel(np, 0.0), hz_to_mel(np, c["sample_rate"] / 2),
                                      c["mels"] + 2))
    lower = (freqs[None, :] - edges[:-2, None]) / (edges[1:-1] - edges[:-2])[:, None]
    upper = (edges[2:, None] - freqs[None, :]) / (edges[2:] - edges[1:-1])[:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return weights.T  # [bins, mels]


def hann_periodic(np, n):
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def logmel_reference(np, audio, c, filters):
    """float64 definition: reflect-pad n_fft/2, frames every hop, Hann window, |rfft|^2, mel
    filters, log(max(x, floor))."""
    x = np.pad(audio.astype(np.float64), ((0, 0), (c["n_fft"] // 2, c["n_fft"] // 2)), mode="reflect")
    frames = 1 + (x.shape[1] - c["n_fft"]) // c["hop"]
    idx = np.arange(frames)[:, None] * c["hop"] + np.arange(c["n_fft"])[None, :]
    spec = np.fft.rfft(x[:, idx] * hann_periodic(np, c["n_fft"]), axis=-1)
    power = spec.real ** 2 + spec.imag ** 2  # [1, frames, bins]
    return np.log(np.maximum(power @ filters, c["floor"]))


def logmel_torch(torch, np, audio, c, filters):
    """The same definition through torch.stft (float32): an independent cross-check."""
    s = torch.stft(torch.from_numpy(audio), c["n_fft"], c["hop"],
                   window=torch.hann_window(c["n_fft"], periodic=True), center=True,
                   pad_mode="reflect", onesided=True, return_complex=True)
    power = (s.abs() ** 2).transpose(1, 2)  # [1, frames, bins]
    mel = power @ torch.from_numpy(filters.astype(np.float32))
    return torch.log(torch.clamp(mel, min=c["floor"])).numpy()


def logmel_graph(mods, c, filters):
    from onnx import numpy_helper as nh

    np, onnx = mods["numpy"], mods["onnx"]
    h, tp = onnx.helper, onnx.TensorProto
    frames = 1 + c["samples"] // c["hop"]
    consts = [
        nh.from_array(np.array([0, c["n_fft"] // 2, 0, c["n_fft"] // 2], np.int64), "pads"),
        nh.from_array(np.array([2], np.int64), "channel_axis"),
        nh.from_array(np.array(c["hop"], np.int64), "hop"),
        nh.from_array(hann_periodic(np, c["n_fft"]).astype(np.float32), "window"),
        nh.from_array(np.array(c["n_fft"], np.int64), "n_fft"),
        nh.from_array(filters.astype(np.float32), "mel_filters"),
        nh.from_array(np.array(c["floor"], np.float32), "floor"),
    ]
    nodes = [
        h.make_node("Pad", ["audio", "pads"], ["padded"], mode="reflect"),
        h.make_node("Unsqueeze", ["padded", "channel_axis"], ["signal"]),  # [1, samples, 1]
        h.make_node("STFT", ["signal", "hop", "window", "n_fft"], ["spectrum"], onesided=1),
        h.make_node("ReduceSumSquare", ["spectrum"], ["power"], axes=[-1], keepdims=0),
        h.make_node("MatMul", ["power", "mel_filters"], ["mel"]),
        h.make_node("Max", ["mel", "floor"], ["mel_floored"]),
        h.make_node("Log", ["mel_floored"], ["log_mel"]),
    ]
    graph = h.make_graph(
        nodes, "logmel",
        [h.make_tensor_value_info("audio", tp.FLOAT, [1, c["samples"]])],
        [h.make_tensor_value_info("log_mel", tp.FLOAT, [1, frames, c["mels"]])],
        initializer=consts)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                        producer_name="tests/models/export_transformers.py")


def export_logmel(mods, spec, tmp):
    np, onnx, torch = mods["numpy"], mods["onnx"], mods["torch"]
    c = spec["cfg"]
    filters = mel_filterbank(np, c)
    audio = np.random.default_rng(spec["seed"]).standard_normal((1, c["samples"]), dtype=np.float32)
    ref = logmel_reference(np, audio, c, filters)
    cross = rel_err(np, logmel_torch(torch, np, audio, c, filters), ref)
    if not cross < REL_TOL:
        die(f"{spec['name']}: NumPy definition disagrees with torch.stft: rel err {cross:.3g}")
    onnx.save(logmel_graph(mods, c, filters), tmp)
    return {"audio": audio}, {"log_mel": ref.astype(np.float32)}


# --------------------------------------------------------------------------


def export_one(mods, spec, out_dir, verify):
    """Export one model; return its manifest entry."""
    np, onnx = mods["numpy"], mods["onnx"]
    name = spec["name"]
    t0 = time.time()
    tmp = os.path.join(out_dir, "." + name + ".onnx.tmp")
    if spec["arch"] == "logmel":
        feeds, outputs = export_logmel(mods, spec, tmp)
    else:
        feeds, outputs = export_transformer(mods, spec, tmp)
    y = next(iter(outputs.values()))
    if not np.all(np.isfinite(y)):
        die(f"{name}: reference output is not finite")
    if float(y.std()) <= 1e-3:
        die(f"{name}: reference output is degenerate (std {y.std():.3g})")

    proto = onnx.load(tmp)
    onnx.checker.check_model(proto)
    err = None
    if verify:
        from onnx_numpy_ref import run as ref_run

        got = ref_run(proto, feeds)
        for out_name, ref in outputs.items():
            err = max(err or 0.0, rel_err(np, got[out_name], ref))
            if got[out_name].shape != ref.shape or not err < REL_TOL:
                die(f"{name}: ONNX (NumPy reference) disagrees with the reference output "
                    f"{out_name}: shape {got[out_name].shape} vs {ref.shape}, rel err {err:.3g}")
    publish(np, out_dir, name, tmp, feeds, outputs)
    entry = model_entry(mods, spec, proto, out_dir, feeds, outputs, err, time.time() - t0)
    entry["config"] = spec["cfg"]
    return entry


def main(argv=None):
    args = parse_args(__file__, __doc__.split("\n\n")[0], MODEL_SPECS, DEFAULT_GROUPS,
                      sys.argv[1:] if argv is None else argv)
    mods = import_deps(__file__, DEPS)
    torch, onnx = mods["torch"], mods["onnx"]
    torch.set_num_threads(max(1, min(os.cpu_count() or 1, 8)))
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    stamp = dict(generator="tests/models/export_transformers.py", torch=torch.__version__,
                 onnx=onnx.__version__)
    export_groups(args, MODEL_SPECS, lambda spec: export_one(mods, spec, out_dir, args.verify),
                  script_version(version_files()), stamp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
