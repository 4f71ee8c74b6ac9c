#!/usr/bin/env bash
# The main job: the workbench window when a display is available, otherwise the headless demo
# (`verdict demo`: both bundled demo models on the bundled suites, sweeps, the decision report).
# usage: run-main.sh PATH/TO/verdict
set -euo pipefail
verdict=$1
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$verdict"
fi
echo "No display: running the headless demo (verdict demo)."
exec "$verdict" demo
