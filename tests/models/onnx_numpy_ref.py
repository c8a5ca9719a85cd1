"""Small NumPy reference evaluator for the ONNX graphs exported in tests/models.

Why: onnx 1.12 (Debian) has no onnx.reference and onnxruntime is not
installable here, yet we want independent proof that an exported .onnx
(not just the PyTorch module) computes the saved reference output.  This
evaluator implements only the ops the exporters' graphs use (torchvision
CNNs, the BERT/GPT-2 encoders and decoders with their shape arithmetic,
the log-mel front end), floats in float64, integers in their own type, and
raises NotImplementedError for anything else (an op, or an attribute value
it does not handle) so a new op can never be silently mis-evaluated.

Usage as a library:   outputs = run(onnx_model, {"input": array})
Usage from the shell: python3 onnx_numpy_ref.py model.onnx input.npy [expected.npy]
"""

import math
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


def _pool_windows(x, a, pad_value):
    """Sliding windows of MaxPool/AveragePool, with ceil_mode's extra end padding (a window
    that would start in the end padding is dropped, as PyTorch and ONNX Runtime do)."""
    k = a["kernel_shape"]
    if len(k) != 2 or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("pooling other than 2-D with explicit pads")
    strides = a.get("strides", [1, 1])
    dil = a.get("dilations", [1, 1])
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if a.get("ceil_mode", 0):
        for i in range(2):
            size, ek = x.shape[2 + i], (k[i] - 1) * dil[i] + 1
            span = size + pads[i] + pads[i + 2] - ek
            out = -(-span // strides[i]) + 1
            if (out - 1) * strides[i] >= size + pads[i]:
                out -= 1
            pads[i + 2] += max(0, (out - 1) * strides[i] + ek - (size + pads[i] + pads[i + 2]))
    return _windows(x, k, strides, pads, dil, pad_value)


def _maxpool(x, a):
    if a.get("storage_order", 0):
        raise NotImplementedError("MaxPool storage_order")
    return _pool_windows(x, a, -np.inf).max(axis=(4, 5))


def _averagepool(x, a):
    if a.get("ceil_mode", 0):
        raise NotImplementedError("AveragePool ceil_mode")
    win = _pool_windows(x, a, np.nan)
    if a.get("count_include_pad", 0):
        return np.nan_to_num(win, nan=0.0).mean(axis=(4, 5))
    return np.nanmean(win, axis=(4, 5))


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


def _float(x):
    """Floats are evaluated in float64; other types keep theirs."""
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype.kind == "f" else x


def _tensor(t):
    from onnx import numpy_helper

    return _float(numpy_helper.to_array(t))


def _constant(a):
    if "value" in a:
        return _tensor(a["value"])
    for key, dtype in (("value_float", np.float64), ("value_floats", np.float64),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if key in a:
            return np.array(a[key], dtype=dtype)
    raise NotImplementedError(f"Constant with {sorted(a)}")


def _cast(x, a):
    import onnx

    if hasattr(onnx.helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(a["to"]))
    else:
        dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])
    return x.astype(np.float64) if dtype.kind == "f" else x.astype(dtype)


def _div(x, y):
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return (np.trunc(x / y)).astype(np.result_type(x, y))  # ONNX: toward zero
    return x / y


def _reshape(x, shape, a):
    shape = [int(d) for d in shape]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def _slice(x, starts, ends, axes, steps):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        index[int(ax)] = slice(int(s), int(e), int(st))
    return x[tuple(index)]


def _squeeze(x, axes):
    return np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(int(v) for v in axes))


def _unsqueeze(x, axes):
    axes = sorted(int(v) + x.ndim + len(axes) if v < 0 else int(v) for v in axes)
    for ax in axes:
        x = np.expand_dims(x, ax)
    return x


def _split(x, split, a, count):
    axis = a.get("axis", 0)
    if split is None:
        split = a.get("split", [x.shape[axis] // count] * count)
    cuts = np.cumsum([int(v) for v in split])[:-1]
    return tuple(np.split(x, cuts, axis=axis))


def _softmax(x, a):
    axis = a.get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layernorm(x, scale, bias, a):
    axis = a.get("axis", -1)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * scale
    return y if bias is None else y + bias


_ERF = np.frompyfunc(math.erf, 1, 1)


def _pad(x, pads, value, a):
    if pads is None or (pads < 0).any():
        raise NotImplementedError("Pad without pads input, or with negative pads")
    n = x.ndim
    widths = [(int(pads[i]), int(pads[i + n])) for i in range(n)]
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode == "constant":
        return np.pad(x, widths, constant_values=0 if value is None else value.item())
    if mode in ("reflect", "edge"):
        return np.pad(x, widths, mode=mode)
    raise NotImplementedError(f"Pad mode {mode}")


def _stft(signal, step, window, length, a):
    """[batch, samples, 1] real signal -> [batch, frames, bins, 2] (real, imaginary)."""
    if signal.shape[-1] != 1:
        raise NotImplementedError("STFT of a complex signal")
    n = int(length) if length is not None else window.shape[0]
    step = int(step)
    x = signal[..., 0]
    frames = 1 + (x.shape[1] - n) // step
    idx = np.arange(frames)[:, None] * step + np.arange(n)[None, :]
    seg = x[:, idx] * (1.0 if window is None else window)
    bins = n // 2 + 1 if a.get("onesided", 1) else n
    k = np.arange(bins)[:, None] * np.arange(n)[None, :]
    angle = -2.0 * np.pi * k / n
    return np.stack([seg @ np.cos(angle).T, seg @ np.sin(angle).T], axis=-1)


def _reduce_sum_square(x, axes, a):
    axes = a.get("axes", axes)
    axes = None if axes is None else tuple(int(v) for v in axes)
    return (x * x).sum(axis=axes, keepdims=bool(a.get("keepdims", 1)))


def _linear_weights(n_in, n_out):
    """Per output index along one axis: the two input indices and the second one's weight, for
    Resize's linear mode with half_pixel coordinates (x_in = (x_out + 0.5) / scale - 0.5, clamped
    to the axis)."""
    x = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    x = np.clip(x, 0, n_in - 1)
    lo = np.floor(x).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, x - lo


def _resize(x, scales, sizes, a):
    """Resize in linear mode with half_pixel coordinates over the trailing dims whose size
    changes (what torch's bilinear interpolation exports), from `sizes` or `scales`."""
    mode = a.get("mode", b"nearest")
    ctm = a.get("coordinate_transformation_mode", b"half_pixel")
    if mode != b"linear" or ctm not in (b"half_pixel", b"pytorch_half_pixel"):
        raise NotImplementedError(f"Resize mode {mode} / {ctm}")
    if sizes is not None and len(sizes):
        out_shape = [int(d) for d in sizes]
    else:
        out_shape = [int(np.floor(d * s)) for d, s in zip(x.shape, scales)]
    y = x.astype(np.float64)
    for axis, (n_in, n_out) in enumerate(zip(x.shape, out_shape)):
        if n_in == n_out:
            continue
        lo, hi, w = _linear_weights(n_in, n_out)
        shape = [1] * y.ndim
        shape[axis] = n_out
        w = w.reshape(shape)
        y = np.take(y, lo, axis=axis) * (1 - w) + np.take(y, hi, axis=axis) * w
    return y


# op -> f(inputs, attributes, output count); an input that is absent is None.
OPS = {
    "Conv": lambda i, a, n: _conv(i[0], i[1], i[2] if len(i) > 2 else None, a),
    "BatchNormalization": lambda i, a, n: _batchnorm(*i[:5], a),
    "Relu": lambda i, a, n: np.maximum(i[0], 0.0),
    "Clip": lambda i, a, n: _clip(i[0], *(i[1:3] + [None] * (3 - len(i)))),
    "MaxPool": lambda i, a, n: _maxpool(i[0], a),
    "AveragePool": lambda i, a, n: _averagepool(i[0], a),
    "GlobalAveragePool": lambda i, a, n: i[0].mean(axis=tuple(range(2, i[0].ndim)), keepdims=True),
    "Flatten": lambda i, a, n: _flatten(i[0], a),
    "Gemm": lambda i, a, n: _gemm(i[0], i[1], i[2] if len(i) > 2 else None, a),
    "MatMul": lambda i, a, n: np.matmul(i[0], i[1]),
    "Sigmoid": lambda i, a, n: 1.0 / (1.0 + np.exp(-i[0])),
    "HardSigmoid": lambda i, a, n: np.clip(a.get("alpha", 0.2) * i[0] + a.get("beta", 0.5), 0, 1),
    "HardSwish": lambda i, a, n: i[0] * np.clip(i[0] / 6.0 + 0.5, 0, 1),
    "Resize": lambda i, a, n: _resize(i[0], i[2] if len(i) > 2 else None,
                                      i[3] if len(i) > 3 else None, a),
    "Tanh": lambda i, a, n: np.tanh(i[0]),
    "Erf": lambda i, a, n: _ERF(i[0]).astype(np.float64),
    "Log": lambda i, a, n: np.log(i[0]),
    "Softmax": lambda i, a, n: _softmax(i[0], a),
    "LayerNormalization": lambda i, a, n: _layernorm(i[0], i[1], i[2] if len(i) > 2 else None, a),
    "Identity": lambda i, a, n: i[0],
    "Constant": lambda i, a, n: _constant(a),
    "ConstantOfShape": lambda i, a, n: np.full(
        [int(d) for d in i[0]], _tensor(a["value"]).reshape(()) if "value" in a else 0.0),
    "Cast": lambda i, a, n: _cast(i[0], a),
    "Add": lambda i, a, n: i[0] + i[1],
    "Sub": lambda i, a, n: i[0] - i[1],
    "Mul": lambda i, a, n: i[0] * i[1],
    "Div": lambda i, a, n: _div(i[0], i[1]),
    "Pow": lambda i, a, n: np.power(i[0], i[1]),
    "Max": lambda i, a, n: np.maximum.reduce(np.broadcast_arrays(*i)),
    "Equal": lambda i, a, n: i[0] == i[1],
    "Where": lambda i, a, n: np.where(i[0], i[1], i[2]),
    "Shape": lambda i, a, n: np.array(i[0].shape[a.get("start", 0):a.get("end", None)], np.int64),
    "Gather": lambda i, a, n: np.take(i[0], i[1], axis=a.get("axis", 0)),
    "Concat": lambda i, a, n: np.concatenate(i, axis=a["axis"]),
    "Reshape": lambda i, a, n: _reshape(i[0], i[1], a),
    "Transpose": lambda i, a, n: np.transpose(i[0], a.get("perm")),
    "Slice": lambda i, a, n: _slice(i[0], *(i[1:5] + [None] * (5 - len(i)))),
    "Squeeze": lambda i, a, n: _squeeze(i[0], i[1] if len(i) > 1 else None),
    "Unsqueeze": lambda i, a, n: _unsqueeze(i[0], i[1]),
    "Expand": lambda i, a, n: np.broadcast_to(
        i[0], np.broadcast_shapes(i[0].shape, tuple(int(d) for d in i[1]))).copy(),
    "Range": lambda i, a, n: np.arange(i[0], i[1], i[2]).astype(np.result_type(i[0], i[1], i[2])),
    "Split": lambda i, a, n: _split(i[0], i[1] if len(i) > 1 else None, a, n),
    "Pad": lambda i, a, n: _pad(i[0], i[1], i[2] if len(i) > 2 else None, a),
    "STFT": lambda i, a, n: _stft(i[0], i[1], i[2] if len(i) > 2 else None,
                                  i[3] if len(i) > 3 else None, a),
    "ReduceSumSquare": lambda i, a, n: _reduce_sum_square(i[0], i[1] if len(i) > 1 else None, a),
}
# Outputs beyond the first that these ops may have and that the evaluator does not compute.
SINGLE_OUTPUT_ONLY = {"BatchNormalization", "MaxPool", "LayerNormalization"}
SUPPORTED_OPS = tuple(OPS)


def run(model, feeds):
    """Evaluate `model` (onnx.ModelProto) on `feeds` (name -> array): floats in float64."""
    env = {i.name: _tensor(i) for i in model.graph.initializer}
    env.update({k: _float(v) for k, v in feeds.items()})

    for node in model.graph.node:
        a = _attrs(node)
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(f"domain {node.domain}")
        if op not in OPS:
            raise NotImplementedError(f"op {op} (node {node.name})")
        if op == "BatchNormalization" and a.get("training_mode", 0):
            raise NotImplementedError("BatchNormalization training_mode=1")
        outputs = [o for o in node.output if o]
        if op in SINGLE_OUTPUT_ONLY and len(outputs) != 1:
            raise NotImplementedError(f"{op} with extra outputs (node {node.name})")
        inputs = [env[name] if name else None for name in node.input]
        y = OPS[op](inputs, a, len(node.output))
        for name, value in zip(node.output, y if isinstance(y, tuple) else (y,)):
            env[name] = value
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
