#!/usr/bin/env bash
# Starts the real workbench under Xvfb (the xcb platform, as on a desktop) with a fresh demo
# workspace, walks every screen and saves one PNG per screen.
#
#   tests/ui/screenshots.sh [OUT_DIR] [BUILD_DIR]     (defaults: ui-screenshots, build)
#
# The results database is filled first by `verdict demo --quick` (two runs per suite, two
# sweeps), so Suites, Performance, Cost, Decision and History show real data; the Compare
# screen sends a prompt to both demo models and waits for the answers before its picture.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
out="$(realpath -m "${1:-ui-screenshots}")"
build="$(realpath -m "${2:-$here/build}")"
verdict="$build/verdict"
[ -x "$verdict" ] || { echo "screenshots: $verdict not built (cmake --build $build --target verdict)" >&2; exit 2; }
command -v xvfb-run >/dev/null || { echo "screenshots: xvfb-run missing (packaging/install-deps.sh installs xvfb)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export VERDICT_DB="$work/results.db"
export XDG_CONFIG_HOME="$work/config"   # fresh settings: the first start prepares the demo workspace
export XDG_DATA_HOME="$work/data"
mkdir -p "$out" "$XDG_CONFIG_HOME/verdict"
rm -f "$out"/*.png

echo "screenshots: filling the results database with verdict demo --quick"
"$verdict" demo --quick --out "$work/demo" --json >/dev/null
# The demo's hardware assumptions (a small server), so the Cost screen has prices to show.
cp "$work/demo/demo-hardware.json" "$XDG_CONFIG_HOME/verdict/hardware.json"

echo "screenshots: walking the screens under Xvfb"
VERDICT_SCREENSHOTS="$out" QT_QPA_PLATFORM=xcb timeout 300 \
  xvfb-run -a -s "-screen 0 1440x900x24" "$verdict" gui
n=$(ls "$out"/*.png 2>/dev/null | wc -l)
echo "screenshots: $n PNG files in $out"
[ "$n" -eq 7 ]
