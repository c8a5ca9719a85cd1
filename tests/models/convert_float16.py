#!/usr/bin/python3
"""Converts a float32 ONNX model to float16 the way GPU-oriented exports ship: every float
initializer, constant and activation becomes float16, while the graph's float inputs and outputs
stay float32 behind a Cast each (keep_io_types, as onnxconverter-common's converter does). Written
here from the ONNX specification, not from that converter.

Inputs that ONNX types as float32 only (Resize's roi and scales, the shape-like inputs of a few
operators) keep their float32 values.

usage: convert_float16.py IN.onnx OUT.onnx [--all-float16-io]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_common import die, import_deps, input_passes_checker  # noqa: E402

# (op, input index) whose float values must stay float32: their type constraint has no float16.
FLOAT32_INPUTS = {("Resize", 1), ("Resize", 2), ("Upsample", 1)}


def convert(mods, model, keep_io_types):
    np, onnx = mods["numpy"], mods["onnx"]
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    keep32 = set()
    for node in g.node:
        for i, name in enumerate(node.input):
            if (node.op_type, i) in FLOAT32_INPUTS and name:
                keep32.add(name)

    def to_half(t):
        a = numpy_helper.to_array(t)
        return numpy_helper.from_array(a.astype(np.float16), t.name)

    inits = []
    for t in g.initializer:
        inits.append(to_half(t) if t.data_type == TensorProto.FLOAT and t.name not in keep32 else t)
    del g.initializer[:]
    g.initializer.extend(inits)

    for node in g.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                if not (node.op_type == "Constant" and node.output[0] in keep32):
                    a.t.CopyFrom(to_half(a.t))
            elif node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16

    new_nodes = []
    float_inputs = [i for i in g.input if i.type.tensor_type.elem_type == TensorProto.FLOAT
                    and i.name not in {t.name for t in g.initializer}]
    if keep_io_types:
        for vi in float_inputs:
            half = vi.name + "_float16"
            for node in g.node:
                for k, name in enumerate(node.input):
                    if name == vi.name:
                        node.input[k] = half
            new_nodes.append(helper.make_node("Cast", [vi.name], [half], to=TensorProto.FLOAT16,
                                              name=vi.name + "_to_float16"))
    else:
        for vi in float_inputs:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    new_nodes.extend(g.node)
    for vo in g.output:
        if vo.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        if not keep_io_types:
            vo.type.tensor_type.elem_type = TensorProto.FLOAT16
            continue
        half = vo.name + "_float16"
        for node in new_nodes:
            for k, name in enumerate(node.output):
                if name == vo.name:
                    node.output[k] = half
            for k, name in enumerate(node.input):
                if name == vo.name:
                    node.input[k] = half
        new_nodes.append(helper.make_node("Cast", [half], [vo.name], to=TensorProto.FLOAT,
                                          name=vo.name + "_to_float32"))
    del g.node[:]
    g.node.extend(new_nodes)
    # Types recorded for intermediate values are float32 ones: let shape inference redo them.
    del g.value_info[:]
    return model


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--all-float16-io", action="store_true",
                   help="make the graph's float inputs and outputs float16 too")
    args = p.parse_args(argv)
    mods = import_deps(__file__, (("numpy", "python3-numpy"), ("onnx", "python3-onnx")))
    onnx = mods["onnx"]
    model = onnx.load(args.input)
    input_checks = input_passes_checker(onnx, model, args.input)
    model = convert(mods, model, not args.all_float16_io)
    if input_checks:
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as e:
            die(f"{args.input}: the float16 model does not check: {e}")
    tmp = os.path.join(os.path.dirname(os.path.abspath(args.output)),
                       "." + os.path.basename(args.output) + ".tmp")
    onnx.save(model, tmp)
    os.replace(tmp, args.output)
    print(f"{args.output}: float16 ({'float32' if not args.all_float16_io else 'float16'} inputs "
          f"and outputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
