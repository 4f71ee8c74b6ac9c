#!/usr/bin/env bash
# The main job: the workbench window when a display is available, otherwise the headless run.
# usage: run-main.sh PATH/TO/verdict
set -euo pipefail
verdict=$1
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$verdict"
fi
echo "No display: running headless."
if "$verdict" --help | grep -q '^  demo '; then
  exec "$verdict" demo
fi
# Until `verdict demo` exists, the headless job inspects the fixture models when they are there.
fixtures=${VERDICT_FIXTURES_DIR:-$(dirname "$0")/../../shared/fixtures}
if [ -d "$fixtures/models" ]; then
  for m in "$fixtures"/models/stories260K.gguf "$fixtures"/models/synth-llama-moe-q8_0.gguf; do
    "$verdict" info --ctx 4096 "$m"; echo
  done
else
  "$verdict" --help
fi
