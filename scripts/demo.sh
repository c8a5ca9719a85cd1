#!/usr/bin/env bash
# Builds epctx and runs the main job on a generated demo model (torchvision ResNet-50, seeded
# weights, exported to ONNX by PyTorch): compile it to a context model + blob, load and run both
# forms, and compare session-creation time from the context model with loading the original.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
OUT=demo

bash scripts/setup.sh

echo "== build (build/)"
# A new build folder is generated for Ninja (scripts/test.sh says why); one configured before
# keeps its generator.
GENERATOR=()
[[ -f build/CMakeCache.txt ]] || GENERATOR=(-G Ninja)
cmake -S . -B build "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DEPCTX_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$JOBS" --target epctx_cli

echo "== demo model ($OUT/)"
/usr/bin/python3 tests/models/export_torchvision.py --out "$OUT" --models resnet50
EPCTX=build/bin/epctx

echo "== compile"
$EPCTX compile "$OUT/resnet50.onnx" -o "$OUT/resnet50_ctx.onnx"

echo "== what the blob holds, and a full check of it (weight checksums, kernels, original)"
$EPCTX inspect "$OUT/resnet50_ctx.onnx"
$EPCTX verify "$OUT/resnet50_ctx.onnx"

echo "== run from the context model"
$EPCTX run "$OUT/resnet50_ctx.onnx" --input input="$OUT/resnet50.input.npy" --output-dir "$OUT/res_ctx"
echo "== run from the original model (compiled in memory)"
$EPCTX run "$OUT/resnet50.onnx" --input input="$OUT/resnet50.input.npy" --output-dir "$OUT/res_orig"

echo "== both match PyTorch's own output (tolerance: 1e-4 of the output's scale)"
$EPCTX compare "$OUT/res_ctx/output.npy" "$OUT/resnet50.output.npy" --rtol 1e-4 --atol 2e-3
$EPCTX compare "$OUT/res_orig/output.npy" "$OUT/resnet50.output.npy" --rtol 1e-4 --atol 2e-3

echo "== session creation: context model vs original ONNX (same process, warm page cache)"
$EPCTX perf "$OUT/resnet50_ctx.onnx" --input input="$OUT/resnet50.input.npy" --creations 10 \
  --repeat 5 --compare-original
