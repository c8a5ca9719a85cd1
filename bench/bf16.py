"""Opt-in bfloat16 (epctx.precision=bf16) against float32, measured in one run: steady p50 latency
of epctx in float32, epctx in bf16 and ONNX Runtime in float32 (onnxruntime-node 1.30) on the same
models, inputs and thread counts, and the error of each epctx form against float32.

Per model (default: the nine classes of bench/run.py): exported by tests/models/export_*.py,
compiled twice (`epctx compile`, `epctx compile --precision bf16`), each form run on the
exporter's input and compared with its float32 reference (PyTorch's output): max |epctx -
reference| / max |reference|. Then, per thread count and repetition, each of the three runs in a
fresh process (the order alternating between repetitions) for --runs timed inferences; a ratio is
of the medians over repetitions.

bf16 needs a CPU with avx512_bf16: elsewhere the bf16 compile is refused and this script stops.
Writes bench/results/bf16.json and docs/BENCHMARKS_BF16.md (one section per CPU; earlier CPUs'
sections are kept). Refuses a busy machine (1-minute load average >= 1) unless --force.
    /usr/bin/python3 bench/bf16.py --models resnet50,bert_base --epctx build/bin/epctx
"""

import argparse
import json
import math
import os
import sys
import time

import latency
import models as bench_models
from bench_common import (BUSY_LOADAVG, RESULTS, ROOT, TMP, CommandFailed, build_epctx, cpu_facts,
                          cpu_title, environment, log, summarize, write_cpu_section)

DOC = os.path.join(ROOT, "docs", "BENCHMARKS_BF16.md")
# A bf16 output further than this from float32's is reported as wrong: bfloat16 keeps 8
# significant bits, so a model's outputs move by a few 1e-3 of their range, not by 5e-2.
BF16_CHECK_RTOL = 5e-2
FORMS = ["ort_fp32", "epctx_fp32", "epctx_bf16"]


def prepare(args):
    entries = bench_models.export(args.models, args.models_dir)
    prepared = {}
    for model in args.models:
        entry = entries[model]
        p = {"original": os.path.join(args.models_dir, model + ".onnx"),
             "inputs": bench_models.bench_inputs(model, entry, args.models_dir, TMP)}
        for form, variant, options, rtol in (
                ("epctx_fp32", "", (), bench_models.CHECK_RTOL),
                ("epctx_bf16", "_bf16", ("--precision", "bf16"), BF16_CHECK_RTOL)):
            ctx = bench_models.compile_model(args.epctx, args.models_dir, model, TMP, variant,
                                             options)
            p[form] = ctx
            p[form + "_check"] = bench_models.check_output(args.epctx, ctx, entry,
                                                           args.models_dir, TMP, rtol)
        prepared[model] = p
    return prepared


def measure(args, p, threads):
    runs = {
        "ort_fp32": lambda: latency.measure_ort(args.node, p["original"], p["inputs"], threads,
                                                args.runs),
        "epctx_fp32": lambda: latency.measure_epctx(args.epctx, p["epctx_fp32"], p["inputs"],
                                                    threads, args.runs),
        "epctx_bf16": lambda: latency.measure_epctx(args.epctx, p["epctx_bf16"], p["inputs"],
                                                    threads, args.runs),
    }
    p50 = {form: [] for form in FORMS}
    for rep in range(args.reps):
        for form in (FORMS if rep % 2 == 0 else FORMS[::-1]):
            p50[form].append(runs[form]()["latency_p50_ms"])
    return {form: summarize(values) for form, values in p50.items()}


def ratio(a, b):
    return a["median"] / b["median"] if a and b and b["median"] > 0 else None


def section(results):
    env = results["environment"]
    lines = [f"## {results['cpu_title']}", "",
             f"{results['date']}; {env['cores']} cores; {env['epctx_version']}, ONNX Runtime "
             f"{env['ort_version']}; load average {env['loadavg_start']} at the start, "
             f"{env['loadavg_end']} at the end; CPU features: {results['cpu']['isa']}; "
             f"{results['reps']} fresh processes per form, {results['runs']} runs each "
             "(medians of the per-process p50).", "",
             "| model | threads | ORT fp32 p50 ms | epctx fp32 | epctx bf16 | fp32 / ORT | "
             "bf16 / ORT | fp32 error | bf16 error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    geo = {}
    for threads, per in results["by_threads"].items():
        for model, r in per.items():
            t = r["p50_ms"]
            f32, bf16 = ratio(t["epctx_fp32"], t["ort_fp32"]), ratio(t["epctx_bf16"], t["ort_fp32"])
            if bf16:
                geo.setdefault(threads, []).append(bf16)
            err = results["errors"][model]
            lines.append(
                f"| {model} | {threads} | {t['ort_fp32']['median']:.2f} | "
                f"{t['epctx_fp32']['median']:.2f} | {t['epctx_bf16']['median']:.2f} | "
                f"{f32:.2f} | **{bf16:.2f}** | {err['epctx_fp32']} | {err['epctx_bf16']} |")
    lines.append("")
    for threads, values in geo.items():
        g = math.exp(sum(math.log(v) for v in values) / len(values))
        lines.append(f"Geometric mean of bf16 / ORT fp32 at {threads} thread(s): {g:.2f}.")
    lines.append("")
    return "\n".join(lines) + "\n"


def error_text(check):
    if "rel_err" not in check:
        return "failed: " + check.get("error", "?").splitlines()[0]
    return f"{check['rel_err']:.1e}" + ("" if check["ok"] else " (wrong)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(latency.MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--models-dir", default=os.path.join(TMP, "models"))
    ap.add_argument("--epctx", help="epctx binary (default: build it in build-bench/)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    args.models = [m for m in args.models.split(",") if m]
    threads = [int(t) for t in args.threads.split(",") if t]

    load1 = os.getloadavg()[0]
    if load1 >= BUSY_LOADAVG and not args.force:
        sys.exit(f"bench: the machine is busy (load average {load1:.2f}): wait, or --force")
    args.epctx = args.epctx or build_epctx(os.path.join(ROOT, "build-bench"))
    os.makedirs(TMP, exist_ok=True)
    try:
        prepared = prepare(args)
    except CommandFailed as e:
        sys.exit(f"bench: {e}")
    facts = cpu_facts()
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "cpu": facts,
               "cpu_title": cpu_title(facts), "reps": args.reps, "runs": args.runs,
               "environment": environment(args.epctx, args.node, load1),
               "errors": {m: {form: error_text(p[form + "_check"])
                              for form in ("epctx_fp32", "epctx_bf16")}
                          for m, p in prepared.items()},
               "by_threads": {}}
    for t in threads:
        per = results["by_threads"].setdefault(str(t), {})
        for model in args.models:
            log(f"bf16: {model}, {t} thread(s)")
            per[model] = {"p50_ms": measure(args, prepared[model], t)}
    results["environment"]["loadavg_end"] = "%.2f" % os.getloadavg()[0]
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "bf16.json"), "w") as f:
        json.dump(results, f, indent=1)
    head = ("# bfloat16 compute (epctx.precision=bf16) against float32\n\n"
            "Written by `bench/bf16.py` (its docstring says how). Errors are max |output - "
            "PyTorch's float32 output| / max |PyTorch's output| on the exporter's input.\n\n")
    write_cpu_section(DOC, head, results["cpu_title"], section(results))
    print(section(results))


if __name__ == "__main__":
    main()
