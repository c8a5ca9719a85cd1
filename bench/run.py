#!/usr/bin/python3
"""epctx vs ONNX Runtime (onnxruntime-node 1.30) on the same models and inputs, in one run.

Two parts; each repetition is a fresh process of each engine (interleaved, so drift hits both):

  latency (--models, default all nine classes; --threads 1,2): steady-state p50 latency and
  first inference, per model and thread count (bench/latency.py):
    epctx perf CTX --json --creations 1 --sessions 1 --repeat RUNS --threads T --input ...
    node bench/ort_bench.js --model ORIGINAL --sessions 1 --processes 0 --runs RUNS --threads T
  with ratios epctx/ORT, their geometric mean per thread count, and
  bench/results/latency_ratios_<cpu>.png.

  creation and memory (--creation-models, default resnet50,mobilenet_v2; skipped with
  --latency-only), with the first of --threads:
    epctx perf CTX --json --creations 10 --sessions 16 --processes 4 --repeat RUNS --threads T
    node bench/ort_bench.js --model ORIGINAL --sessions 16 --processes 4 --runs RUNS --threads T
  and, for epctx only, each load mode with --cold (page cache dropped before each creation).

Models are exported by tests/models/export_*.py and compiled with `epctx compile` once per run
into bench/results/tmp (bench/models.py), and epctx's output on each is checked against the
exporter's reference. The 1-minute load average and the CPU model are recorded first; at a load
of 1.0 or more nothing is measured unless --force, and a forced report says it was taken on a
busy machine.

Writes bench/results/latest.json (every raw report, plus medians with min/max), this CPU's section
of docs/BENCHMARKS.md (other CPUs' sections are kept) and PNG plots under bench/results/ when
matplotlib is installed. With --latency-only, the creation/memory part of an existing latest.json
is kept when it was measured on this CPU.
"""

import argparse
import json
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/

import latency  # noqa: E402
import models as bench_models  # noqa: E402
from bench_common import (BUSY_LOADAVG, DOC, RESULTS, ROOT, TMP, CommandFailed,  # noqa: E402
                          cpu_facts, cpu_title, write_cpu_section,
                          build_epctx, cpu_model, environment, log, memory_bandwidth, run_json,
                          summarize)

MIB = 1 << 20
LOAD_MODES = ["mmap", "populate", "prefetch", "read"]
NAMES = {"epctx": "epctx", "ort": "ORT 1.30"}
CREATION_MODELS = ["resnet50", "mobilenet_v2"]


def step(report, name, key):
    for m in report.get("memory", []):
        if m["step"] == name:
            return m[key]
    return None


def metrics(report):
    """The numbers compared, from one report of either engine (same JSON shape by design)."""
    c = report["session_creation_ms"]
    # Subsequent creations measured the same way for both: sessions 2..16, kept alive, each run
    # once after its creation (epctx's separate --creations loop is kept in the raw report).
    more = report.get("more_sessions_creation_ms")
    out = {
        "creation_first_ms": c["first"],
        "creation_subsequent_median_ms": more["median"] if more else c["subsequent_median"],
        "first_inference_ms": report["first_inference_ms"],
        "latency_mean_ms": report["latency_ms"]["mean"],
        "latency_p50_ms": report["latency_ms"]["p50"],
        "latency_p90_ms": report["latency_ms"]["p90"],
    }
    start_rss = step(report, "start", "rss_bytes")
    start_pss = step(report, "start", "pss_bytes")
    for n, name in [(1, "session_1_ran"), (4, "sessions_4_ran"), (16, "sessions_16_ran")]:
        rss, pss = step(report, name, "rss_bytes"), step(report, name, "pss_bytes")
        out[f"rss_{n}_sessions_mib"] = rss / MIB if rss is not None else None
        out[f"pss_{n}_sessions_mib"] = pss / MIB if pss is not None else None
        out[f"rss_above_start_{n}_sessions_mib"] = (rss - start_rss) / MIB if rss else None
        out[f"pss_above_start_{n}_sessions_mib"] = (pss - start_pss) / MIB if pss else None
    if report.get("processes"):
        out["pss_sum_4_processes_mib"] = report["processes"]["pss_sum_bytes"] / MIB
        out["rss_sum_4_processes_mib"] = report["processes"]["rss_sum_bytes"] / MIB
    return out


ROWS = [
    ("creation_first_ms", "Session creation, first in a fresh process (ms)"),
    ("creation_subsequent_median_ms", "Session creation, subsequent in the same process, median (ms)"),
    ("first_inference_ms", "First inference (ms)"),
    ("latency_p50_ms", "Steady latency p50 (ms)"),
    ("latency_mean_ms", "Steady latency mean (ms)"),
    ("rss_1_sessions_mib", "RSS, 1 session (MiB)"),
    ("rss_4_sessions_mib", "RSS, 4 sessions (MiB)"),
    ("rss_16_sessions_mib", "RSS, 16 sessions (MiB)"),
    ("pss_1_sessions_mib", "PSS, 1 session (MiB)"),
    ("pss_4_sessions_mib", "PSS, 4 sessions (MiB)"),
    ("pss_16_sessions_mib", "PSS, 16 sessions (MiB)"),
    ("rss_above_start_1_sessions_mib", "RSS above process start, 1 session (MiB)"),
    ("rss_above_start_16_sessions_mib", "RSS above process start, 16 sessions (MiB)"),
    ("pss_sum_4_processes_mib", "PSS summed over 4 processes, 1 session each (MiB)"),
    ("rss_sum_4_processes_mib", "RSS summed over 4 processes, 1 session each (MiB)"),
]


def num(v):
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt(s):
    if s is None:
        return "n/a"
    return f"{num(s['median'])} ({num(s['min'])}–{num(s['max'])})"


def ratio(a, b):
    if a is None or b is None or b["median"] == 0:
        return "n/a"
    r = a["median"] / b["median"]
    return f"{r:.1e}" if r < 0.01 else num(r)


DOC_HEAD = ("# Benchmarks: epctx vs ONNX Runtime\n\n"
            "Written by `bench/run.sh` (do not edit by hand), one section per CPU: a run replaces "
            "its CPU's section and keeps the others. The latest run's raw reports are in "
            "`bench/results/latest.json`.\n\n")


def cpu_heading(results):
    """The section title of the CPU a report was taken on ("AMD EPYC (family 25, model 17)"); a
    report from before the CPU's family was recorded is named by its model name."""
    if results.get("cpu_facts"):
        return cpu_title(results["cpu_facts"])
    env = results.get("environment") or results["latency"]["environment"]
    return env["cpu"]


def markdown(results):
    """This report's section of docs/BENCHMARKS.md: the CPU's heading, then the latency and the
    creation parts one heading level down."""
    lines = []
    if results.get("latency"):
        lines += latency.markdown(results["latency"])
    if results.get("models"):
        lines += creation_markdown(results)
    body = "\n".join("#" + line if line.startswith("#") else line for line in lines)
    return f"## {cpu_heading(results)}\n\n{body}\n"


def creation_markdown(results):
    env = results["environment"]
    busy = " **Taken on a busy machine (run with --force).**" if env.get("busy") else ""
    lines = [
        "## Session creation and memory",
        "",
        f"- Date: {results['date']}; machine: {env['cpu']}, {env['cores']} cores, "
        f"Linux {env['kernel']}.",
        f"- {env['epctx_version']} (`epctx perf`, context model + blob, load mode mmap); "
        f"ONNX Runtime {env['ort_version']} via onnxruntime-node on Node {env['node']} "
        "(original `.onnx`, CPU execution provider, graph optimization level all).",
        f"- Threads: {results['threads']} for both (intra-op; the first of run.py --threads). Load "
        f"average {env['loadavg_start']} at the start, {env['loadavg_end']} at the end; memory "
        "is not affected by other work sharing the cores, times are." + busy,
        f"- {results['reps']} repetitions, each a fresh process of each engine; cells are "
        "median (min–max) over them.",
        "- ratio = epctx / ORT (below 1: epctx smaller or faster).",
        "- \"Subsequent\" creations: sessions 2..16 of the same process, each created while the "
        "earlier ones live and run once before the next (for epctx the blob is then already "
        "mapped).",
        "- Memory is read from /proc/<pid>/smaps_rollup after each session has run once. Node's "
        "runtime alone is ~50 MiB RSS at start, epctx's process a few MiB: the \"above process "
        "start\" rows remove that baseline.",
        "- 4 processes: children each create one session and run it once; the parent holds no "
        "session meanwhile. PSS divides shared pages (the blob's page cache pages, shared "
        "libraries) among the processes that map them.",
        "",
    ]
    for model, per in results["models"].items():
        e, o = per["summary"]["epctx"], per["summary"]["ort"]
        lines += [f"### {model}", "", "| metric | epctx | ORT 1.30 | ratio |", "|---|---|---|---|"]
        for key, label in ROWS:
            lines.append(f"| {label} | {fmt(e.get(key))} | {fmt(o.get(key))} | "
                         f"{ratio(e.get(key), o.get(key))} |")
        lines.append("")
        cold = per.get("cold")
        if cold:
            lines += [f"#### {model}: epctx load modes, cold page cache", "",
                      "Model files dropped from the page cache before each creation (fsync + "
                      "POSIX_FADV_DONTNEED, confirmed with mincore); median (min–max) over "
                      f"{results['cold_reps']} runs × 3 creations.", "",
                      "| load mode | session creation (ms) | first inference (ms) | "
                      "creation + first inference (ms) | eviction confirmed |",
                      "|---|---|---|---|---|"]
            for mode, s in cold.items():
                lines.append(f"| {mode} | {fmt(s['creation_ms'])} | {fmt(s['first_inference_ms'])} "
                             f"| {fmt(s['total_ms'])} | {'yes' if s['confirmed'] else 'NO'} |")
            lines.append("")
    plots = results.get("plots", [])
    if plots:
        lines += ["### Plots", ""]
        for p in plots:
            lines.append(f"![{os.path.basename(p)}](../{p})")
        lines.append("")
    return lines


def plot(results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not installed (apt-get install python3-matplotlib): no plots")
        return []
    paths = []
    models = list(results["models"])
    # Session creation: first and subsequent, per model and engine (log scale).
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels, width = [], 0.2
    for i, model in enumerate(models):
        s = results["models"][model]["summary"]
        for j, (engine, key, color) in enumerate([
                ("epctx", "creation_first_ms", "#1f77b4"), ("epctx", "creation_subsequent_median_ms", "#aec7e8"),
                ("ort", "creation_first_ms", "#d62728"), ("ort", "creation_subsequent_median_ms", "#ff9896")]):
            v = s[engine].get(key)
            if v:
                ax.bar(i + (j - 1.5) * width, v["median"], width, color=color,
                       yerr=[[v["median"] - v["min"]], [v["max"] - v["median"]]], capsize=3,
                       label=f"{NAMES[engine]} {'first' if 'first' in key else 'subsequent'}" if i == 0 else None)
        labels.append(model)
    ax.set_xticks(range(len(models)), labels)
    ax.set_yscale("log")
    ax.set_ylabel("session creation (ms, log scale)")
    ax.set_title("Session creation: epctx context model vs ONNX Runtime")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(RESULTS, "session_creation.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    # Memory vs sessions.
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        s = results["models"][model]["summary"]
        for engine, color in [("epctx", "#1f77b4"), ("ort", "#d62728")]:
            for kind, style in [("rss", "-"), ("pss", "--")]:
                xs, ys = [], []
                for n in (1, 4, 16):
                    v = s[engine].get(f"{kind}_{n}_sessions_mib")
                    if v:
                        xs.append(n)
                        ys.append(v["median"])
                ax.plot(xs, ys, style, marker="o", color=color, label=f"{NAMES[engine]} {kind.upper()}")
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 4, 16], ["1", "4", "16"])
        ax.set_xlabel("sessions in one process")
        ax.set_ylabel("MiB")
        ax.set_title(model)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(RESULTS, "memory_sessions.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    paths.append(path)
    return paths


def creation_part(args, prepared, models):
    """Session creation, memory and cold load modes (the first of --threads); returns the
    per-model results (models epctx could not compile are left out, with a log line)."""
    threads = str(args.threads[0])
    out = {}
    for model in models:
        p = prepared[model]
        if p.get("epctx_error"):
            log(f"creation/memory: {model} skipped: epctx cannot compile it")
            continue
        ctx, inputs = p["context_model"], p["inputs"]
        input_flags = bench_models.input_args("--input", inputs)
        raw = {"epctx": [], "ort": []}
        for rep in range(args.reps):
            log(f"{model}: repetition {rep + 1}/{args.reps}")
            raw["epctx"].append(run_json([
                args.epctx, "perf", ctx, "--json", *input_flags, "--creations", "10",
                "--sessions", "16", "--processes", "4", "--repeat", str(args.runs),
                "--threads", threads]))
            raw["ort"].append(run_json([
                args.node, os.path.join(ROOT, "bench", "ort_bench.js"), "--model", p["original"],
                *input_flags, "--sessions", "16", "--processes", "4", "--runs", str(args.runs),
                "--threads", threads]))
        summary = {}
        for engine, reports in raw.items():
            ms = [metrics(r) for r in reports]
            summary[engine] = {k: summarize([m.get(k) for m in ms]) for k in ms[0]}
        per = {"original": p["original"], "context_model": ctx, "inputs": inputs,
               "summary": summary, "raw": raw}
        if not args.no_cold:
            per["cold"], per["cold_raw"] = {}, {}
            for mode in LOAD_MODES:
                reports = [run_json([args.epctx, "perf", ctx, "--json", "--cold", "--load-mode", mode,
                                     *input_flags, "--creations", "3", "--repeat", "1",
                                     "--threads", threads]) for _ in range(args.cold_reps)]
                creation = [c for r in reports for c in
                            [r["session_creation_ms"]["first"]] + ([r["session_creation_ms"]["subsequent_median"]]
                                                                     if r["session_creation_ms"]["subsequent_median"] else [])]
                first = [r["cold"]["first_inference_ms"]["median"] for r in reports]
                total = [r["session_creation_ms"]["first"] + r["first_inference_ms"] for r in reports]
                per["cold"][mode] = {"creation_ms": summarize(creation),
                                     "first_inference_ms": summarize(first),
                                     "total_ms": summarize(total),
                                     "confirmed": all(r["cold"]["confirmed"] for r in reports)}
                per["cold_raw"][mode] = reports
        out[model] = per
    return out


def prepare(args, models, models_dir):
    """Exports, compiles, writes inputs and checks epctx's output, once per model."""
    entries = bench_models.export(models, models_dir)
    prepared = {}
    for model in models:
        p = {"original": os.path.join(models_dir, model + ".onnx"),
             "inputs": bench_models.bench_inputs(model, entries[model], models_dir, TMP)}
        try:
            p["context_model"] = bench_models.compile_model(args.epctx, models_dir, model, TMP)
            p["check"] = bench_models.check_output(args.epctx, p["context_model"], entries[model],
                                                   models_dir, TMP)
        except CommandFailed as e:
            log(f"epctx cannot compile {model}: {e}")
            p["epctx_error"] = str(e)
        prepared[model] = p
    return prepared


def csv(text):
    return [v.strip() for v in text.split(",") if v.strip()]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=csv, default=",".join(latency.MODELS),
                    help="latency suite: comma-separated model classes (default: %(default)s)")
    ap.add_argument("--creation-models", type=csv, default=",".join(CREATION_MODELS),
                    help="creation/memory part: comma-separated models (default: %(default)s)")
    ap.add_argument("--latency-only", action="store_true",
                    help="skip the creation/memory part (keep it from an existing latest.json)")
    # Thread counts for both engines. 1 and 2 by default: on a small machine, more threads than
    # cores mostly measure how long each engine's threads wait for a core at every barrier.
    ap.add_argument("--threads", type=lambda t: [int(v) for v in csv(t)], default="1,2",
                    help="comma-separated intra-op thread counts (default: 1,2); the creation/"
                         "memory part uses the first")
    ap.add_argument("--reps", type=int, default=5, help="fresh-process repetitions per engine (>= 5)")
    ap.add_argument("--runs", type=int, default=20, help="timed inferences per repetition")
    ap.add_argument("--cold-reps", type=int, default=3, help="repetitions of the cold load-mode runs")
    ap.add_argument("--models-dir", default=os.path.join(TMP, "models"),
                    help="where the exporters write the models (default: %(default)s)")
    ap.add_argument("--epctx", help="epctx binary (default: build it in build-bench/)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold load-mode runs")
    ap.add_argument("--force", action="store_true",
                    help=f"measure even at a 1-minute load average >= {BUSY_LOADAVG} (the report "
                         "then says it was taken on a busy machine)")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: rewrite the markdown and plots from latest.json")
    args = ap.parse_args()
    if args.reps < 1 or args.runs < 1 or not args.threads or min(args.threads) < 1:
        ap.error("--reps, --runs and every --threads value must be >= 1")
    return args


def main():
    args = parse_args()
    latest = os.path.join(RESULTS, "latest.json")
    if args.report_only:
        with open(latest) as f:
            write_outputs(json.load(f))
        return

    load1, cpu = os.getloadavg()[0], cpu_model()
    busy = load1 >= BUSY_LOADAVG
    log(f"1-minute load average {load1:.2f}; CPU: {cpu}; {os.cpu_count()} cores")
    if busy and not args.force:
        log(f"the machine is busy (load average {load1:.2f} >= {BUSY_LOADAVG}): timings would be "
            "noise. Wait for an idle machine, or pass --force (the report is then marked).")
        sys.exit(2)
    if not os.path.isdir(os.path.join(ROOT, "bench", "node_modules", "onnxruntime-node")):
        sys.exit("bench: onnxruntime-node is missing: cd bench && npm install --ignore-scripts "
                 "(bench/run.sh does it)")

    args.epctx = args.epctx or build_epctx(os.path.join(ROOT, "build-bench"))
    creation_models = [] if args.latency_only else args.creation_models
    os.makedirs(TMP, exist_ok=True)
    prepared = prepare(args, list(dict.fromkeys(args.models + creation_models)), args.models_dir)

    def env():
        e = environment(args.epctx, args.node, load1)
        e.update(date=time.strftime("%Y-%m-%d %H:%M:%S %z"), busy=busy, forced=args.force)
        return e

    results = {}
    if args.latency_only and os.path.exists(latest):
        with open(latest) as f:
            earlier = json.load(f)
        # The creation/memory part of an earlier run on this CPU is kept (another CPU's is not).
        if earlier.get("cpu_facts") == cpu_facts() and earlier.get("models"):
            results = earlier
            results.pop("latency", None)
    if creation_models:
        e = env()
        results = {"date": e["date"], "reps": args.reps, "cold_reps": args.cold_reps,
                   "runs": args.runs, "threads": args.threads[0], "environment": e,
                   "models": creation_part(args, prepared, creation_models)}
        results["environment"]["loadavg_end"] = "%.2f" % os.getloadavg()[0]
    results["cpu_facts"] = cpu_facts()
    if args.models:
        bandwidth_start = memory_bandwidth()
        results["latency"] = latency.run_suite(args, prepared, args.models, env())
        results["latency"]["environment"]["loadavg_end"] = "%.2f" % os.getloadavg()[0]
        results["latency"]["environment"]["bandwidth"] = [bandwidth_start, memory_bandwidth()]
        failed = sorted({m for per in results["latency"]["by_threads"].values()
                         for m, r in per.items() if r["errors"]}
                        | {m for m, p in prepared.items()
                           if p.get("check") and not p["check"]["ok"]})
        if failed:
            log(f"models with failures or wrong outputs: {', '.join(failed)} (see the report)")
    write_outputs(results)


def write_outputs(results):
    results["plots"] = [os.path.relpath(p, ROOT) for p in plot(results)] if results.get("models") else []
    if results.get("latency"):
        # One plot per CPU, as the report keeps a section per CPU.
        slug = re.sub(r"[^a-z0-9]+", "-", cpu_heading(results).lower()).strip("-")
        path = latency.plot(results["latency"], f"latency_ratios_{slug}.png")
        results["latency"]["plot"] = os.path.relpath(path, ROOT) if path else None
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "latest.json"), "w") as f:
        json.dump(results, f, indent=1)
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    write_cpu_section(DOC, DOC_HEAD, cpu_heading(results), markdown(results))
    log(f"wrote {os.path.relpath(os.path.join(RESULTS, 'latest.json'), ROOT)} and "
        f"{os.path.relpath(DOC, ROOT)}")


if __name__ == "__main__":
    main()
