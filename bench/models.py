"""The benchmark's models: exported by tests/models/export_*.py, compiled by `epctx compile`, fed
seeded random inputs, and checked once against the exporter's reference output.

Everything lands in one directory per run (bench/results/tmp by default, not committed):
    models/NAME.onnx (+ the exporter's input/reference .npy files and manifest.json)
    NAME/NAME_ctx.onnx + blob
    inputs/NAME.INPUT.npy
The exporters skip models that are already up to date, so a second run exports nothing.
"""

import importlib.util
import json
import os
import zlib

import numpy as np

from bench_common import ROOT, CommandFailed, log, run, run_shown

EXPORTERS = ["export_torchvision.py", "export_transformers.py"]
# Same measure and bound as tests/e2e: max |epctx - reference| / max |reference|.
CHECK_RTOL = 1e-4


def exporter_groups():
    """model group -> exporter script path, read from each script's MODEL_SPECS."""
    groups = {}
    for script in EXPORTERS:
        path = os.path.join(ROOT, "tests", "models", script)
        spec = importlib.util.spec_from_file_location(script[:-3], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # cheap: torch is imported only by main()
        for group in module.MODEL_SPECS:
            groups[group] = path
    return groups


def export(models, models_dir):
    """Runs each exporter once for the models it owns; returns the manifest's entries."""
    groups = exporter_groups()
    unknown = [m for m in models if m not in groups]
    if unknown:
        raise SystemExit(f"bench: no exporter knows {unknown}; known: {', '.join(groups)}")
    for script in EXPORTERS:
        mine = [m for m in models if os.path.basename(groups[m]) == script]
        if mine:
            run_shown(["/usr/bin/python3", os.path.join(ROOT, "tests", "models", script),
                       "--out", models_dir, "--models", *mine])
    with open(os.path.join(models_dir, "manifest.json")) as f:
        entries = json.load(f)["models"]
    return {m: entries[m] for m in models}


def compile_model(epctx, models_dir, model, out_dir, variant="", options=()):
    """out_dir/NAME/NAME_ctx.onnx, NAME being the model's name plus `variant` (a compile with
    other `options`, such as --precision bf16, gets a folder of its own)."""
    name = model + variant
    ctx = os.path.join(out_dir, name, name + "_ctx.onnx")
    os.makedirs(os.path.dirname(ctx), exist_ok=True)
    run([epctx, "compile", os.path.join(models_dir, model + ".onnx"), "-o", ctx, *options])
    return ctx


def bench_inputs(model, entry, models_dir, out_dir):
    """Seeded random inputs shaped like the exporter's: floats N(0, 1); attention masks all ones;
    other integer inputs (token ids) uniform in [0, vocab). Returns {input name: path}."""
    rng = np.random.default_rng(zlib.crc32(model.encode()))
    paths = {}
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    for name, file in entry["input_files"].items():
        like = np.load(os.path.join(models_dir, file))
        if like.dtype.kind == "f":
            x = rng.standard_normal(like.shape).astype(like.dtype)
        elif name == "attention_mask":
            x = np.ones(like.shape, like.dtype)
        elif "vocab" in entry.get("config", {}):
            x = rng.integers(0, entry["config"]["vocab"], size=like.shape).astype(like.dtype)
        else:
            raise SystemExit(f"bench: {model}: no rule for integer input {name}")
        paths[name] = os.path.join(out_dir, "inputs", f"{model}.{name}.npy")
        np.save(paths[name], x)
    return paths


def input_args(flag, inputs):
    """[flag, NAME=FILE, ...] for epctx perf (--input) and ort_bench.js (--input)."""
    return [a for name, path in inputs.items() for a in (flag, f"{name}={path}")]


def check_output(epctx, ctx, entry, models_dir, out_dir, rtol=CHECK_RTOL):
    """Runs the context model on the exporter's input and compares with its reference output.
    Returns {"ok", "rel_err" or "error"}: the report says when epctx computes something else
    (a relative error of `rtol` or more)."""
    res = os.path.join(out_dir, os.path.basename(ctx)[:-len("_ctx.onnx")] + "_check")
    os.makedirs(res, exist_ok=True)
    feeds = {n: os.path.join(models_dir, f) for n, f in entry["input_files"].items()}
    try:
        run([epctx, "run", ctx, *input_args("--input", feeds), "--output-dir", res,
             "--config", "epctx.fallback|deny"])
    except CommandFailed as e:
        log(f"output check failed: {e}")
        return {"ok": False, "error": str(e)}
    worst = 0.0
    for name, file in entry["output_files"].items():
        ref = np.load(os.path.join(models_dir, file)).astype(np.float64)
        got = np.load(os.path.join(res, name + ".npy")).astype(np.float64)
        if got.shape != ref.shape:
            return {"ok": False, "error": f"output {name}: shape {got.shape}, reference {ref.shape}"}
        worst = max(worst, float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
    ok = bool(worst < rtol)
    if not ok:
        log(f"{os.path.basename(ctx)}: output differs from the reference: rel err {worst:.3g}")
    return {"ok": ok, "rel_err": worst}
