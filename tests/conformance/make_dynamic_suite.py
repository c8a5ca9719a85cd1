"""Writes a copy of an ONNX backend test suite whose graph inputs have only symbolic dims.

Every op that works with the static shapes of the backend tests must also work when the shapes
are known only at run time (no constant folding of Shape/Size, no static shape checks): the copy
is run through `epctx conformance --data-dir OUT --suite SUITE` against the static baseline.

Each test's model.onnx is rewritten: input dims become dim_params (one name per input and axis),
output dims lose their values and names, value_info is dropped; the test_data_set_* folders are
linked, not copied. With --baseline, OUT/expected_SUITE.txt is that (static) baseline with the
tests listed in --exceptions (known to fail only with symbolic dims, each with its reason) marked
failed: run against it, a test passing with static shapes and failing here is a regression.

usage: make_dynamic_suite.py --suite node --out build/dynamic_suites
           [--baseline tests/conformance/expected_node.txt
            --exceptions tests/conformance/dynamic_exceptions.txt]
"""

import argparse
import os
import sys

import onnx

DEFAULT_DATA_DIR = "/usr/share/libonnx-testdata/data"


def make_dynamic(model: onnx.ModelProto) -> onnx.ModelProto:
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    for k, value in enumerate(graph.input):
        if value.name in initializers or not value.type.HasField("tensor_type"):
            continue
        shape = value.type.tensor_type.shape
        for axis, dim in enumerate(shape.dim):
            dim.Clear()
            dim.dim_param = f"in{k}_d{axis}"
    for value in graph.output:
        if not value.type.HasField("tensor_type"):
            continue
        for dim in value.type.tensor_type.shape.dim:
            dim.Clear()
    del graph.value_info[:]
    return model


def write_baseline(static_path, exceptions_path, suite, out_path):
    exceptions = {}
    if exceptions_path:
        with open(exceptions_path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                test, _, reason = line.partition(" ")
                exceptions[test] = reason.strip()
    lines = [
        f"# {static_path} with symbolic input dims; failing only with symbolic dims (see "
        f"{exceptions_path}):"
    ]
    seen = set()
    with open(static_path) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            name = fields[0]
            key = f"{suite}/{name}"
            if key in exceptions:
                lines.append(f"# {name}: {exceptions[key]}")
                seen.add(key)
                fields[1] = "failed"
            lines.append(f"{name} {fields[1]}")
    unused = [k for k in exceptions if k.startswith(suite + "/") and k not in seen]
    if unused:
        print(f"exceptions not in the baseline: {', '.join(unused)}", file=sys.stderr)
        return False
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, out_path)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="node")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    parser.add_argument("--out", required=True)
    parser.add_argument("--baseline", help="the suite's static baseline")
    parser.add_argument("--exceptions", help="tests failing only with symbolic dims, and why")
    args = parser.parse_args()

    source = os.path.join(args.data_dir, args.suite)
    if not os.path.isdir(source):
        print(f"no suite '{args.suite}' in {args.data_dir}", file=sys.stderr)
        return 1
    target = os.path.join(args.out, args.suite)
    count = 0
    for test in sorted(os.listdir(source)):
        src = os.path.join(source, test)
        model_path = os.path.join(src, "model.onnx")
        if not os.path.isfile(model_path):
            continue
        dst = os.path.join(target, test)
        os.makedirs(dst, exist_ok=True)
        model = make_dynamic(onnx.load(model_path))
        tmp = os.path.join(dst, "model.onnx.tmp")
        onnx.save(model, tmp)
        os.replace(tmp, os.path.join(dst, "model.onnx"))
        for entry in os.listdir(src):
            if not entry.startswith("test_data_set_"):
                continue
            link = os.path.join(dst, entry)
            if not os.path.lexists(link):
                os.symlink(os.path.join(src, entry), link)
        count += 1
    print(f"{count} tests of '{args.suite}' with symbolic input dims in {target}")
    if args.baseline:
        out = os.path.join(args.out, f"expected_{args.suite}.txt")
        if not write_baseline(args.baseline, args.exceptions, args.suite, out):
            return 1
    return 0 if count > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
