"""Tiny NumPy reference evaluator for the ONNX CNN graphs in tests/models.

Why: onnx 1.12 (Debian) has no onnx.reference and onnxruntime is not
installable here, yet we want independent proof that an exported .onnx
(not just the PyTorch module) computes the saved .output.npy.  This
evaluator implements only the handful of ops torchvision CNNs export to,
in float64, and raises NotImplementedError for anything else so a new op
can never be silently mis-evaluated.

Usage as a library:   outputs = run(onnx_model, {"input": array})
Usage from the shell: python3 onnx_numpy_ref.py model.onnx input.npy [expected.npy]
"""

import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _attrs(node):
    import onnx

    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _windows(x, kernel, strides, pads, dilations, pad_value):
    """(N,C,H,W) -> (N,C,Ho,Wo,kh,kw) view of the (padded) sliding windows."""
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    pt, pl, pb, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad_value)
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    v = sliding_window_view(xp, (ekh, ekw), axis=(2, 3))
    return v[:, :, ::sh, ::sw, ::dh, ::dw]


def _conv(x, w, b, a):
    n, c, _, _ = x.shape
    m, cg, kh, kw = w.shape
    group = a.get("group", 1)
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("Conv auto_pad")
    win = _windows(x, (kh, kw), a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                   a.get("dilations", [1, 1]), 0.0)
    ho, wo = win.shape[2], win.shape[3]
    mg = m // group
    # im2col per group: (G, N*Ho*Wo, Cg*kh*kw) @ (G, Cg*kh*kw, Mg)
    cols = win.reshape(n, group, cg, ho, wo, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(group, n * ho * wo, cg * kh * kw)
    wt = w.reshape(group, mg, cg * kh * kw).transpose(0, 2, 1)
    y = np.matmul(cols, wt)  # (G, N*Ho*Wo, Mg)
    y = y.reshape(group, n, ho, wo, mg).transpose(1, 0, 4, 2, 3).reshape(n, m, ho, wo)
    if b is not None:
        y = y + b.reshape(1, m, 1, 1)
    return y


def _maxpool(x, a):
    if a.get("ceil_mode", 0) or a.get("storage_order", 0):
        raise NotImplementedError("MaxPool ceil_mode/storage_order")
    k = a["kernel_shape"]
    win = _windows(x, k, a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                   a.get("dilations", [1, 1]), -np.inf)
    return win.max(axis=(4, 5))


def _batchnorm(x, scale, bias, mean, var, a):
    if a.get("training_mode", 0):
        raise NotImplementedError("BatchNormalization training_mode=1")
    shp = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + a.get("epsilon", 1e-5))
    return (x - mean.reshape(shp)) * inv.reshape(shp) + bias.reshape(shp)


def _gemm(A, B, C, a):
    if a.get("transA", 0):
        A = A.T
    if a.get("transB", 0):
        B = B.T
    y = a.get("alpha", 1.0) * (A @ B)
    if C is not None:
        y = y + a.get("beta", 1.0) * C
    return y


def _flatten(x, a):
    axis = a.get("axis", 1)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def _clip(x, lo, hi):
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


SUPPORTED_OPS = (
    "Conv", "BatchNormalization", "Relu", "Clip", "MaxPool", "Add",
    "GlobalAveragePool", "Flatten", "Gemm", "Sigmoid", "Identity", "Constant",
)


def run(model, feeds):
    """Evaluate `model` (onnx.ModelProto) on `feeds` (name -> array) in float64."""
    from onnx import numpy_helper

    env = {i.name: numpy_helper.to_array(i).astype(np.float64)
           if numpy_helper.to_array(i).dtype.kind == "f" else numpy_helper.to_array(i)
           for i in model.graph.initializer}
    env.update({k: np.asarray(v, dtype=np.float64) for k, v in feeds.items()})

    def get(node, i):
        if i >= len(node.input) or node.input[i] == "":
            return None
        return env[node.input[i]]

    for node in model.graph.node:
        a = _attrs(node)
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"domain {node.domain}")
        if op == "Conv":
            y = _conv(get(node, 0), get(node, 1), get(node, 2), a)
        elif op == "BatchNormalization":
            if len(node.output) != 1:
                raise NotImplementedError("BatchNormalization with extra outputs")
            y = _batchnorm(*(get(node, i) for i in range(5)), a)
        elif op == "Relu":
            y = np.maximum(get(node, 0), 0.0)
        elif op == "Clip":
            y = _clip(get(node, 0), get(node, 1), get(node, 2))
        elif op == "MaxPool":
            if len(node.output) != 1:
                raise NotImplementedError("MaxPool Indices output")
            y = _maxpool(get(node, 0), a)
        elif op == "Add":
            y = get(node, 0) + get(node, 1)
        elif op == "GlobalAveragePool":
            x = get(node, 0)
            y = x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)
        elif op == "Flatten":
            y = _flatten(get(node, 0), a)
        elif op == "Gemm":
            y = _gemm(get(node, 0), get(node, 1), get(node, 2), a)
        elif op == "Sigmoid":
            y = 1.0 / (1.0 + np.exp(-get(node, 0)))
        elif op == "Identity":
            y = get(node, 0)
        elif op == "Constant":
            t = a["value"]
            y = numpy_helper.to_array(t)
            y = y.astype(np.float64) if y.dtype.kind == "f" else y
        else:
            raise NotImplementedError(f"op {op} (node {node.name})")
        env[node.output[0]] = y
    return {o.name: env[o.name] for o in model.graph.output}


def main(argv):
    import onnx

    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(argv[1])
    x = np.load(argv[2])
    out = run(model, {model.graph.input[0].name: x})
    y = next(iter(out.values()))
    print("output shape", y.shape, "max|y|", float(np.abs(y).max()))
    if len(argv) == 4:
        ref = np.load(argv[3]).astype(np.float64)
        err = float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30))
        print("max|diff|/max|ref| =", err)
        return 0 if err < 1e-4 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
