#!/usr/bin/env bash
# Builds everything and runs the whole test suite:
#   1. installs missing Debian packages (scripts/setup.sh),
#   2. builds epctx and its tests (build/),
#   3. exports the test models with their reference outputs (build/test_models/): the torchvision
#      CNNs, the small BERT/GPT-2 variants and the log-mel front end (the exporters' default sets;
#      up-to-date models are skipped),
#   4. runs every test with CTest,
#   5. builds the blob-format tests and the libFuzzer targets with clang, ASan + UBSan
#      (build-fuzz/), runs the format tests, then replays each seed corpus (tests/fuzz/corpus/,
#      crash inputs found included) and fuzzes each target for FUZZ_SECONDS seconds (default 20),
#   6. builds the stress test with ThreadSanitizer (build-tsan/) and runs it for STRESS_SECONDS
#      (default 20).
# The sanitizer builds use -O1 (-O0 for the kernel library, CMakeLists.txt) and compile each
# target's sources in batches (CMake's unity build): they are there to run checks, not to be
# fast. Each step's time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}

# A new build folder is generated for Ninja, whose one queue over all targets keeps both cores busy
# where make's per-target queues leave one waiting; a folder configured before keeps its generator.
configure() {
  local dir=$1
  shift
  local generator=()
  [[ -f $dir/CMakeCache.txt ]] || generator=(-G Ninja)
  cmake -S . -B "$dir" "${generator[@]}" "$@" >/dev/null
}

STEP_NAMES=()
STEP_SECONDS=()
STEP_START=$SECONDS
step() {
  if ((${#STEP_NAMES[@]} > 0)); then STEP_SECONDS+=($((SECONDS - STEP_START))); fi
  STEP_NAMES+=("$1")
  STEP_START=$SECONDS
  echo "== $1"
}

step "packages (scripts/setup.sh)"
bash scripts/setup.sh

step "build (build/)"
configure build -DCMAKE_BUILD_TYPE=Release -DEPCTX_BUILD_BENCH=OFF
cmake --build build -j"$JOBS"

step "test models (build/test_models/)"
/usr/bin/python3 tests/models/export_torchvision.py --out build/test_models
/usr/bin/python3 tests/models/export_transformers.py --out build/test_models

step "tests"
# Tests run side by side (-j), each with as many kernel threads as cores: OpenMP's idle threads
# must not spin while the other test needs the cores (docs/KERNELS.md, "Threads").
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
ctest --no-tests=error --test-dir build --output-on-failure -j"$JOBS" --timeout 900

step "sanitizer build, clang ASan + UBSan (build-fuzz/)"
configure build-fuzz -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEPCTX_FUZZ=ON -DEPCTX_BUILD_BENCH=OFF \
  -DCMAKE_UNITY_BUILD=ON -DEPCTX_FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
cmake --build build-fuzz -j"$JOBS" --target format_tests capi_test \
  blob_fuzzer context_model_fuzzer onnx_import_fuzzer tensor_file_fuzzer compile_fuzzer run_fuzzer

step "blob format tests and the C API test under ASan + UBSan"
ctest --no-tests=error --test-dir build-fuzz --output-on-failure -j"$JOBS" -L format
# Against the sanitized libepctx.so, with the test models the first build exported.
build-fuzz/tests/capi_test build/test_models

step "fuzz targets"
ctest --no-tests=error --test-dir build-fuzz --output-on-failure -j"$JOBS" -L fuzz

step "stress test under ThreadSanitizer (build-tsan/)"
# No precompiled headers here: the unity batches save what they would, and GCC at -O0 with both
# refused Eigen's AVX-512 prefetch (`__builtin_prefetch` "must be a constant").
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1" \
  -DEPCTX_TSAN=ON -DEPCTX_BUILD_TESTS=OFF -DEPCTX_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=ON \
  -DEPCTX_PRECOMPILED_HEADERS=OFF \
  -DEPCTX_STRESS_SECONDS="${STRESS_SECONDS:-20}" >/dev/null
cmake --build build-tsan -j"$JOBS" --target stress_tests
ctest --no-tests=error --test-dir build-tsan --output-on-failure -L tsan

STEP_SECONDS+=($((SECONDS - STEP_START)))
echo "== all passed; seconds per step:"
for i in "${!STEP_NAMES[@]}"; do printf '%6d  %s\n' "${STEP_SECONDS[$i]}" "${STEP_NAMES[$i]}"; done
printf '%6d  total\n' "$SECONDS"
