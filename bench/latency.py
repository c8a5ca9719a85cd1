"""The latency suite of bench/run.py: steady-state p50 latency and first-inference time of epctx
(context model, `epctx perf`) and ONNX Runtime (original model, ort_bench.js), per model class
and thread count, measured in the same run.

Per (thread count, model) and repetition, each engine runs in a fresh process: one session,
its first inference timed alone, then --runs timed inferences. Before a model's repetitions at a
thread count, both engines' files are brought into the page cache (the original model and the
context model read once, the blob faulted in as epctx's load leaves it: bench_common.warm_blob):
the figures are those of a warm page cache, as issue 30's targets state (a host that drops files
unused for a minute, as this project's VMs do, would otherwise give the first repetition a cold
start; the cold load-mode section measures that case). Which engine goes first
alternates between repetitions, so slow drift of the machine hits both alike. A repetition in
which an engine fails is recorded with its error, that engine is not run again for the model,
and the model's ratios become n/a (left out of the geometric mean).
"""

import math
import os

from bench_common import (BENCH, RESULTS, CommandFailed, bandwidth_text, log, run_json, summarize,
                          warm_page_cache)
from models import input_args

# The model classes compared (tests/models/export_*.py groups), in report order.
MODELS = ["resnet50", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1", "densenet121", "lraspp",
          "bert_base", "gpt2_decoder", "logmel"]
METRICS = [("latency_p50_ms", "steady p50"), ("first_inference_ms", "first inference"),
           ("first_result_ms", "creation + first inference")]


# epctx with its generated code made inside session creation (epctx.prepare_kernels=creation)
# instead of by background threads: the first inference then waits for no code generation, and
# creation takes that time instead. Reported beside the default for the first-inference figures.
CREATION_METRICS = [("creation_ms", "creation"), ("first_inference_ms", "first inference"),
                    ("first_result_ms", "creation + first inference")]


def metrics_of(report):
    """The METRICS of one engine's report (epctx perf --json and ort_bench.js share these keys).
    first_result_ms: creating the process's first session plus its first inference, the time an
    application waits for its first answer after it has started."""
    first = report["first_inference_ms"]
    creation = report["session_creation_ms"]["first"]
    return {"latency_p50_ms": report["latency_ms"]["p50"], "first_inference_ms": first,
            "first_result_ms": creation + first, "creation_ms": creation, "report": report}


def measure_epctx(epctx, ctx, inputs, threads, runs, prepare="background"):
    r = run_json([epctx, "perf", ctx, "--json", *input_args("--input", inputs),
                  "--creations", "1", "--sessions", "1", "--repeat", str(runs),
                  "--threads", str(threads), "--config", "epctx.fallback|deny",
                  "--config", f"epctx.prepare_kernels|{prepare}"])
    return metrics_of(r)


def measure_ort(node, original, inputs, threads, runs):
    r = run_json([node, os.path.join(BENCH, "ort_bench.js"), "--model", original,
                  *input_args("--input", inputs), "--sessions", "1", "--processes", "0",
                  "--runs", str(runs), "--threads", str(threads)])
    return metrics_of(r)


def model_files(p):
    """Every file either engine reads for a prepared model: the context model's folder (context
    model and blob) and the original model with any external data beside it."""
    ctx_dir = os.path.dirname(p["context_model"])
    files = [os.path.join(ctx_dir, n) for n in sorted(os.listdir(ctx_dir))]
    original = p["original"]
    files.append(original)
    if os.path.exists(original + ".data"):
        files.append(original + ".data")
    return [f for f in files if os.path.isfile(f)]


def measure_model(args, prepared, model, threads):
    """All repetitions of one model at one thread count: raw reports, summaries, ratios."""
    p = prepared[model]
    warm_page_cache(model_files(p))
    engines = {
        "epctx": lambda: measure_epctx(args.epctx, p["context_model"], p["inputs"], threads, args.runs),
        "ort": lambda: measure_ort(args.node, p["original"], p["inputs"], threads, args.runs),
        # One timed run after the first: only creation and the first inference are reported.
        "epctx_creation": lambda: measure_epctx(args.epctx, p["context_model"], p["inputs"],
                                                threads, 1, prepare="creation"),
    }
    raw = {"epctx": [], "ort": [], "epctx_creation": []}
    errors = {}
    for rep in range(args.reps):
        log(f"latency: {model}, {threads} thread(s), repetition {rep + 1}/{args.reps}")
        order = (["epctx", "ort", "epctx_creation"] if rep % 2 == 0
                 else ["epctx_creation", "ort", "epctx"])
        for engine in order:
            if engine in errors or (engine.startswith("epctx") and p.get("epctx_error")):
                continue
            try:
                raw[engine].append(engines[engine]())
            except CommandFailed as e:
                log(f"{engine} failed on {model}: {e}")
                errors[engine] = str(e)
    if p.get("epctx_error"):
        errors["epctx"] = p["epctx_error"]
    keys = {k for k, _ in METRICS + CREATION_METRICS}
    summary = {e: {k: summarize([r[k] for r in reports]) for k in keys}
               for e, reports in raw.items()}

    def ratios_of(engine, metrics):
        out = {}
        for key, _ in metrics:
            a, b = summary[engine][key], summary["ort"][key]
            ok = a and b and b["median"] > 0 and engine not in errors and "ort" not in errors
            out[key] = a["median"] / b["median"] if ok else None
        return out

    return {"summary": summary, "ratios": ratios_of("epctx", METRICS),
            "ratios_creation": ratios_of("epctx_creation", CREATION_METRICS),
            "errors": errors, "raw": raw}


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return {"value": math.exp(sum(math.log(v) for v in values) / len(values)), "models": len(values)}


def run_suite(args, prepared, models, environment):
    per = {str(t): {m: measure_model(args, prepared, m, t) for m in models} for t in args.threads}
    geo = {t: {key: geomean([per[t][m]["ratios"][key] for m in models]) for key, _ in METRICS}
           for t in per}
    geo_creation = {t: {key: geomean([per[t][m]["ratios_creation"][key] for m in models])
                        for key, _ in CREATION_METRICS if key != "creation_ms"} for t in per}
    return {
        "environment": environment, "threads": args.threads, "runs": args.runs, "reps": args.reps,
        "models": {m: {k: prepared[m][k] for k in ("original", "context_model", "inputs", "check",
                                                   "epctx_error") if k in prepared[m]}
                   for m in models},
        "by_threads": per, "geomean": geo, "geomean_creation": geo_creation,
    }


# --------------------------------------------------------------------------
# report


def num(v):
    if v is None:
        return "n/a"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def cell(s):
    return "n/a" if s is None else f"{num(s['median'])} ({num(s['min'])}–{num(s['max'])})"


def check_cell(model_info):
    check = model_info.get("check")
    if model_info.get("epctx_error"):
        return "**epctx cannot compile it**"
    if not check:
        return "not checked"
    if "error" in check:
        return "**failed to run**"
    return f"{check['rel_err']:.1e}" + ("" if check["ok"] else " **WRONG**")


def first_line(text):
    """The line of an error report that says what failed (epctx's `error:` line if present)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in lines:
        if "error:" in line:
            return line
    return lines[-1] if lines else "failed"


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def creation_table(lat, t, per):
    """First inference when epctx makes its generated code inside session creation (nothing for
    results from before this was measured)."""
    if not any("epctx_creation" in m["summary"] for m in per.values()):
        return []
    lines = [f"#### {t} thread{'s' if t != '1' else ''}, `epctx.prepare_kernels=creation`", "",
             "The session makes its oneDNN primitives inside creation (every core, caller "
             "included), so its first inference waits for no code generation; ORT's figures are "
             "those of the table above.", "",
             "| model | epctx creation (ms) | epctx first (ms) | ORT first (ms) | ratio | "
             "epctx creation + first (ms) | ORT creation + first (ms) | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for model, m in per.items():
        s = m["summary"]
        r = m.get("ratios_creation", {})
        if "epctx_creation" not in s:
            continue
        c = s["epctx_creation"]
        lines.append("| " + " | ".join([
            model, cell(c["creation_ms"]), cell(c["first_inference_ms"]),
            cell(s["ort"]["first_inference_ms"]), num(r.get("first_inference_ms")),
            cell(c["first_result_ms"]), cell(s["ort"]["first_result_ms"]),
            num(r.get("first_result_ms"))]) + " |")
    g = lat.get("geomean_creation", {}).get(t, {})
    if g:
        first, total = g.get("first_inference_ms"), g.get("first_result_ms")
        lines.append("| **geometric mean** | | | | "
                     + (f"**{num(first['value'])}**" if first else "n/a") + " | | | "
                     + (f"**{num(total['value'])}**" if total else "n/a") + " |")
    return lines + [""]


def markdown(lat):
    env = lat["environment"]
    busy = env.get("busy")
    # Reports from before the bandwidth was measured have none.
    bandwidth = (f"; {bandwidth_text(*env['bandwidth'])} (2-thread figures follow what two cores "
                 "get)" if env.get("bandwidth") else "")
    lines = [
        "## Inference latency: epctx vs ONNX Runtime",
        "",
        f"- Date: {env['date']}; machine: {env['cpu']}, {env['cores']} cores, Linux {env['kernel']}; "
        f"git {env['git']}.",
        f"- 1-minute load average {env['loadavg_start']} at the start, {env.get('loadavg_end', '?')} "
        "at the end" + bandwidth + "." + (" **Taken on a busy machine (run with --force): other "
                                          "work shared the cores, so these times are not "
                                          "representative.**" if busy else ""),
        f"- {env['epctx_version']}: context model + blob (`epctx perf`, load mode mmap, "
        "epctx.fallback=deny); ONNX Runtime "
        f"{env['ort_version']} via onnxruntime-node on Node {env['node']}: original `.onnx`, CPU "
        "execution provider, graph optimization level all, intra-op threads = the thread count, "
        "1 inter-op thread, sequential execution.",
        f"- {plural(lat['reps'], 'repetition')}, each a fresh process of each engine (order "
        f"alternating), with the page cache warm (before a model's repetitions at each thread "
        "count, the original model read once and the blob dropped from the page cache and "
        "faulted back through a mapping advised MADV_HUGEPAGE, as epctx's own load leaves it); "
        f"{plural(lat['runs'], 'timed run')} after "
        "the first inference. Cells: median (min–max) over the "
        "repetitions of each process's p50, or of its first inference (the first run after "
        "creating the session, which includes lazy set-up such as faulting the blob's pages in "
        "and, for epctx, the rest of the generated code its background threads had not made "
        "yet), or of creation + first inference (creating the process's first session, then its "
        "first inference: how long an application waits for its first answer).",
        "- ratio = epctx / ORT (below 1: epctx faster). Geometric mean over the models that both "
        "engines ran.",
        "- Inputs: seeded random (images, audio N(0, 1); token ids uniform in the vocabulary, "
        "attention mask all ones); transformers at batch 1, sequence 128.",
        "- Output check: epctx's output on the exporter's input against PyTorch's (logmel: "
        "NumPy's), max |diff| / max |reference|; above 1e-4 it is marked WRONG.",
        "",
    ]
    for t, per in lat["by_threads"].items():
        lines += [f"### {t} thread{'s' if t != '1' else ''}", "",
                  "| model | epctx p50 (ms) | ORT p50 (ms) | ratio | epctx first (ms) | "
                  "ORT first (ms) | ratio | epctx creation + first (ms) | ORT creation + first "
                  "(ms) | ratio | output check |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for model, m in per.items():
            s, r = m["summary"], m["ratios"]
            row = [model]
            for key, _ in METRICS:
                row += [cell(s["epctx"][key]), cell(s["ort"][key]), num(r[key])]
            row.append(check_cell(lat["models"][model]))
            lines.append("| " + " | ".join(row) + " |")
        g = [lat["geomean"][t][key] for key, _ in METRICS]
        counted = max((x["models"] for x in g if x), default=0)
        lines.append(f"| **geometric mean** ({plural(counted, 'model')}) | | | "
                     + " | | | ".join(f"**{num(x['value'])}**" if x else "n/a" for x in g) + " | |")
        lines.append("")
        lines += creation_table(lat, t, per)
        failures = [f"- {model}: {engine} failed: `{first_line(err)}`"
                    for model, m in per.items() for engine, err in m["errors"].items()]
        if failures:
            lines += failures + [""]
    if lat.get("plot"):
        lines += [f"![latency ratios](../{lat['plot']})", ""]
    return lines


def plot(lat, file_name):
    """Bar chart of the epctx/ORT ratios (p50 and first inference) per model and thread count,
    with their geometric mean; bars grow from 1 (log scale), up where epctx is slower. Written to
    bench/results/`file_name`."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator
    except ImportError:
        log("matplotlib not installed (apt-get install python3-matplotlib): no latency plot")
        return None
    threads = list(lat["by_threads"])
    models = list(next(iter(lat["by_threads"].values())))
    labels = models + ["geometric mean"]
    fig, axes = plt.subplots(len(METRICS), 1, figsize=(max(7, 1.0 * len(labels) + 2), 4.2 * len(METRICS)),
                             squeeze=False)
    width = 0.8 / max(1, len(threads))
    for ax, (key, label) in zip(axes[:, 0], METRICS):
        values_all = []
        for j, t in enumerate(threads):
            geo = lat["geomean"][t][key]
            values = [lat["by_threads"][t][m]["ratios"][key] for m in models] + \
                [geo["value"] if geo else None]
            xs = [i + (j - (len(threads) - 1) / 2) * width for i in range(len(labels))]
            ys = [v if v else float("nan") for v in values]
            ax.bar(xs, [y - 1 for y in ys], width, bottom=1,
                   label=f"{t} thread{'s' if t != '1' else ''}")
            for x, y in zip(xs, ys):
                if y == y:  # not NaN
                    ax.annotate(f"{y:.2f}", (x, y), ha="center", va="bottom" if y >= 1 else "top",
                                fontsize=7)
                else:
                    ax.annotate("n/a", (x, 1.0), ha="center", va="bottom", fontsize=7)
            values_all += [y for y in ys if y == y]
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        if values_all:
            lo, hi = min(values_all + [1.0]), max(values_all + [1.0])
            ax.set_ylim(lo / 1.3, hi * 1.3)
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.set_ylabel("epctx / ORT (log scale; below 1: epctx faster)")
        ax.set_title(f"{label} latency: epctx / ONNX Runtime")
        ax.legend()
    fig.tight_layout()
    path = os.path.join(RESULTS, file_name)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
