#!/usr/bin/env bash
# epctx vs ONNX Runtime 1.30 (onnxruntime-node) on resnet50 and mobilenet_v2: session creation,
# first inference, latency, memory with 1/4/16 sessions and 4 processes. Builds what is missing,
# then runs bench/run.py, which writes bench/results/latest.json, docs/BENCHMARKS.md and, when
# matplotlib is installed, PNG plots under bench/results/. Options are run.py's (--help).
# Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "bench: needs Node.js and npm for ONNX Runtime (onnxruntime-node)" >&2
  exit 1
fi
if [[ ! -d bench/node_modules/onnxruntime-node ]]; then
  (cd bench && npm install --ignore-scripts --no-audit --no-fund)
fi
exec /usr/bin/python3 bench/run.py "$@"
