#!/usr/bin/python3
"""Opt-in check beyond the test suite's fixtures: torchvision's architectures, exported by PyTorch
with random weights, compiled by epctx and run from the blob (fallback denied), each output
compared with PyTorch's own.

    /usr/bin/python3 tests/models/sweep_torchvision.py --build build [--models a,b] [--work DIR]

Each model is built with weights=None from a fixed seed; BatchNormalization statistics are
randomised as export_torchvision.py does, and a Linear layer that torchvision initialises to
zeros (ViT's head) is drawn from N(0, 0.02), so that no output is degenerate. The export is
opset 17 (TorchScript exporter); ViT is exported in training mode with its dropouts at 0, because
torch 1.13's inference fast path (aten::_native_multi_head_attention) has no ONNX export.
Detection models are left out: with random weights their scores tie, and the order of tied boxes
is each engine's own.

A model passes when max |epctx - PyTorch| <= 1e-4 * max |PyTorch| (the end-to-end tests'
tolerance). Exit status 1 when any fails; a model PyTorch itself cannot export is reported and
skipped. Takes a few minutes on 2 cores.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REL_TOL = 1e-4
IMAGE = (1, 3, 224, 224)

# name -> (torchvision namespace, input shape)
MODELS = {
    "alexnet": ("models", IMAGE),
    "vgg11": ("models", IMAGE),
    "googlenet": ("models", IMAGE),
    "inception_v3": ("models", (1, 3, 299, 299)),
    "resnext50_32x4d": ("models", IMAGE),
    "shufflenet_v2_x0_5": ("models", IMAGE),
    "mnasnet0_5": ("models", IMAGE),
    "mobilenet_v3_small": ("models", IMAGE),
    "regnet_y_400mf": ("models", IMAGE),
    "efficientnet_v2_s": ("models", IMAGE),
    "convnext_tiny": ("models", IMAGE),
    "swin_t": ("models", IMAGE),
    "maxvit_t": ("models", IMAGE),
    "vit_b_16": ("models", IMAGE),
    "deeplabv3_mobilenet_v3_large": ("models.segmentation", IMAGE),
    "lraspp_mobilenet_v3_large": ("models.segmentation", IMAGE),
    "r3d_18": ("models.video", (1, 3, 8, 112, 112)),
}


def build(torch, torchvision, name, seed):
    space, shape = MODELS[name]
    module = torchvision
    for part in space.split("."):
        module = getattr(module, part)
    kwargs = {"weights": None}
    if space == "models.segmentation":
        kwargs["weights_backbone"] = None
    torch.manual_seed(seed)
    model = getattr(module, name)(**kwargs)
    gen = torch.Generator().manual_seed(seed + 1)
    sys.path.insert(0, HERE)
    from export_torchvision import randomize_batchnorm

    randomize_batchnorm(torch, model, gen)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * 0.02)
    return model.eval(), shape


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True, help="a build folder with bin/epctx and python/")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: all)")
    p.add_argument("--work", help="folder for the exports (default: a temporary one)")
    args = p.parse_args()
    build_dir = os.path.abspath(args.build)
    sys.path.insert(0, os.path.join(build_dir, "python"))
    import numpy as np
    import torch
    import torchvision

    import epctx

    torch.set_num_threads(1)
    unknown = [m for m in args.models.split(",") if m not in MODELS]
    if unknown:
        sys.exit(f"unknown models {unknown}; known: {', '.join(MODELS)}")
    work = args.work or tempfile.mkdtemp(prefix="epctx_sweep_")
    os.makedirs(work, exist_ok=True)
    failed, results = [], []
    for i, name in enumerate(args.models.split(",")):
        start = time.time()
        model, shape = build(torch, torchvision, name, 7000 + i)
        x = torch.from_numpy(np.random.default_rng(7000 + i).standard_normal(shape, dtype=np.float32))
        path = os.path.join(work, name + ".onnx")
        row = {"model": name}
        with torch.no_grad():
            y = model(x)
            y = (y["out"] if isinstance(y, dict) else y).numpy()
            if name == "vit_b_16":  # see the docstring
                model.train()
                for m in model.modules():
                    if isinstance(m, torch.nn.Dropout):
                        m.p = 0.0
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                                      training=torch.onnx.TrainingMode.PRESERVE)
            except Exception as e:  # noqa: BLE001 - PyTorch's limits, reported as such
                row["skipped"] = f"PyTorch cannot export it: {str(e).splitlines()[0][:160]}"
                results.append(row)
                print(json.dumps(row), flush=True)
                continue
        if float(y.std()) <= 1e-3:
            row["error"] = f"PyTorch's output is degenerate (std {y.std():.3g})"
        else:
            ctx = os.path.join(work, name + "_ctx.onnx")
            compiled = subprocess.run([os.path.join(build_dir, "bin", "epctx"), "compile", path,
                                       "-o", ctx], capture_output=True, text=True)
            if compiled.returncode != 0:
                row["error"] = "compile: " + (compiled.stderr or compiled.stdout)[-400:]
            else:
                so = epctx.SessionOptions()
                so.add_session_config_entry("epctx.fallback", "deny")
                try:
                    out = epctx.InferenceSession(ctx, so).run(None, {"input": x.numpy()})[0]
                    if out.shape != y.shape:
                        row["error"] = f"output shape {list(out.shape)}, PyTorch's {list(y.shape)}"
                    else:
                        row["rel_err"] = float(np.abs(out - y).max() / np.abs(y).max())
                        if not row["rel_err"] <= REL_TOL:
                            row["error"] = f"max |diff| / max |PyTorch| {row['rel_err']:.3g} > {REL_TOL}"
                except epctx.EpctxError as e:
                    row["error"] = f"{type(e).__name__}: {e}"
        row["seconds"] = round(time.time() - start, 1)
        if "error" in row:
            failed.append(name)
        results.append(row)
        print(json.dumps(row), flush=True)
    passed = sum(1 for r in results if "rel_err" in r and "error" not in r)
    skipped = sum(1 for r in results if "skipped" in r)
    print(f"{passed} passed, {len(failed)} failed {failed}, {skipped} skipped; exports in {work}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
