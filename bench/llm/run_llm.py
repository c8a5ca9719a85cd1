#!/usr/bin/python3
"""LLM bench: epctx vs ONNX Runtime 1.30 (onnxruntime-node) on a Llama-style model with
SmolLM-135M's shapes (tests/models/export_llama.py --config smollm: vocab 49152, hidden 576, 30
layers, 9 heads, 3 KV heads), as a prefill + decode pair in float32, in float16
(tests/models/convert_float16.py) and in int4 (tests/models/quantize_nbits.py: blocks of 32,
symmetric, accuracy_level 4 as the GenAI builder writes for CPUs), at 1 and 2 threads. A variant
with "-bf16" (f32-bf16, f16-bf16) is the same originals compiled with `--precision bf16` (CPUs
with avx512_bf16), still against ONNX Runtime on the originals. Variant int4a0 is the int4 model
quantized the same way but with accuracy_level 0 (float arithmetic on the dequantized weights, no
int8 activations): its greedy tokens show whether both engines read the int4 weights alike.
Variants genai-f32, genai-f16 and genai-int4 are the same model, same weights, in ONNX Runtime
GenAI's layout (tests/models/export_llama_genai.py: one graph for prompt and decode steps, with
GroupQueryAttention, the builder's norms and an attention mask; genai-f16 converted to float16
as variant f16 is, GroupQueryAttention included; genai-int4 quantized as int4):
one session per engine runs both phases, so "creation" is that one session's, and the blob holds
one model. Against f32 and int4 they show whether the two layouts of one model run alike.

Per variant: the pair compiled into one blob (`epctx compile -m prefill -m decode`), the blob's
bytes against the two originals'; then per thread count, one fresh process of each engine in
turn (bench/llm/ort_llm.js, bench/llm/epctx_llm.py), each with its files read just before (a
warm page cache): creation of the two sessions, the first prefill of a
128-token prompt, --tokens greedy decode steps (median and mean ms/token), per-token time at
past lengths 16, 256 and 1024, RSS after creating the sessions and after the generation (and
its private part, RssAnon: a mapped blob's pages are shared page cache), and whether the two
engines' greedy tokens agree; and, in one more epctx process with ONEDNN_VERBOSE=2, how many
oneDNN primitives were generated (its "create:cache_miss" lines: code made, not found in the
process's primitive cache) while the sessions were created and the prompt ran, in the first 4
decode steps, and in the later ones, which should make none. Where the tokens do not agree, the position of the first different token, and
ORT run once more at graph optimization level basic to show where ORT's own tokens leave its
level-all tokens: with int8 activations (accuracy_level 4) a last-bit difference anywhere can
move one activation across a rounding boundary, and greedy decoding of a random-weight model then
follows it.

Writes bench/results/llm.json and docs/BENCHMARKS_LLM.md (one table per CPU: earlier CPUs'
tables are kept). Refuses to measure when the 1-minute load average is 1 or more unless --force.
The memory read bandwidth with 1 and 2 reading processes (bench_common.memory_bandwidth) is
measured at the start and at the end and printed with the table: a float32 decode step reads all
its weights, so its time at 2 threads follows what the host gives two cores at the time.

usage: bench/llm/run_llm.sh [--variants f32,f16,int4,int4a0,f32-bf16,genai-f32,genai-f16,
                                        genai-int4]
                           [--threads 1,2] [--tokens 128] [--force]
                           [--build DIR]
"""

import argparse
import datetime
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from bench_common import (BUSY_LOADAVG, RESULTS, ROOT, TMP, CommandFailed, build_epctx,  # noqa: E402
                          bandwidth_text, cpu_facts, cpu_title, ensure_onnxruntime_node, log,
                          memory_bandwidth, run, run_json, run_shown, warm_page_cache,
                          write_cpu_section)

WORK = os.path.join(TMP, "llm")
BUILD = os.path.join(ROOT, "build-bench")  # bench/run.py's build (no tests)
DOC = os.path.join(ROOT, "docs", "BENCHMARKS_LLM.md")
MODELS = os.path.join(ROOT, "tests", "models")
PY = "/usr/bin/python3"




def prepare(epctx, variants):
    """Exports, converts and compiles each variant; returns {variant: paths and sizes}."""
    os.makedirs(WORK, exist_ok=True)
    base = os.path.join(WORK, "llama_smollm")
    if not all(os.path.exists(f"{base}_{s}.onnx") for s in ("prefill", "decode")):
        run_shown([PY, os.path.join(MODELS, "export_llama.py"), "--config", "smollm", "--out", WORK,
                   "--prompt-length", "128"])
    out = {}
    for v in variants:
        if v.startswith("genai-"):
            out[v] = prepare_genai(epctx, v)
            continue
        weights, _, precision = v.partition("-")  # "f16-bf16": the float16 model computed in bf16
        pair = {}
        for stem in ("prefill", "decode"):
            pair[stem] = in_weights(f"{base}_{stem}.onnx", weights)
        options = ["--precision", precision] if precision else []
        out[v] = compile_variant(epctx, v, pair, options)
    return out


def in_weights(src, weights):
    """The float32 model `src` in `weights` (f32: itself; f16 converted by convert_float16.py;
    int4 and int4a0 quantized by quantize_nbits.py at accuracy level 4 and 0), written beside it
    as SRC_WEIGHTS.onnx once."""
    if weights == "f32":
        return src
    dst = f"{os.path.splitext(src)[0]}_{weights}.onnx"
    if not os.path.exists(dst):
        if weights == "f16":
            run_shown([PY, os.path.join(MODELS, "convert_float16.py"), src, dst])
        elif weights not in ("int4", "int4a0"):
            sys.exit(f"bench: no such weights: {weights} (f32, f16, int4, int4a0)")
        else:
            run_shown([PY, os.path.join(MODELS, "quantize_nbits.py"), src, dst,
                       "--accuracy-level", "0" if weights == "int4a0" else "4"])
    return dst


def compile_variant(epctx, variant, originals, options=()):
    """`originals` ({"prefill": path, "decode": path}; one file for both in GenAI's layout)
    compiled into one blob in WORK/ctx_VARIANT: the variant's paths and sizes."""
    ctx_dir = os.path.join(WORK, f"ctx_{variant}")
    models = list(dict.fromkeys(originals.values()))
    run([epctx, "compile", *[a for m in models for a in ("-m", m)], "--output-dir", ctx_dir,
         *options])
    blob = [f for f in os.listdir(ctx_dir) if f.endswith(".epctx")][0]
    stem = lambda p: os.path.splitext(os.path.basename(p))[0]  # noqa: E731
    ctx = lambda p: os.path.join(ctx_dir, stem(p) + "_ctx.onnx")  # noqa: E731
    return {
        "originals": originals,
        "original_bytes": sum(os.path.getsize(m) for m in models),
        "blob_bytes": os.path.getsize(os.path.join(ctx_dir, blob)),
        "prefill_ctx": ctx(originals["prefill"]),
        "decode_ctx": ctx(originals["decode"]),
    }


def prepare_genai(epctx, variant):
    """The GenAI-layout model of `variant` (genai-f32, genai-f16, genai-int4), exported,
    converted or quantized, and compiled; one file serves as both prefill and decode."""
    weights = variant.split("-", 1)[1]
    if weights not in ("f32", "f16", "int4"):
        sys.exit(f"bench: variant {variant}: the GenAI layout comes in f32, f16 and int4")
    src = os.path.join(WORK, "llama_smollm_genai.onnx")
    if not os.path.exists(src):
        run_shown([PY, os.path.join(MODELS, "export_llama_genai.py"), "--config", "smollm",
                   "--out", WORK, "--prompt-length", "128", "--name", "llama_smollm_genai"])
    model = in_weights(src, weights)
    return compile_variant(epctx, variant, {"prefill": model, "decode": model})


def measure(variant, paths, threads, tokens, at):
    prompt = os.path.join(WORK, "llama_smollm_prefill.input_ids.npy")
    common = ["--prompt", prompt, "--tokens", str(tokens), "--threads", str(threads), "--at", at]
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    import subprocess

    ort_cmd = ["node", os.path.join(HERE, "ort_llm.js"), "--prefill", paths["originals"]["prefill"],
               "--decode", paths["originals"]["decode"], *common]
    # Each engine's files read just before its process: the blobs are compiled first, and this
    # VM drops files unused for a minute (a first prefill then read the weights from the disk).
    warm_page_cache(paths["originals"].values())
    ort = run_json(ort_cmd)
    ctx_dir = os.path.dirname(paths["prefill_ctx"])
    warm_page_cache(os.path.join(ctx_dir, n) for n in sorted(os.listdir(ctx_dir)))
    log(" ".join([PY, "epctx_llm.py", variant, f"threads {threads}"]))
    p = subprocess.run([PY, os.path.join(HERE, "epctx_llm.py"), "--prefill", paths["prefill_ctx"],
                        "--decode", paths["decode_ctx"], *common], env=env, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise CommandFailed(f"epctx_llm.py exited with {p.returncode}:\n{p.stderr[-2000:]}")
    mine = json.loads(p.stdout)
    out = {"ort": ort, "epctx": mine}
    if mine["tokens"] != ort["tokens"]:
        log("tokens differ: ORT once more at optimization level basic")
        basic = run_json([*ort_cmd[:ort_cmd.index("--at")], "--at", "", "--optimization", "basic"])
        out["ort_basic_tokens"] = basic["tokens"]
    return out


# Decode steps whose primitives count as the first few (FIRST_STEPS) rather than per token.
FIRST_STEPS = 4


def count_primitives(paths, threads, tokens):
    """oneDNN primitives generated by a separate epctx process running the same generation with
    ONEDNN_VERBOSE=2 (its timings are not used): {"setup": during creation and the prefill
    (the background preparation included), "first_steps": in decode steps 1..FIRST_STEPS,
    "later_steps": in the steps after them}."""
    import subprocess

    prompt = os.path.join(WORK, "llama_smollm_prefill.input_ids.npy")
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"), ONEDNN_VERBOSE="2")
    log(" ".join([PY, "epctx_llm.py --mark-steps", f"threads {threads}", "ONEDNN_VERBOSE=2"]))
    p = subprocess.run([PY, os.path.join(HERE, "epctx_llm.py"), "--prefill", paths["prefill_ctx"],
                        "--decode", paths["decode_ctx"], "--prompt", prompt, "--tokens",
                        str(tokens), "--threads", str(threads), "--at", "", "--mark-steps"],
                       env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise CommandFailed(f"epctx_llm.py --mark-steps exited with {p.returncode}:\n"
                            f"{p.stderr[-2000:]}")
    counts = {"setup": 0, "first_steps": 0, "later_steps": 0}
    phase, marks = "setup", 0
    for line in p.stdout.splitlines():
        if line.startswith("epctx_llm: "):
            marks += 1
            words = line.split()
            if words[1] == "step":
                phase = "first_steps" if int(words[2]) <= FIRST_STEPS else "later_steps"
            elif words[1] == "end":
                phase = None
        elif line.startswith("onednn_verbose,create:cache_miss") and phase is not None:
            counts[phase] += 1
    if marks != tokens + 3:
        raise CommandFailed(f"epctx_llm.py --mark-steps printed {marks} marks, not {tokens + 3}")
    return counts


def first_difference(a, b):
    """Index of the first differing token (0: the prefill's), or None."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                None if len(a) == len(b) else min(len(a), len(b)))


def tokens_cell(row):
    if row["tokens_equal"]:
        return "True"
    own = row.get("ort_basic_first_difference")
    own = "equal" if own is None else f"token {own}"
    cell = (f"False (token {row['first_difference']} of {row['token_count']}; ORT basic vs all: "
            f"{own}")
    if "epctx_ort_basic_first_difference" in row:
        ours = row["epctx_ort_basic_first_difference"]
        cell += "; epctx vs ORT basic: " + ("equal" if ours is None else f"token {ours}")
    return cell + ")"


def add_basic_comparison(row, raw):
    """Where ORT ran once more at level basic: where its tokens and epctx's part from ORT's."""
    if "ort_basic_tokens" in raw:
        row["ort_basic_first_difference"] = first_difference(raw["ort_basic_tokens"],
                                                             raw["ort"]["tokens"])
        row["epctx_ort_basic_first_difference"] = first_difference(raw["epctx"]["tokens"],
                                                                   raw["ort_basic_tokens"])


def primitives_cell(row):
    c = row.get("primitives")
    if c is None:
        return "-"
    return f"{c['setup']} / {c['first_steps']} / {c['later_steps']}"


def summary(r):
    d = r["decode_ms"]
    return {
        "creation_ms": r["create_prefill_ms"] + r["create_decode_ms"],
        "prefill_ms": r["prefill_ms"],
        "ttft_ms": r["create_prefill_ms"] + r["create_decode_ms"] + r["prefill_ms"],
        "decode_median_ms": statistics.median(d),
        "decode_mean_ms": statistics.mean(d),
        "at": {k: statistics.median(v) for k, v in r["at"].items()},
        "rss_creation_mib": r["rss_after_creation"] / 2**20,
        "rss_mib": r["rss_after_generation"] / 2**20,
        "anon_mib": r.get("anon_after_generation", 0) / 2**20,
    }


def write_doc(report):
    cpu = report["cpu"]
    title = cpu_title(cpu)
    # Reports from before the bandwidth was measured have none.
    bandwidth = (bandwidth_text(report["bandwidth_start"], report["bandwidth_end"])
                 if "bandwidth_start" in report else "memory bandwidth not measured")
    lines = [f"## {title}", "",
             f"{report['date']}, git {report['git']}, load average {report['loadavg_start']} at "
             f"the start, ISA: {cpu.get('isa')}; {bandwidth}; prompt 128 tokens, "
             f"{report['tokens']} greedy "
             "tokens; each engine's files read just before its process (warm page cache); ratios "
             "epctx / ORT (below 1: epctx faster or smaller).", "",
             "| variant | threads | TTFT ms (ratio) | prefill ms (ratio) | decode median ms (ratio) "
             "| decode mean ms (ratio) | ms/token at past 16 / 256 / 1024 (epctx; ORT) | RSS MiB "
             "after creation (ratio) | RSS MiB after generation (ratio) | of which private "
             "(ratio) | blob / originals | tokens equal (first difference; ORT's own at level basic) "
             f"| epctx's oneDNN primitives generated: creation + prefill / steps 1-{FIRST_STEPS} / "
             "later steps |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        e, o = row["epctx"], row["ort"]
        r = lambda k: f"{e[k]:.1f} / {o[k]:.1f} ({e[k] / o[k]:.2f})"  # noqa: E731
        mib = lambda k: f"{e[k]:.0f} / {o[k]:.0f} ({e[k] / max(o[k], 1e-9):.2f})"  # noqa: E731
        at = " / ".join(f"{e['at'].get(k, 0):.1f}" for k in ("16", "256", "1024"))
        at_o = " / ".join(f"{o['at'].get(k, 0):.1f}" for k in ("16", "256", "1024"))
        lines.append(f"| {row['variant']} | {row['threads']} | {r('ttft_ms')} | {r('prefill_ms')} | "
                     f"{r('decode_median_ms')} | {r('decode_mean_ms')} | {at}; {at_o} | "
                     f"{mib('rss_creation_mib')} | {mib('rss_mib')} | {mib('anon_mib')} | "
                     f"{row['blob_bytes'] / 2**20:.0f} / {row['original_bytes'] / 2**20:.0f} MiB | "
                     f"{tokens_cell(row)} | {primitives_cell(row)} |")
    section = "\n".join(lines) + "\n"
    head = ("# LLM bench (bench/llm/run_llm.py)\n\nepctx vs ONNX Runtime 1.30 on a Llama-style model "
            "with SmolLM-135M's shapes (random weights, seeded), prefill + decode in one blob. One "
            "section per CPU; a new run replaces its CPU's section only. genai-*: the same model in ONNX "
            "Runtime GenAI's layout (one graph, GroupQueryAttention; one session per engine). "
            "Tokens: epctx's greedy "
            "tokens against ORT's at its default optimization level (all); where they differ, ORT "
            "runs once more at level basic (no fusions), and the cell says where ORT's two levels "
            "part and where epctx parts from ORT basic.\n\n")
    write_cpu_section(DOC, head, title, section)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default="f32,f16,int4")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--at", default="16,256,1024")
    p.add_argument("--force", action="store_true")
    p.add_argument("--build", help="an existing build folder to measure (its epctx CLI and Python "
                   "module are built there) instead of building build-bench/")
    p.add_argument("--rewrite-doc", action="store_true", help="measure nothing: write "
                   "docs/BENCHMARKS_LLM.md's section again from bench/results/llm.json")
    args = p.parse_args()
    if args.rewrite_doc:
        with open(os.path.join(RESULTS, "llm.json")) as f:
            report = json.load(f)
        for row, raw in zip(report["rows"], report["raw"]):
            add_basic_comparison(row, raw)
        write_doc(report)
        log(f"wrote {DOC} from {os.path.join(RESULTS, 'llm.json')}")
        return
    global BUILD
    if args.build:
        BUILD = os.path.abspath(args.build)
    load = os.getloadavg()[0]
    if load >= BUSY_LOADAVG and not args.force:
        sys.exit(f"bench: load average {load:.2f} >= {BUSY_LOADAVG}: not measuring (--force)")
    if args.build:  # brought up to date as it is configured, not reconfigured
        run_shown(["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), "--target",
                   "epctx_cli"])
        epctx = os.path.join(BUILD, "bin", "epctx")
    else:
        epctx = build_epctx(BUILD)
    run_shown(["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2), "--target", "epctx_python"])
    ensure_onnxruntime_node()
    variants = args.variants.split(",")
    prepared = prepare(epctx, variants)
    import subprocess

    report = {"cpu": cpu_facts(), "loadavg_start": f"{load:.2f}", "tokens": args.tokens,
              "date": datetime.date.today().isoformat(),
              "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], text=True,
                                    stdout=subprocess.PIPE).stdout.strip(),
              "rows": [], "raw": [], "bandwidth_start": memory_bandwidth()}
    log(f"memory read bandwidth, 1 / 2 readers: {report['bandwidth_start']} GB/s")
    for v in variants:
        for t in [int(x) for x in args.threads.split(",")]:
            m = measure(v, prepared[v], t, args.tokens, args.at)
            report["raw"].append({"variant": v, "threads": t, **m})
            report["rows"].append({
                "variant": v, "threads": t, "epctx": summary(m["epctx"]), "ort": summary(m["ort"]),
                "blob_bytes": prepared[v]["blob_bytes"],
                "original_bytes": prepared[v]["original_bytes"],
                "tokens_equal": m["epctx"]["tokens"] == m["ort"]["tokens"],
                "token_count": len(m["ort"]["tokens"]),
                "first_difference": first_difference(m["epctx"]["tokens"], m["ort"]["tokens"])})
            report["rows"][-1]["primitives"] = count_primitives(prepared[v], t, args.tokens)
            add_basic_comparison(report["rows"][-1], m)
            log(json.dumps(report["rows"][-1]))
    report["bandwidth_end"] = memory_bandwidth()
    log(f"memory read bandwidth at the end, 1 / 2 readers: {report['bandwidth_end']} GB/s")
    with open(os.path.join(RESULTS, "llm.json"), "w") as f:
        json.dump(report, f, indent=1)
    write_doc(report)
    log(f"wrote {DOC}")


if __name__ == "__main__":
    main()
