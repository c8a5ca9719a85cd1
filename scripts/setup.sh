#!/usr/bin/env bash
# Installs the Debian packages that building, testing and the demo need.
# Runs apt-get only when something is missing, so repeated runs are quick.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-format
  clang libfuzzer-14-dev libomp-dev  # the fuzz targets (build-fuzz/, clang)
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libeigen3-dev liburing-dev libspdlog-dev libfmt-dev libdnnl-dev
  libflatbuffers-dev flatbuffers-compiler libcli11-dev nlohmann-json3-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-onnx python3-torch python3-torchvision
  python3-dev pybind11-dev python3-pybind11 python3-pytest  # the Python module and its tests
  python3-matplotlib  # bench/run.sh's plots
  nodejs  # ONNX Runtime (onnxruntime-node) for tests/real_models and bench/
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

# npm: Debian's nodejs comes without it, NodeSource's brings its own (and conflicts with Debian's).
if ! command -v npm >/dev/null; then missing+=(npm); fi

if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} missing package(s): ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi
