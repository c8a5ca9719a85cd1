#!/usr/bin/env bash
# epctx vs ONNX Runtime 1.30 (onnxruntime-node): inference latency (p50 and first inference) of
# nine model classes at 1 and 2 threads, and session creation and memory with 1/4/16 sessions
# and 4 processes on resnet50 and mobilenet_v2. Installs onnxruntime-node when missing, then runs
# bench/run.py, which builds epctx (build-bench/), exports and compiles the models
# (bench/results/tmp/), and writes bench/results/latest.json, docs/BENCHMARKS.md and, when
# matplotlib is installed, PNG plots under bench/results/. Refuses to measure on a busy machine
# (1-minute load average >= 1) unless --force. Options are run.py's (--help), e.g.
#   bash bench/run.sh --latency-only --models mobilenet_v2 --runs 3 --reps 1 --force
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
