#!/usr/bin/python3
"""GroupQueryAttention alone, epctx against ONNX Runtime: the decode step of an LLM (one token
after a past of 16, 256, 1024 and 2048) and its prompt (128 tokens, no past), with SmolLM's
attention (9 query heads over 3 KV heads, head size 64, rotary embedding by halves inside the
operator). Each case is one graph of one node (tests/genai/make_attention_models.py's gqa()),
seeded inputs in .npy files. Per thread count and repetition each engine runs in a fresh
process, alternating which goes first: the node's kernel time from each engine's own profiler
(bench/ort_node_times.js; epctx perf -p), median over --runs runs; with --e2e also the p50 of
whole runs (bench/ort_bench.js; epctx perf), which adds each harness's cost around the node
(onnxruntime-node hands the outputs to JavaScript). The median over repetitions is reported.

usage: attention.py --epctx build/bin/epctx [--threads 1,2] [--runs 300] [--reps 3] [--e2e]
                    [--out DIR]
ONNX Runtime comes from bench/node_modules (npm install there) or NODE_PATH.
Prints a markdown table on stdout.
"""

import argparse
import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "genai"))

import make_attention_models as models  # noqa: E402
from bench_common import BENCH, TMP, log, run, run_json  # noqa: E402
from latency import measure_epctx, measure_ort  # noqa: E402
from models import input_args  # noqa: E402

CASES = [("decode, past 16", 16, 1), ("decode, past 256", 256, 1), ("decode, past 1024", 1024, 1),
         ("decode, past 2048", 2048, 1), ("prefill 128", None, 128)]


def prepare(epctx, out, name, past, seq):
    total = (past or 0) + seq
    graph, entry = models.gqa(name, name, seq=seq, past=past, seqlens=[total - 1], total=total,
                              rotary="half", cache_rows=4096)
    original = os.path.join(out, name + ".onnx")
    models.save(graph, original)
    rng = np.random.default_rng(20261127)
    inputs = {}
    for input_name, shape in entry["inputs"].items():
        path = os.path.join(out, f"{name}_{input_name}.npy")
        if input_name in entry.get("values", {}):
            np.save(path, np.array(entry["values"][input_name], dtype=np.int32).reshape(shape))
        else:
            np.save(path, rng.uniform(-1, 1, shape).astype(np.float32))
        inputs[input_name] = path
    ctx = os.path.join(out, name + "_ctx.onnx")
    run([epctx, "compile", original, "-o", ctx])
    return original, ctx, inputs


def kernel_ms_ort(original, inputs, threads, runs):
    times = run_json(["node", os.path.join(BENCH, "ort_node_times.js"), "--model", original,
                      *input_args("--input", inputs), "--runs", str(runs),
                      "--threads", str(threads)])
    return statistics.median(times["gqa"]) / 1000.0


def kernel_ms_epctx(epctx, ctx, inputs, threads, runs, out):
    profile = os.path.join(out, "profile.json")
    run([epctx, "perf", ctx, *input_args("--input", inputs), "--repeat", str(runs + 1),
         "--threads", str(threads), "--config", "epctx.fallback|deny", "-p", profile])
    with open(profile) as f:
        times = [e["dur"] for e in json.load(f) if e.get("name") == "gqa_kernel_time"]
    return statistics.median(times[1:]) / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epctx", required=True)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--e2e", action="store_true", help="also whole runs' p50")
    parser.add_argument("--out", default=os.path.join(TMP, "attention"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    measures = {"kernel": {"ort": lambda o, c, i, t: kernel_ms_ort(o, i, t, args.runs),
                           "epctx": lambda o, c, i, t: kernel_ms_epctx(args.epctx, c, i, t,
                                                                       args.runs, args.out)}}
    if args.e2e:
        measures["whole run"] = {
            "ort": lambda o, c, i, t: measure_ort("node", o, i, t, args.runs)["latency_p50_ms"],
            "epctx": lambda o, c, i, t: measure_epctx(args.epctx, c, i, t,
                                                      args.runs)["latency_p50_ms"]}
    rows = []
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    for label, past, seq in CASES:
        name = f"gqa_{'prefill' if past is None else 'decode'}_{past or seq}"
        original, ctx, inputs = prepare(args.epctx, args.out, name, past, seq)
        for t in threads:
            for what, engines in measures.items():
                ms = {"ort": [], "epctx": []}
                for rep in range(args.reps):
                    for engine in (["ort", "epctx"] if rep % 2 == 0 else ["epctx", "ort"]):
                        ms[engine].append(engines[engine](original, ctx, inputs, t))
                log(f"{label}, {t} threads, {what}: ORT {ms['ort']} epctx {ms['epctx']}")
                rows.append((label, t, what, statistics.median(ms["ort"]),
                             statistics.median(ms["epctx"])))
    print(f"load average at the start: {load}\n")
    print("| case | threads | measured | ONNX Runtime ms | epctx ms | epctx / ORT |")
    print("|---|---|---|---|---|---|")
    for label, t, what, ort, ours in rows:
        print(f"| {label} | {t} | {what} | {ort:.3f} | {ours:.3f} | {ours / ort:.2f} |")


if __name__ == "__main__":
    main()
