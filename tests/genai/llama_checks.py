"""What check_llama_fusions.py and check_llama_genai.py both do with the epctx CLI: run a step
or exit naming it, count the operators a compiled model holds, compare logits with PyTorch's."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# How far epctx's logits may be from PyTorch's: atol + rtol x |reference|.
ATOL, RTOL = "1e-4", "1e-3"


def run(cmd, who):
    """Runs `cmd`, returns its output; exits naming `who` and the command if it fails."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"{who}: {' '.join(cmd)} failed:\n{p.stdout}")
    return p.stdout


def compiled_ops(epctx, ctx, who):
    """{op: count} over every program of the context model `ctx` (epctx inspect --json)."""
    ops = {}
    for m in json.loads(run([epctx, "inspect", "--json", ctx], who))["blob"]["models"]:
        for program in m["programs"]:
            for op, count in program["ops"].items():
                ops[op] = ops.get(op, 0) + count
    return ops


def unexpected_ops(ops, expect):
    """A failure line for the ops whose counts differ from `expect`, or None."""
    wrong = {op: ops.get(op, 0) for op, want in expect.items() if ops.get(op, 0) != want}
    if not wrong:
        return None
    return f"ops {wrong}, expected {({op: expect[op] for op in wrong})} (all ops: {ops})"


def compile_with_ops(epctx, model, ctx, expect, who):
    """Compiles `model` into `ctx` (exits naming `who` if that fails); a failure line if the
    compiled program's op counts differ from `expect`, else None."""
    run([epctx, "compile", model, "-o", ctx], who)
    return unexpected_ops(compiled_ops(epctx, ctx, who), expect)


def logits_differ(epctx, got, want, label, atol=ATOL, rtol=RTOL):
    """Prints epctx compare's verdict on the two .npy files; a failure line if they differ beyond
    atol + rtol x |reference|."""
    p = subprocess.run([epctx, "compare", got, want, "--atol", atol, "--rtol", rtol],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(f"{label}: {p.stdout.strip()}")
    if p.returncode != 0:
        return f"{label}: logits differ from PyTorch's: {p.stdout.strip()}"
    return None


def export_tiny(doc, exporter, subdir, config_file, who):
    """The checks' command line (--epctx BIN --work DIR) and their model: tests/models/EXPORTER
    --config tiny into DIR/SUBDIR. Returns (args, that folder, the configuration it wrote)."""
    import argparse

    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epctx", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    out = os.path.join(args.work, subdir)
    os.makedirs(out, exist_ok=True)
    run(["/usr/bin/python3", os.path.join(REPO, "tests", "models", exporter), "--config", "tiny",
         "--out", out], who)
    with open(os.path.join(out, config_file)) as f:
        return args, out, json.load(f)


def finish(failed, success):
    """Exits with the failure lines, if any; else prints `success`."""
    if failed:
        sys.exit("\n".join(failed))
    print(success)
