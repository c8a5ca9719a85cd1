#!/usr/bin/env bash
# Installs a build to a temporary prefix and uses it as a stranger would: checks the installed
# files, that the public headers pull in no ONNX/protobuf/oneDNN/FlatBuffers/Eigen header, then
# configures, builds and runs two consumer projects out of tree (C++ with find_package(epctx),
# C with pkg-config), runs the installed `epctx` command, and imports the Python package from
# the prefix. Usage: run_install_test.sh BUILD_DIR MODELS_DIR PYTHON
set -euo pipefail
build=$1 models=$2 python=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/epctx_install_XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "== install to $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
pydir=$prefix/lib/python3/dist-packages
for f in lib/libepctx.so include/epctx/epctx.h include/epctx/epctx_c.h bin/epctx \
         lib/cmake/epctx/epctxConfig.cmake lib/cmake/epctx/epctxConfigVersion.cmake \
         lib/pkgconfig/epctx.pc lib/python3/dist-packages/epctx/__init__.py; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $f was not installed"; exit 1; }
done
ls "$pydir"/epctx/_epctx.*.so >/dev/null

echo "== public headers include no dependency's header"
for h in "$prefix"/include/epctx/*.h; do
  c++ -std=c++20 -fsyntax-only -H -I"$prefix/include" -x c++ "$h" 2>"$work/includes.txt"
  if grep -E '/(onnx/|google/protobuf/|dnnl[^/]*$|oneapi/|flatbuffers/|eigen3/|spdlog/|fmt/)' "$work/includes.txt"; then
    echo "FAIL: $h pulls in the headers above"
    exit 1
  fi
done
cc -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$prefix/include" -x c \
  "$prefix/include/epctx/epctx_c.h"

echo "== find_package consumer (C++)"
cmake -S "$here/cmake_consumer" -B "$work/cmake_consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake_consumer.log"
cmake --build "$work/cmake_consumer" >>"$work/cmake_consumer.log"
# ldd's output is captured first: with pipefail, `ldd | grep -q` fails whenever grep exits at
# its first match before ldd has written everything (ldd dies of SIGPIPE).
consumer_libs=$(ldd "$work/cmake_consumer/consumer")
grep -q "libepctx.so.* => $prefix/lib/" <<<"$consumer_libs" \
  || { echo "FAIL: the consumer does not load the installed libepctx.so"; echo "$consumer_libs"; exit 1; }
mkdir "$work/cpp_out"
"$work/cmake_consumer/consumer" "$models/resnet18_cls.onnx" "$models/resnet18_cls.input.npy" \
  "$models/resnet18_cls.output.npy" "$work/cpp_out"

echo "== pkg-config consumer (C), on a context model from the installed epctx command"
"$prefix/bin/epctx" --version
mkdir "$work/c_out"
"$prefix/bin/epctx" compile "$models/resnet18_reg.onnx" -o "$work/c_out/resnet18_reg_ctx.onnx"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S "$here/pkgconfig_consumer" \
  -B "$work/pkgconfig_consumer" -DCMAKE_BUILD_TYPE=Release >"$work/pkgconfig_consumer.log"
cmake --build "$work/pkgconfig_consumer" >>"$work/pkgconfig_consumer.log"
"$work/pkgconfig_consumer/consumer" "$work/c_out/resnet18_reg_ctx.onnx" "$models/resnet18_reg.onnx"

echo "== Python package from the prefix"
PYTHONPATH=$pydir PYTHONDONTWRITEBYTECODE=1 "$python" - "$pydir" "$prefix/lib" "$models" <<'PY'
import os, sys
import numpy as np
pydir, libdir, models = sys.argv[1:]
import epctx
assert epctx.__file__.startswith(pydir), epctx.__file__
sess = epctx.InferenceSession(os.path.join(models, "resnet18_cls.onnx"))
x = np.load(os.path.join(models, "resnet18_cls.input.npy"))
y = np.load(os.path.join(models, "resnet18_cls.output.npy"))
(got,) = sess.run(None, {"input": x})
np.testing.assert_allclose(got, y, rtol=1e-4, atol=1e-4 * np.abs(y).max())
with open("/proc/self/maps") as f:
    libs = {line.split()[-1] for line in f if "libepctx.so" in line}
assert libs and all(p.startswith(libdir) for p in libs), libs
print(f"python: epctx {epctx.__version__} from {pydir}, libepctx from {sorted(libs)[0]}: ok")
PY
echo "install test passed"
