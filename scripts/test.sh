#!/usr/bin/env bash
# Builds everything and runs the whole test suite:
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds epctx and its tests (build/),
#   3. exports the test models with their reference outputs (build/test_models/): the torchvision
#      CNNs, the small BERT/GPT-2 variants and the log-mel front end (the exporters' default sets;
#      up-to-date models are skipped),
#   4. runs every test with CTest,
#   5. builds the blob-format tests with AddressSanitizer + UBSan (build-asan/) and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}

bash scripts/setup.sh

echo "== build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEPCTX_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$JOBS"

echo "== test models (build/test_models/)"
/usr/bin/python3 tests/models/export_torchvision.py --out build/test_models
/usr/bin/python3 tests/models/export_transformers.py --out build/test_models

echo "== tests"
# Tests run side by side (-j), each with as many kernel threads as cores: OpenMP's idle threads
# must not spin while the other test needs the cores (README, "Threads").
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --test-dir build --output-on-failure -j"$JOBS" --timeout 900

echo "== blob format tests under AddressSanitizer (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEPCTX_SANITIZE=ON -DEPCTX_BUILD_BENCH=OFF \
  >/dev/null
cmake --build build-asan --target format_tests -j"$JOBS"
ctest --test-dir build-asan --output-on-failure -L format
