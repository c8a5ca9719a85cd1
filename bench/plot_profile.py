#!/usr/bin/env python3
"""Per-op-type time chart (PNG) from a profile in ONNX Runtime's profiler format.

Reads what `epctx perf -p FILE` (or the session option epctx.profile_file) writes, and equally a
profile written by ONNX Runtime (onnxruntime_perf_test -p, SessionOptions.enable_profiling): a
JSON array of Chrome-trace events, or an object holding them under "traceEvents". Node events
("cat": "Node", name ending in "_kernel_time") are summed per op type (args.op_name) and divided
by the number of runs (the "model_run" events), so the bars are milliseconds per run.

  bench/plot_profile.py profile.json --out ops.png [--top 20] [--skip-first-run]

Prints the same figures as a table. Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import collections
import json
import sys


def load_events(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, dict):
        data = data.get("traceEvents", [])
    if not isinstance(data, list):
        raise SystemExit(f"{path}: not a profile (expected a JSON array of events)")
    return [e for e in data if isinstance(e, dict)]


def per_op_type(events, skip_first_run):
    """{op_type: microseconds per run}, the number of runs, and the node total per run."""
    runs = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])
    if skip_first_run and len(runs) > 1:
        first = runs.pop(0)
        end = first["ts"] + first["dur"]
        events = [e for e in events if not (first["ts"] <= e.get("ts", -1) <= end)]
    totals = collections.defaultdict(float)
    for e in events:
        if e.get("cat") != "Node" or not str(e.get("name", "")).endswith("_kernel_time"):
            continue
        op = (e.get("args") or {}).get("op_name", "?")
        totals[op] += float(e.get("dur", 0))
    n = max(1, len(runs))
    per_run = {op: us / n for op, us in totals.items()}
    return per_run, len(runs), sum(per_run.values())


def plot(per_run, runs, title, out, top):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = sorted(per_run.items(), key=lambda kv: kv[1], reverse=True)
    if len(items) > top:
        rest = sum(us for _, us in items[top:])
        items = items[:top] + [(f"{len(items) - top} other op types", rest)]
    items.reverse()  # largest at the top of a horizontal bar chart
    total = sum(us for _, us in items) or 1.0
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(items) + 1.5))
    bars = ax.barh([op for op, _ in items], [us / 1000 for _, us in items], color="#4878a8")
    for bar, (_, us) in zip(bars, items):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2,
                f" {us / 1000:.2f} ms ({100 * us / total:.0f}%)", va="center", fontsize=8)
    ax.set_xlabel(f"ms per run (node time summed per op type; {runs} run(s))")
    ax.set_title(title, fontsize=10)
    ax.margins(x=0.25)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("profile", help="profile JSON (epctx or ONNX Runtime)")
    p.add_argument("--out", help="PNG to write (default: PROFILE with .png)")
    p.add_argument("--top", type=int, default=20, help="op types drawn; the rest are summed")
    p.add_argument("--skip-first-run", action="store_true",
                   help="leave out the first run (warm-up) and its nodes")
    a = p.parse_args(argv)

    events = load_events(a.profile)
    per_run, runs, total = per_op_type(events, a.skip_first_run)
    if not per_run:
        raise SystemExit(f"{a.profile}: no node events (\"cat\": \"Node\", *_kernel_time)")
    out = a.out or (a.profile[:-5] if a.profile.endswith(".json") else a.profile) + ".png"
    print(f"{'op type':<28} {'ms/run':>10} {'share':>7}")
    for op, us in sorted(per_run.items(), key=lambda kv: kv[1], reverse=True):
        print(f"{op:<28} {us / 1000:>10.3f} {100 * us / total:>6.1f}%")
    print(f"{'all nodes':<28} {total / 1000:>10.3f}  ({runs} run(s))")
    plot(per_run, runs, a.profile, out, a.top)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
