#!/usr/bin/env bash
# Builds everything and runs the whole test suite:
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds epctx and its tests (build/),
#   3. exports the test models with their reference outputs (build/test_models/): the torchvision
#      CNNs, the small BERT/GPT-2 variants and the log-mel front end (the exporters' default sets;
#      up-to-date models are skipped),
#   4. runs every test with CTest,
#   5. builds the blob-format tests with AddressSanitizer + UBSan (build-asan/) and runs them,
#   6. builds the libFuzzer targets with clang, ASan + UBSan (build-fuzz/): replays each seed
#      corpus (tests/fuzz/corpus/, crash inputs found included) and fuzzes each target for
#      FUZZ_SECONDS seconds (default 30),
#   7. builds the stress test with ThreadSanitizer (build-tsan/) and runs it for STRESS_SECONDS
#      (default 20).
# The sanitizer builds use -O1: they are there to run checks, not to be fast.
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
ctest --no-tests=error --test-dir build --output-on-failure -j"$JOBS" --timeout 900

echo "== blob format tests under AddressSanitizer (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEPCTX_SANITIZE=ON -DEPCTX_BUILD_BENCH=OFF \
  >/dev/null
cmake --build build-asan --target format_tests -j"$JOBS"
ctest --no-tests=error --test-dir build-asan --output-on-failure -L format

echo "== fuzz targets under AddressSanitizer + UBSan (build-fuzz/, clang)"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEPCTX_FUZZ=ON -DEPCTX_BUILD_TESTS=OFF \
  -DEPCTX_BUILD_BENCH=OFF -DEPCTX_FUZZ_SECONDS="${FUZZ_SECONDS:-30}" >/dev/null
cmake --build build-fuzz -j"$JOBS" \
  --target blob_fuzzer context_model_fuzzer onnx_import_fuzzer tensor_file_fuzzer
ctest --no-tests=error --test-dir build-fuzz --output-on-failure -j"$JOBS" -L fuzz

echo "== stress test under ThreadSanitizer (build-tsan/)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1" \
  -DEPCTX_TSAN=ON -DEPCTX_BUILD_TESTS=OFF -DEPCTX_BUILD_BENCH=OFF \
  -DEPCTX_STRESS_SECONDS="${STRESS_SECONDS:-20}" >/dev/null
cmake --build build-tsan -j"$JOBS" --target stress_tests
ctest --no-tests=error --test-dir build-tsan --output-on-failure -L tsan
