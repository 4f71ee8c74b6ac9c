#!/usr/bin/env bash
# The one prepared GPU check: builds with CUDA, runs the gpu-labelled tests and the device list,
# and writes a markdown table to $VERDICT_GPU_REPORT (default: gpu-report.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
report=${VERDICT_GPU_REPORT:-gpu-report.md}
./packaging/install-deps.sh >/dev/null
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DVERDICT_ENABLE_CUDA=ON >/dev/null
cmake --build build-gpu -j "$(nproc)" 2>&1 | tail -n 3
{
  echo "# Verdict GPU check ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo '```'
  ./build-gpu/verdict devices
  echo '```'
  echo
  echo "| test | result |"
  echo "|---|---|"
  (cd build-gpu && ctest -L gpu --output-on-failure 2>&1) | tee build-gpu/gpu-ctest.log |
    sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [.]* *\([A-Za-z*]*\).*/| \1 | \2 |/p'
} >"$report"
cat "$report"
