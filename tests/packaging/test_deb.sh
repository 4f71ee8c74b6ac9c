#!/usr/bin/env bash
# usage: test_deb.sh BUILD_DIR VERSION
set -euo pipefail
build=$1 version=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$build"
cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; exit 1; }
deb=$(ls "$tmp"/out/*.deb | head -n1)
[ -n "$deb" ] || { echo "no .deb produced"; exit 1; }
control=$(dpkg-deb --info "$deb")  # captured first: grep -q closing the pipe early would fail pipefail
grep -q "Package: verdict$" <<<"$control" || { echo "bad control file"; exit 1; }
dpkg -x "$deb" "$tmp/root"
for f in usr/bin/verdict usr/share/applications/verdict.desktop usr/share/icons/hicolor/scalable/apps/verdict.svg; do
  [ -e "$tmp/root/$f" ] || { echo "missing in package: $f"; exit 1; }
done
out=$("$tmp/root/usr/bin/verdict" --version)
echo "$out"
[ "$out" = "verdict $version" ] || { echo "unexpected version output: $out"; exit 1; }
echo "package test passed: $(basename "$deb")"
