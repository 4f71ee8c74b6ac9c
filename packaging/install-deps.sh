#!/usr/bin/env bash
# Installs everything Verdict needs to build, test and run, from Debian 12 packages only.
# Idempotent: packages already present are skipped, so a second run does nothing.
# The CUDA Toolkit is optional and not installed here: with /usr/local/cuda present the CUDA
# backend compiles (even without a GPU); without it Verdict builds CPU-only.
# Needs only bash and apt (a fresh Debian 12 has no make, git, compiler or sudo): build-essential
# brings make.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev fonts-noto-cjk   # svg: HTML report charts; CJK font for reports and the window
  libqt6opengl6-dev                 # Qt6Charts' CMake config needs Qt6OpenGL; qt6-charts-dev only recommends it
  libxkbcommon-dev                  # not compiled against (the xcb plugin needs only the runtime libraries,
                                    # which libqt6gui6 pulls); it silences configure's misleading "Could NOT find XKB"
  libsqlite3-dev nlohmann-json3-dev zlib1g-dev
  libre2-dev                        # the regex scorer's linear-time matching (no backtracking on model output)
  libcurl4-openssl-dev ca-certificates  # the HTTP client: https verified against the system CA store
  libcpp-httplib-dev libssl-dev     # verdict serve (http/https); tests: the TLS fake OpenAI server, self-signed certificates
  libevent-dev                      # bench_load (the load-generator benchmark): its event-driven fake server (evhttp)
  qtkeychain-qt6-dev                # the window keeps endpoint API keys in the desktop keyring
  clang libclang-rt-14-dev          # libFuzzer target (tests/fuzz)
  dpkg-dev file                     # .deb packaging test
  xvfb xauth poppler-utils          # headless GUI checks and PDF report previews
)
# --train: also what tools/train_demo_models.py needs (CPU PyTorch; OpenBLAS: the reference BLAS is ~10x slower).
if [ "${1:-}" = "--train" ]; then packages+=(python3-torch python3-numpy libopenblas0-pthread); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
