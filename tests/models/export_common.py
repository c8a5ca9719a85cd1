"""Plumbing shared by the test-model exporters (export_torchvision.py, export_transformers.py).

Why one module: both exporters write into the same directory and the same manifest.json, and the
rules that make re-running them cheap (a model is "up to date" when its files exist and its
manifest entry was written by the same script version and torch version) must be one rule.

Conventions every exporter follows, for a model NAME with graph inputs I1.. and outputs O1..:
    NAME.onnx           opset 17
    NAME.<Ii>.npy       the seeded input fed to the reference (torchvision: NAME.input.npy)
    NAME.<Oi>.npy       the reference output for exactly that input (NAME.output.npy)
    manifest.json       {"models": {NAME: entry}}; entry["input_files"] / ["output_files"] map
                        each graph input / output name to its file; entry["generator"] names the
                        script, entry["script_sha256"] its version.
"""

import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
MANIFEST = "manifest.json"


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def import_deps(script, wanted):
    """Import the (module, Debian package) pairs in `wanted` or exit 1 naming the packages."""
    missing, mods = [], {}
    for mod, pkg in wanted:
        try:
            mods[mod] = __import__(mod)
        except ImportError as e:
            missing.append((mod, pkg, e))
    if missing:
        lines = "\n".join(f"  {mod}: {e}" for mod, _, e in missing)
        pkgs = " ".join(pkg for _, pkg, _ in missing)
        die(f"missing Python modules for {os.path.basename(script)}:\n{lines}\n"
            f"Install the Debian packages and run with /usr/bin/python3:\n"
            f"  apt-get install -y {pkgs}")
    return mods


def input_passes_checker(onnx, model, path):
    """Whether onnx's checker accepts `model` (read from `path`). A rewriting script checks its
    output only where its input passes: the checker refuses the operators ONNX Runtime registers
    in the default domain (SimplifiedLayerNormalization), as in every model ONNX Runtime GenAI's
    builder writes."""
    try:
        onnx.checker.check_model(model)
        return True
    except onnx.checker.ValidationError as e:
        print(f"{path}: onnx's checker refuses the input ({str(e).splitlines()[0]}); the output "
              "is not checked either")
        return False


def script_version(paths):
    """sha256 over the files whose contents determine the fixtures (by base name and bytes)."""
    h = hashlib.sha256()
    for f in paths:
        with open(f, "rb") as fh:
            h.update(os.path.basename(f).encode() + b"\0" + fh.read())
    return h.hexdigest()


def atomic_path(path):
    return os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")


def save_npy(np, path, arr):
    tmp = atomic_path(path)
    with open(tmp, "wb") as f:
        np.save(f, arr)
    os.replace(tmp, path)


def load_manifest(path):
    try:
        with open(path) as f:
            m = json.load(f)
        return m if isinstance(m, dict) else {}
    except (OSError, ValueError):
        return {}


def write_manifest(path, manifest):
    tmp = atomic_path(path)
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def np_dtype_name(onnx, elem_type):
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type].name  # onnx 1.12


def io_desc(onnx, vi):
    dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in vi.type.tensor_type.shape.dim]
    return {"name": vi.name, "shape": dims,
            "dtype": np_dtype_name(onnx, vi.type.tensor_type.elem_type)}


def rel_err(np, got, ref):
    """max |got - ref| / max |ref| (the tolerance measure of every reference check here)."""
    return float(np.abs(np.asarray(got, np.float64) - ref).max()
                 / max(float(np.abs(ref).max()), 1e-30))


def io_files(name, names):
    return {n: f"{name}.{n}.npy" for n in names}


def publish(np, out_dir, name, tmp_onnx, feeds, outputs):
    """Write the input and output .npy files, then move the checked .onnx into place last (so a
    present .onnx implies present reference files)."""
    for arrays in (feeds, outputs):
        for n, arr in arrays.items():
            save_npy(np, os.path.join(out_dir, f"{name}.{n}.npy"), arr)
    os.replace(tmp_onnx, os.path.join(out_dir, name + ".onnx"))


def model_entry(mods, spec, proto, out_dir, feeds, outputs, err, seconds):
    """The manifest entry of one exported model (after publish)."""
    import collections

    np, onnx = mods["numpy"], mods["onnx"]
    name = spec["name"]
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    hist = collections.Counter(n.op_type for n in proto.graph.node)
    first = next(iter(outputs.values()))
    entry = {
        "group": spec.get("group"),
        "file": name + ".onnx",
        "input_files": io_files(name, feeds),
        "output_files": io_files(name, outputs),
        "bytes": os.path.getsize(os.path.join(out_dir, name + ".onnx")),
        "inputs": [io_desc(onnx, v) for v in proto.graph.input],
        "outputs": [io_desc(onnx, v) for v in proto.graph.output],
        "max_abs_output": float(np.abs(first).max()),
        "output_std": float(first.std()),
        "seed": spec["seed"],
        "arch": spec["arch"],
        "opset": opset,
        "node_count": len(proto.graph.node),
        "initializer_count": len(proto.graph.initializer),
        "op_histogram": dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))),
        "onnx_vs_reference_rel_err": err,
        "export_seconds": round(seconds, 2),
    }
    if len(feeds) == 1 and len(outputs) == 1:
        entry["input_file"] = next(iter(entry["input_files"].values()))
        entry["output_file"] = next(iter(entry["output_files"].values()))
    return entry


def up_to_date(entry, out_dir, name, version, torch_version):
    if not entry or entry.get("script_sha256") != version or entry.get("torch") != torch_version:
        return False
    files = [name + ".onnx"] + list(entry.get("input_files", {}).values()) \
        + list(entry.get("output_files", {}).values())
    return len(files) > 1 and all(os.path.isfile(os.path.join(out_dir, f)) for f in files)


def parse_args(script, description, groups, default_groups, argv):
    """--out DIR --models a b,c ... ('all': every group); returns args with args.groups."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="groups: " + ", ".join(groups))
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--models", nargs="+", default=list(default_groups), metavar="GROUP",
                   help="groups to export, space- or comma-separated; 'all' for every group "
                        f"(default: {' '.join(default_groups)})")
    p.add_argument("--quiet", action="store_true", help="print errors only")
    p.add_argument("--force", action="store_true", help="re-export even if up to date")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the NumPy re-evaluation of the exported .onnx")
    args = p.parse_args(argv)
    chosen = [g.strip() for item in args.models for g in item.split(",") if g.strip()]
    if chosen == ["all"]:
        chosen = list(groups)
    unknown = [g for g in chosen if g not in groups]
    if unknown or not chosen:
        p.error(f"unknown model group(s) {unknown}; choose from {', '.join(groups)} or all")
    args.groups = list(dict.fromkeys(chosen))
    return args


def export_groups(args, specs, export_one, version, stamp, after_group=None):
    """Export every spec of every chosen group unless up to date, updating the manifest after
    each model (so an interrupted run resumes). `export_one(spec) -> entry`; `stamp` is merged
    into every new entry (generator, library versions). `after_group(group, specs, exported_any,
    manifest)` may add group-level facts and returns whether it changed the manifest."""

    def say(msg):
        if not args.quiet:
            print(msg, flush=True)

    out_dir = os.path.abspath(args.out)
    manifest_path = os.path.join(out_dir, MANIFEST)
    manifest = load_manifest(manifest_path)
    for stale in ("generator", "script_sha256"):  # once top-level, now per entry
        manifest.pop(stale, None)
    entries = manifest.get("models") if isinstance(manifest.get("models"), dict) else {}
    manifest["models"] = entries
    for group in args.groups:
        group_specs = [dict(s, group=group) for s in specs[group]]
        exported_any = False
        for spec in group_specs:
            name = spec["name"]
            entry = entries.get(name)
            if not args.force and up_to_date(entry, out_dir, name, version, stamp["torch"]):
                say(f"up to date: {name}.onnx ({entry['bytes'] / 1e6:.1f} MB, "
                    f"{entry['node_count']} nodes, opset {entry['opset']})")
                continue
            entry = export_one(spec)
            exported_any = True
            entry.update(script_sha256=version, **stamp)
            entries[name] = entry
            write_manifest(manifest_path, manifest)
            check = entry.get("onnx_vs_reference_rel_err")
            check = f", max rel err of the .onnx vs reference {check:.1e}" if check is not None else ""
            say(f"exported {name}.onnx ({entry['bytes'] / 1e6:.1f} MB) in "
                f"{entry['export_seconds']:.1f} s; check_model ok: {entry['node_count']} nodes, "
                f"opset {entry['opset']}, max|output| {entry['max_abs_output']:.4g}{check}")
        if after_group and after_group(group, group_specs, exported_any, manifest):
            write_manifest(manifest_path, manifest)
