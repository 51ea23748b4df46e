#!/usr/bin/env bash
# Installs the Debian (bookworm) packages unirecord builds, tests and
# benchmarks with. Idempotent: skips apt entirely when all are present.
# With --check it installs nothing and fails when any is missing: run after an
# install (scripts/test.sh does), it proves that the next run skips apt (a
# name apt resolves to another package would be "missing" forever).
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libjpeg62-turbo-dev libpng-dev
  libcurl4-openssl-dev
  libzstd-dev libxxhash-dev libflatbuffers-dev flatbuffers-compiler
  libcli11-dev nlohmann-json3-dev googletest libgtest-dev libbenchmark-dev libsqlite3-dev libroaring-dev
  python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel pybind11-dev libdlpack-dev
  python3-numpy python3-pil python3-pytest python3-torch python3-torchvision python3-matplotlib
  python3-dask python3-distributed
  libstb-dev libyuv-dev libswscale-dev
  strace
  nginx-light
  libtorch-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-}" = --check ]; then
  if ((${#missing[@]})); then
    echo "install-deps --check: not installed: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps --check: all ${#packages[@]} packages installed; apt is skipped"
  exit 0
fi
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
