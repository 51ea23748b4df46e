#!/usr/bin/env bash
# Installs the Debian (bookworm) packages unirecord builds, tests and
# benchmarks with. Idempotent: skips apt entirely when all are present.
# With --check it installs nothing and fails when any is missing: run after an
# install (scripts/test.sh does), it proves that the next run skips apt (a
# name apt resolves to another package would be "missing" forever).
# Then s3rver, the S3 server of the remote tests, from the npm registry at the
# versions tests/s3rver/package-lock.json pins (npm ci into
# tests/s3rver/node_modules, ignored by git), only when its pinned version is
# not installed there already; --check fails when it is not.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
s3rver_dir="$root/tests/s3rver"
s3rver_version=$(sed -n 's/^ *"s3rver": "\([0-9.]*\)".*/\1/p' "$s3rver_dir/package.json")
s3rver_installed() {
  [ "$(node -p "require('$s3rver_dir/node_modules/s3rver/package.json').version" 2>/dev/null)" = "$s3rver_version" ] &&
    [ -x "$s3rver_dir/node_modules/.bin/s3rver" ]
}
packages=(
  build-essential cmake pkg-config git ninja-build ccache
  libjpeg62-turbo-dev libpng-dev
  libcurl4-openssl-dev libcpp-httplib-dev
  libzstd-dev libxxhash-dev libflatbuffers-dev flatbuffers-compiler
  libcli11-dev nlohmann-json3-dev googletest libgtest-dev libbenchmark-dev libsqlite3-dev libroaring-dev
  python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel pybind11-dev libdlpack-dev
  python3-numpy python3-pil python3-pytest python3-pytest-xdist python3-torch python3-torchvision python3-matplotlib
  python3-dask python3-distributed
  libstb-dev libyuv-dev libswscale-dev
  libavformat-dev libavcodec-dev libavutil-dev libswresample-dev ffmpeg python3-av
  strace
  nginx-light
  chromium chromium-driver python3-selenium
  nodejs
  libtorch-dev
  python3-torchaudio
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Debian's nodejs comes without npm (its own package); NodeSource's nodejs has it.
command -v npm >/dev/null || missing+=(npm)
if [ "${1:-}" = --check ]; then
  if ((${#missing[@]})); then
    echo "install-deps --check: not installed: ${missing[*]}" >&2
    exit 1
  fi
  if ! s3rver_installed; then
    echo "install-deps --check: s3rver $s3rver_version is not installed in $s3rver_dir/node_modules" >&2
    exit 1
  fi
  echo "install-deps --check: all ${#packages[@]} packages and s3rver $s3rver_version installed; apt and npm are skipped"
  exit 0
fi
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! s3rver_installed; then
  echo "install-deps: installing s3rver $s3rver_version into $s3rver_dir/node_modules" >&2
  npm ci --prefix "$s3rver_dir" --ignore-scripts --no-audit --no-fund --loglevel=error
  s3rver_installed || { echo "install-deps: s3rver $s3rver_version still not installed" >&2; exit 1; }
fi
