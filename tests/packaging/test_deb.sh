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
# Every shared library the binary needs must come from a package the control file depends on,
# directly or through those packages' own dependencies (libc6, libstdc++6 and libgcc-s1 are on every
# Debian system): a library linked without a Depends entry makes a .deb that installs and then
# fails to start.
# The closure of Depends (a Qt library that libqt6widgets6 pulls in counts as depended on).
depends=$(sed -n 's/^ Depends: //p' <<<"$control" | tr ',' '\n' | sed 's/^ *//; s/ .*//')
# shellcheck disable=SC2086
depends=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
            --no-replaces --no-enhances $depends 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u)
missing=""
cache=$(ldconfig -p)  # captured first: awk leaving early would fail pipefail
for lib in $(objdump -p "$tmp/root/usr/bin/verdict" | awk '$1 == "NEEDED" {print $2}'); do
  path=$(awk -v l="$lib" '$1 == l {print $NF; exit}' <<<"$cache")
  [ -n "$path" ] || { missing+=" $lib(not found)"; continue; }
  real=$(readlink -f "$path")
  # by file name: with merged /usr dpkg knows /lib/... where ldconfig says /usr/lib/... (or back)
  pkg=$(dpkg -S "*${real#/usr}" 2>/dev/null | head -n1 | cut -d: -f1) || true
  case $pkg in libc6|libstdc++6|libgcc-s1) continue ;; esac
  grep -qx "$pkg" <<<"$depends" || missing+=" $lib($pkg)"
done
[ -z "$missing" ] || { echo "libraries the binary needs but the package does not depend on:$missing"; exit 1; }
out=$("$tmp/root/usr/bin/verdict" --version)
echo "$out"
[ "$out" = "verdict $version" ] || { echo "unexpected version output: $out"; exit 1; }
echo "package test passed: $(basename "$deb")"
