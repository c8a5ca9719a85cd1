#!/usr/bin/python3
"""epctx vs ONNX Runtime (onnxruntime-node 1.30) on the same models and inputs.

Each repetition is a fresh process of each engine (interleaved, so drift hits both):
  epctx perf CTX --json --creations 10 --sessions 16 --processes 4 -r RUNS -x THREADS
  node bench/ort_bench.js --model ORIGINAL --sessions 16 --processes 4 --runs RUNS --threads THREADS
and, for epctx only, each load mode with --cold (page cache dropped before each creation).

Writes bench/results/latest.json (every raw report, plus medians with min/max), docs/BENCHMARKS.md
(tables with epctx/ORT ratios) and PNG plots under bench/results/ when matplotlib is installed.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
RESULTS = os.path.join(BENCH, "results")
TMP = os.path.join(RESULTS, "tmp")
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")
MIB = 1 << 20
LOAD_MODES = ["mmap", "populate", "prefetch", "read"]
NAMES = {"epctx": "epctx", "ort": "ORT 1.30"}


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    log(" ".join(cmd))
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, **kw).stdout


def run_json(cmd):
    out = run(cmd)
    return json.loads(out)


def build_epctx(build_dir):
    exe = os.path.join(build_dir, "bin", "epctx")
    run(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
         "-DEPCTX_BUILD_BENCH=OFF", "-DEPCTX_BUILD_TESTS=OFF"])
    run(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2), "--target", "epctx_cli"])
    return exe


def ensure_models(models_dir, models):
    missing = [m for m in models if not os.path.exists(os.path.join(models_dir, m + ".onnx"))]
    if missing:
        run(["/usr/bin/python3", os.path.join(ROOT, "tests", "models", "export_torchvision.py"),
             "--out", models_dir, "--models", *missing])


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


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


def markdown(results):
    env = results["environment"]
    lines = [
        "# Benchmarks: epctx vs ONNX Runtime",
        "",
        "Written by `bench/run.sh` (do not edit by hand); raw reports in `bench/results/latest.json`.",
        "",
        f"- Date: {results['date']}; machine: {env['cpu']}, {env['cores']} cores, "
        f"Linux {env['kernel']}; shared with other work, so absolute times are noisy.",
        f"- {env['epctx_version']} (`epctx perf`, context model + blob, load mode mmap); "
        f"ONNX Runtime {env['ort_version']} via onnxruntime-node on Node {env['node']} "
        "(original `.onnx`, CPU execution provider, graph optimization level all).",
        f"- Threads: {results['threads']} for both (intra-op; run.py --threads). Load average "
        f"{env['loadavg_start']} at the start, {env['loadavg_end']} at the end: other work shared "
        "the cores, so times are noisy; memory is not affected.",
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
        lines += [f"## {model}", "", "| metric | epctx | ORT 1.30 | ratio |", "|---|---|---|---|"]
        for key, label in ROWS:
            lines.append(f"| {label} | {fmt(e.get(key))} | {fmt(o.get(key))} | "
                         f"{ratio(e.get(key), o.get(key))} |")
        lines.append("")
        cold = per.get("cold")
        if cold:
            lines += [f"### {model}: epctx load modes, cold page cache", "",
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
        lines += ["## Plots", ""]
        for p in plots:
            lines.append(f"![{os.path.basename(p)}](../{p})")
        lines.append("")
    return "\n".join(lines)


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


def environment(epctx, node):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ort_pkg = os.path.join(BENCH, "node_modules", "onnxruntime-node", "package.json")
    with open(ort_pkg) as f:
        ort_version = json.load(f)["version"]
    return {
        "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
        "epctx_version": run([epctx, "--version"]).strip(),
        "ort_version": ort_version, "node": run([node, "--version"]).strip(),
        "loadavg_start": "%.1f" % os.getloadavg()[0],
        "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], text=True,
                              stdout=subprocess.PIPE).stdout.strip(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="fresh-process repetitions per engine (>= 5)")
    ap.add_argument("--cold-reps", type=int, default=3, help="repetitions of the cold load-mode runs")
    ap.add_argument("--runs", type=int, default=20, help="timed inferences per repetition")
    # One kernel thread by default: on a small machine shared with other work, multi-threaded
    # runs mostly measure how long each engine's threads wait for a core at every barrier.
    ap.add_argument("--threads", type=int, default=1, help="kernel threads for both engines")
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--models-dir", default=os.environ.get("EPCTX_TEST_MODELS",
                                                           os.path.join(ROOT, "build", "test_models")))
    ap.add_argument("--epctx", help="epctx binary (default: build it in build-bench/)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold load-mode runs")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: rewrite the markdown and plots from latest.json")
    args = ap.parse_args()
    if args.report_only:
        with open(os.path.join(RESULTS, "latest.json")) as f:
            results = json.load(f)
        write_outputs(results)
        return

    models = args.models.split(",")
    epctx = args.epctx or build_epctx(os.path.join(ROOT, "build-bench"))
    ensure_models(args.models_dir, models)
    os.makedirs(TMP, exist_ok=True)
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "reps": args.reps,
               "cold_reps": args.cold_reps, "runs": args.runs, "threads": args.threads,
               "environment": environment(epctx, args.node), "models": {}}
    for model in models:
        original = os.path.join(args.models_dir, model + ".onnx")
        npy = os.path.join(args.models_dir, model + ".input.npy")
        ctx = os.path.join(TMP, model, model + "_ctx.onnx")
        os.makedirs(os.path.dirname(ctx), exist_ok=True)
        run([epctx, "compile", original, "-o", ctx])
        raw = {"epctx": [], "ort": []}
        for rep in range(args.reps):
            log(f"{model}: repetition {rep + 1}/{args.reps}")
            raw["epctx"].append(run_json([
                epctx, "perf", ctx, "--json", "--input", f"input={npy}", "--creations", "10",
                "--sessions", "16", "--processes", "4", "-r", str(args.runs), "-x", str(args.threads)]))
            raw["ort"].append(run_json([
                args.node, os.path.join(BENCH, "ort_bench.js"), "--model", original, "--input", npy,
                "--sessions", "16", "--processes", "4", "--runs", str(args.runs),
                "--threads", str(args.threads)]))
        summary = {}
        for engine, reports in raw.items():
            ms = [metrics(r) for r in reports]
            summary[engine] = {k: summarize([m.get(k) for m in ms]) for k in ms[0]}
        per = {"original": original, "context_model": ctx, "input": npy, "summary": summary,
               "raw": raw}
        if not args.no_cold:
            per["cold"], per["cold_raw"] = {}, {}
            for mode in LOAD_MODES:
                reports = [run_json([epctx, "perf", ctx, "--json", "--cold", "--load-mode", mode,
                                     "--input", f"input={npy}", "--creations", "3", "-r", "1",
                                     "-x", str(args.threads)]) for _ in range(args.cold_reps)]
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
        results["models"][model] = per

    results["environment"]["loadavg_end"] = "%.1f" % os.getloadavg()[0]
    write_outputs(results)


def write_outputs(results):
    results["plots"] = [os.path.relpath(p, ROOT) for p in plot(results)]
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "latest.json"), "w") as f:
        json.dump(results, f, indent=1)
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    with open(DOC, "w") as f:
        f.write(markdown(results))
    log(f"wrote {os.path.relpath(os.path.join(RESULTS, 'latest.json'), ROOT)} and "
        f"{os.path.relpath(DOC, ROOT)}")


if __name__ == "__main__":
    main()
