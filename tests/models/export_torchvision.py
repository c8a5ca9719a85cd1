#!/usr/bin/python3
"""Export seeded, randomly initialised torchvision CNNs to ONNX test fixtures.

What: for each requested model this writes, into --out DIR,
    <name>.onnx         torch.onnx.export (TorchScript exporter), opset 17,
                        input "input" [1,3,224,224] float32, output "output"
    <name>.input.npy    seeded N(0,1) float32 input
    <name>.output.npy   PyTorch's own float32 output for exactly that input
                        on exactly the exported module (torch.no_grad, eval)
and a DIR/manifest.json describing every file (names, shapes, max |output|,
op histogram, node count, opset, script hash).

Why: epctx needs realistic end-to-end fixtures without network access, so
no pretrained weights: weights=None plus torch.manual_seed per model.  The
BatchNorm statistics and affine params are then randomised mildly (default
init is mean 0 / var 1 / weight 1 / bias 0, i.e. an identity BN that would
let a broken BN-folding pass go unnoticed).  The export keeps the
BatchNormalization nodes (training=TrainingMode.PRESERVE on an eval-mode
model) so the engine's own Conv+BN folding is exercised; the default
TrainingMode.EVAL makes torch fold BN into Conv itself.

Groups (--models):
    resnet50        torchvision resnet50   (fc scaled down, see MODEL_SPECS)
    mobilenet_v2    torchvision mobilenet_v2
    resnet18_heads  resnet18_cls.onnx + resnet18_reg.onnx: one seeded
                    ResNet-18 trunk (identical weights and initializer
                    names "trunk.*") with a Linear(512,10) head, resp. a
                    Linear(512,4)+Sigmoid head; for weight-sharing tests.

Re-running is cheap: a model whose three files exist and whose manifest
entry was written by the same script version (sha256 of this file and
onnx_numpy_ref.py) and torch version is reported "up to date" and skipped.

After each export the .onnx is checked with onnx.checker.check_model and,
unless --no-verify, re-evaluated by the NumPy reference evaluator in
onnx_numpy_ref.py against the saved output (exit 1 on mismatch).

Requires Debian packages python3-torch python3-torchvision python3-onnx
python3-numpy; run with /usr/bin/python3.
"""

import argparse
import collections
import hashlib
import json
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
INPUT_SHAPE = (1, 3, 224, 224)
OPSET = 17
REL_TOL = 1e-4  # ONNX (NumPy float64) vs PyTorch float32, relative to max |ref|

# group -> list of artifacts; each artifact: name, seed, builder key, extras
MODEL_SPECS = {
    # With randomised BN, ResNet-50's bottleneck residuals compound (layer4
    # activations reach ~4e3) and the raw logits are ~1e3; fc is scaled by
    # 0.01 so the logits are O(10).  The saved output is still computed on
    # the scaled, saved model.
    "resnet50": [dict(name="resnet50", seed=5001, arch="resnet50", fc_scale=0.01)],
    "mobilenet_v2": [dict(name="mobilenet_v2", seed=5002, arch="mobilenet_v2")],
    "resnet18_heads": [
        dict(name="resnet18_cls", seed=5003, arch="resnet18_trunk", head="cls"),
        # reg head scaled by 0.3: unscaled, the logits are ~-10..-1.5 and the
        # Sigmoid saturates (output ~6e-5); scaled they sit in its steep part.
        dict(name="resnet18_reg", seed=5003, arch="resnet18_trunk", head="reg", head_scale=0.3),
    ],
}


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def import_deps():
    """Import numpy/onnx/torch/torchvision or exit 1 naming the Debian packages."""
    missing = []
    mods = {}
    for mod, pkg in (("numpy", "python3-numpy"), ("onnx", "python3-onnx"),
                     ("torch", "python3-torch"), ("torchvision", "python3-torchvision")):
        try:
            mods[mod] = __import__(mod)
        except ImportError as e:
            missing.append((mod, pkg, e))
    if missing:
        lines = [f"  {mod}: {e}" for mod, _, e in missing]
        pkgs = " ".join(pkg for _, pkg, _ in missing)
        die("missing Python modules for %s:\n%s\n"
            "Install the Debian packages and run with /usr/bin/python3:\n"
            "  apt-get install -y %s"
            % (os.path.basename(__file__), "\n".join(lines), pkgs))
    return mods


def script_version():
    """sha256 over the files whose contents determine the fixtures."""
    h = hashlib.sha256()
    for f in (os.path.abspath(__file__), os.path.join(HERE, "onnx_numpy_ref.py")):
        with open(f, "rb") as fh:
            h.update(os.path.basename(f).encode() + b"\0" + fh.read())
    return h.hexdigest()


# --------------------------------------------------------------------------
# model construction


def randomize_batchnorm(torch, model, gen):
    """Mildly randomise BN running stats and affine params (in place)."""
    count = 0
    for mod in model.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            n = mod.num_features
            with torch.no_grad():
                mod.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
                mod.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
                mod.weight.copy_(torch.rand(n, generator=gen) + 0.5)
                mod.bias.copy_(torch.randn(n, generator=gen) * 0.1)
            count += 1
    return count


def build_model(mods, spec):
    """Build the eval-mode torch module for one artifact spec (deterministic)."""
    torch, tv = mods["torch"], mods["torchvision"]
    seed = spec["seed"]
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    if spec["arch"] == "resnet18_trunk":
        # Build trunk + both heads in a fixed order so that resnet18_cls and
        # resnet18_reg get bit-identical trunks however they are selected.
        trunk = tv.models.resnet18(weights=None)
        randomize_batchnorm(torch, trunk, gen)
        trunk.fc = torch.nn.Identity()
        heads = {
            "cls": torch.nn.Linear(512, 10),
            "reg": torch.nn.Sequential(torch.nn.Linear(512, 4), torch.nn.Sigmoid()),
        }

        class TrunkHead(torch.nn.Module):
            def __init__(self, trunk, head):
                super().__init__()
                self.trunk = trunk
                self.head = head

            def forward(self, x):
                return self.head(self.trunk(x))

        model = TrunkHead(trunk, heads[spec["head"]])
        if "head_scale" in spec:
            with torch.no_grad():
                for p in model.head.parameters():
                    p.mul_(spec["head_scale"])
    else:
        model = getattr(tv.models, spec["arch"])(weights=None)
        randomize_batchnorm(torch, model, gen)
        if "fc_scale" in spec:
            with torch.no_grad():
                model.fc.weight.mul_(spec["fc_scale"])
                model.fc.bias.mul_(spec["fc_scale"])
    return model.eval()


# --------------------------------------------------------------------------
# export / check


def atomic_path(path):
    return os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")


def save_npy(np, path, arr):
    tmp = atomic_path(path)
    with open(tmp, "wb") as f:
        np.save(f, arr)
    os.replace(tmp, path)


def export_one(mods, spec, out_dir, verify):
    """Export one artifact; return its manifest entry."""
    np, onnx, torch = mods["numpy"], mods["onnx"], mods["torch"]
    name = spec["name"]
    t0 = time.time()
    model = build_model(mods, spec)

    x_np = np.random.default_rng(spec["seed"]).standard_normal(INPUT_SHAPE, dtype=np.float32)
    x = torch.from_numpy(x_np.copy())
    with torch.no_grad():
        y = model(x)
    y_np = y.detach().numpy().astype(np.float32)
    if not np.all(np.isfinite(y_np)):
        die(f"{name}: PyTorch output is not finite")
    if float(y_np.std()) <= 1e-3:
        die(f"{name}: PyTorch output is degenerate (std {y_np.std():.3g})")

    onnx_path = os.path.join(out_dir, name + ".onnx")
    tmp = atomic_path(onnx_path)
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns about "training-amenable mode";
        # irrelevant: the model is in eval mode, BN exports as inference BN.
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(
                model, x, tmp,
                export_params=True,
                opset_version=OPSET,
                input_names=["input"],
                output_names=["output"],
                do_constant_folding=True,
                training=torch.onnx.TrainingMode.PRESERVE,  # keeps BN nodes
            )
    # The module must not have been changed by the export.
    with torch.no_grad():
        y2 = model(x).numpy()
    if not np.array_equal(y2, y_np):
        die(f"{name}: module output changed across export")

    proto = onnx.load(tmp)
    onnx.checker.check_model(proto)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    hist = collections.Counter(n.op_type for n in proto.graph.node)
    bn_train = [n.name for n in proto.graph.node if n.op_type == "BatchNormalization"
                and (len(n.output) != 1 or any(a.name == "training_mode" and a.i for a in n.attribute))]
    if bn_train:
        die(f"{name}: training-mode BatchNormalization in export: {bn_train[:3]}")

    rel_err = None
    if verify:
        from onnx_numpy_ref import run as ref_run

        got = ref_run(proto, {"input": x_np})["output"]
        rel_err = float(np.abs(got - y_np).max() / max(float(np.abs(y_np).max()), 1e-30))
        if got.shape != y_np.shape or not rel_err < REL_TOL:
            die(f"{name}: ONNX (NumPy reference) disagrees with PyTorch: "
                f"shape {got.shape} vs {y_np.shape}, rel err {rel_err:.3g}")

    save_npy(np, os.path.join(out_dir, name + ".input.npy"), x_np)
    save_npy(np, os.path.join(out_dir, name + ".output.npy"), y_np)
    os.replace(tmp, onnx_path)

    def io_desc(vi):
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
                for d in vi.type.tensor_type.shape.dim]
        return {"name": vi.name, "shape": dims,
                "dtype": np_dtype_name(onnx, vi.type.tensor_type.elem_type)}

    return {
        "group": spec.get("group"),
        "file": name + ".onnx",
        "input_file": name + ".input.npy",
        "output_file": name + ".output.npy",
        "bytes": os.path.getsize(onnx_path),
        "inputs": [io_desc(v) for v in proto.graph.input],
        "outputs": [io_desc(v) for v in proto.graph.output],
        "max_abs_output": float(np.abs(y_np).max()),
        "output_std": float(y_np.std()),
        "seed": spec["seed"],
        "arch": spec["arch"],
        "opset": opset,
        "node_count": len(proto.graph.node),
        "initializer_count": len(proto.graph.initializer),
        "op_histogram": dict(sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))),
        "onnx_vs_torch_rel_err": rel_err,
        "export_seconds": round(time.time() - t0, 2),
    }


def np_dtype_name(onnx, elem_type):
    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        return onnx.helper.tensor_dtype_to_np_dtype(elem_type).name
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type].name  # onnx 1.12


def shared_initializers(mods, out_dir, names):
    """Count initializers with identical name and bytes across the given models."""
    onnx = mods["onnx"]
    maps = []
    for n in names:
        p = onnx.load(os.path.join(out_dir, n + ".onnx"))
        maps.append({i.name: i.SerializeToString() for i in p.graph.initializer})
    common = set.intersection(*(set(m) for m in maps))
    same = sorted(k for k in common if all(m[k] == maps[0][k] for m in maps))
    return {"models": names, "identical_initializers": len(same),
            "same_name_different_data": sorted(common - set(same)),
            "per_model_initializers": [len(m) for m in maps]}


# --------------------------------------------------------------------------


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


def up_to_date(entry, out_dir, name, version, torch_version):
    if not entry or entry.get("script_sha256") != version or entry.get("torch") != torch_version:
        return False
    return all(os.path.isfile(os.path.join(out_dir, name + ext))
               for ext in (".onnx", ".input.npy", ".output.npy"))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="groups: " + ", ".join(MODEL_SPECS))
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--models", default=",".join(MODEL_SPECS),
                   help="comma-separated groups (default: all): " + ",".join(MODEL_SPECS))
    p.add_argument("--quiet", action="store_true", help="print errors only")
    p.add_argument("--force", action="store_true", help="re-export even if up to date")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="skip the NumPy re-evaluation of the exported .onnx")
    args = p.parse_args(argv)
    groups = [g.strip() for g in args.models.split(",") if g.strip()]
    unknown = [g for g in groups if g not in MODEL_SPECS]
    if unknown or not groups:
        p.error(f"unknown model group(s) {unknown}; choose from {', '.join(MODEL_SPECS)}")
    args.groups = groups
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    mods = import_deps()
    torch, tv, onnx = mods["torch"], mods["torchvision"], mods["onnx"]
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, HERE)
    torch.set_num_threads(max(1, min(os.cpu_count() or 1, 8)))

    def say(msg):
        if not args.quiet:
            print(msg, flush=True)

    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    manifest = load_manifest(manifest_path)
    version = script_version()
    entries = manifest.get("models", {}) if isinstance(manifest.get("models"), dict) else {}

    for group in args.groups:
        specs = [dict(s, group=group) for s in MODEL_SPECS[group]]
        exported_any = False
        for spec in specs:
            name = spec["name"]
            entry = entries.get(name)
            if not args.force and up_to_date(entry, out_dir, name, version, torch.__version__):
                say(f"up to date: {name}.onnx ({entry['bytes'] / 1e6:.1f} MB, "
                    f"{entry['node_count']} nodes, opset {entry['opset']})")
                continue
            entry = export_one(mods, spec, out_dir, args.verify)
            exported_any = True
            entry.update(script_sha256=version, torch=torch.__version__,
                         torchvision=tv.__version__, onnx=onnx.__version__)
            entries[name] = entry
            manifest.update(generator="tests/models/export_torchvision.py",
                            script_sha256=version, models=entries)
            write_manifest(manifest_path, manifest)  # after each model: resumable
            check = f", max rel err vs torch {entry['onnx_vs_torch_rel_err']:.1e}" \
                if entry["onnx_vs_torch_rel_err"] is not None else ""
            say(f"exported {name}.onnx ({entry['bytes'] / 1e6:.1f} MB) in "
                f"{entry['export_seconds']:.1f} s; check_model ok: {entry['node_count']} nodes, "
                f"opset {entry['opset']}, max|output| {entry['max_abs_output']:.4g}{check}")
        if group == "resnet18_heads" and (exported_any or group not in manifest.get("sharing", {})):
            names = [s["name"] for s in specs]
            sharing = shared_initializers(mods, out_dir, names)
            if sharing["same_name_different_data"]:
                die(f"resnet18 trunks differ: {sharing['same_name_different_data'][:5]}")
            manifest.setdefault("sharing", {})[group] = sharing
            write_manifest(manifest_path, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
