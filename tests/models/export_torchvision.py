#!/usr/bin/python3
"""Export seeded, randomly initialised torchvision CNNs to ONNX test fixtures.

What: for each requested model this writes, into --out DIR,
    <name>.onnx         torch.onnx.export (TorchScript exporter), opset 17,
                        input "input" [1,3,224,224] float32, output "output"
    <name>.input.npy    seeded N(0,1) float32 input
    <name>.output.npy   PyTorch's own float32 output for exactly that input
                        on exactly the exported module (torch.no_grad, eval)
and an entry per model in DIR/manifest.json (names, shapes, max |output|, op
histogram, node count, opset, script hash); export_common.py holds the
conventions shared with export_transformers.py.

Why: epctx needs realistic end-to-end fixtures without network access, so
no pretrained weights: weights=None plus torch.manual_seed per model.  The
BatchNorm statistics and affine params are then randomised mildly (default
init is mean 0 / var 1 / weight 1 / bias 0, i.e. an identity BN that would
let a broken BN-folding pass go unnoticed).  The export keeps the
BatchNormalization nodes (training=TrainingMode.PRESERVE on an eval-mode
model) so the engine's own Conv+BN folding is exercised; the default
TrainingMode.EVAL makes torch fold BN into Conv itself.

Groups (--models; default: all but densenet121, which the benchmark asks for):
    resnet50        torchvision resnet50   (fc scaled down, see MODEL_SPECS)
    mobilenet_v2    torchvision mobilenet_v2
    resnet18_heads  resnet18_cls.onnx + resnet18_reg.onnx: one seeded
                    ResNet-18 trunk (identical weights and initializer
                    names "trunk.*") with a Linear(512,10) head, resp. a
                    Linear(512,4)+Sigmoid head; for weight-sharing tests.
    efficientnet_b0 torchvision efficientnet_b0 (SiLU, squeeze-excitation)
    squeezenet1_1   torchvision squeezenet1_1 (no BN; ceil-mode max pools)
    densenet121     torchvision densenet121 (concatenations, average pools)
    lraspp          torchvision lraspp_mobilenet_v3_large, semantic segmentation: its
                    output is a bilinear Resize of convolutions to the input's size,
                    convolutions read Resize outputs (a fully convolutional model)

Re-running is cheap: a model whose files exist and whose manifest entry was
written by the same script version (sha256 of this file, export_common.py
and onnx_numpy_ref.py) and torch version is reported "up to date" and
skipped.

After each export the .onnx is checked with onnx.checker.check_model and,
unless --no-verify, re-evaluated by the NumPy reference evaluator in
onnx_numpy_ref.py against the saved output (exit 1 on mismatch).

Requires Debian packages python3-torch python3-torchvision python3-onnx
python3-numpy; run with /usr/bin/python3.
"""

import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)

from export_common import OPSET, die, export_groups, import_deps, model_entry, parse_args, \
    publish, rel_err, script_version  # noqa: E402

INPUT_SHAPE = (1, 3, 224, 224)
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
    "efficientnet_b0": [dict(name="efficientnet_b0", seed=5004, arch="efficientnet_b0")],
    # SqueezeNet has no BN and torchvision initialises its conv biases to 0, so a
    # lost bias would go unnoticed: they are drawn from N(0, 0.05^2) instead.
    "squeezenet1_1": [dict(name="squeezenet1_1", seed=5005, arch="squeezenet1_1", conv_bias_std=0.05)],
    "densenet121": [dict(name="densenet121", seed=5006, arch="densenet121")],
    "lraspp": [dict(name="lraspp", seed=5007, arch="lraspp_mobilenet_v3_large", segmentation=True)],
}
# The benchmark asks for the others.
DEFAULT_GROUPS = [g for g in MODEL_SPECS if g not in ("densenet121", "lraspp")]
DEPS = (("numpy", "python3-numpy"), ("onnx", "python3-onnx"), ("torch", "python3-torch"),
        ("torchvision", "python3-torchvision"))


def version_files():
    return [os.path.abspath(__file__), os.path.join(HERE, "export_common.py"),
            os.path.join(HERE, "onnx_numpy_ref.py")]


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


def randomize_conv_biases(torch, model, gen, std):
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.Conv2d) and mod.bias is not None:
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=gen) * std)


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
    elif spec.get("segmentation"):
        net = getattr(tv.models.segmentation, spec["arch"])(weights=None, weights_backbone=None)
        randomize_batchnorm(torch, net, gen)

        class OutOnly(torch.nn.Module):  # the model returns {"out": ...}; ONNX wants a tensor
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)["out"]

        model = OutOnly(net)
    else:
        model = getattr(tv.models, spec["arch"])(weights=None)
        randomize_batchnorm(torch, model, gen)
        if "conv_bias_std" in spec:
            randomize_conv_biases(torch, model, gen, spec["conv_bias_std"])
        if "fc_scale" in spec:
            with torch.no_grad():
                model.fc.weight.mul_(spec["fc_scale"])
                model.fc.bias.mul_(spec["fc_scale"])
    return model.eval()


# --------------------------------------------------------------------------
# export / check


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

    tmp = os.path.join(out_dir, "." + name + ".onnx.tmp")
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
    bn_train = [n.name for n in proto.graph.node if n.op_type == "BatchNormalization"
                and (len(n.output) != 1 or any(a.name == "training_mode" and a.i for a in n.attribute))]
    if bn_train:
        die(f"{name}: training-mode BatchNormalization in export: {bn_train[:3]}")

    err = None
    if verify:
        from onnx_numpy_ref import run as ref_run

        got = ref_run(proto, {"input": x_np})["output"]
        err = rel_err(np, got, y_np)
        if got.shape != y_np.shape or not err < REL_TOL:
            die(f"{name}: ONNX (NumPy reference) disagrees with PyTorch: "
                f"shape {got.shape} vs {y_np.shape}, rel err {err:.3g}")

    feeds, outputs = {"input": x_np}, {"output": y_np}
    publish(np, out_dir, name, tmp, feeds, outputs)
    return model_entry(mods, spec, proto, out_dir, feeds, outputs, err, time.time() - t0)


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


def main(argv=None):
    args = parse_args(__file__, __doc__.split("\n\n")[0], MODEL_SPECS, DEFAULT_GROUPS,
                      sys.argv[1:] if argv is None else argv)
    mods = import_deps(__file__, DEPS)
    torch, tv, onnx = mods["torch"], mods["torchvision"], mods["onnx"]
    torch.set_num_threads(max(1, min(os.cpu_count() or 1, 8)))
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)

    def after_group(group, specs, exported_any, manifest):
        if group != "resnet18_heads" or not (exported_any or group not in manifest.get("sharing", {})):
            return False
        names = [s["name"] for s in specs]
        sharing = shared_initializers(mods, out_dir, names)
        if sharing["same_name_different_data"]:
            die(f"resnet18 trunks differ: {sharing['same_name_different_data'][:5]}")
        manifest.setdefault("sharing", {})[group] = sharing
        return True

    stamp = dict(generator="tests/models/export_torchvision.py", torch=torch.__version__,
                 torchvision=tv.__version__, onnx=onnx.__version__)
    export_groups(args, MODEL_SPECS, lambda spec: export_one(mods, spec, out_dir, args.verify),
                  script_version(version_files()), stamp, after_group)
    return 0


if __name__ == "__main__":
    sys.exit(main())
