#!/usr/bin/env bash
# The README's two set-up commands, needing nothing but bash and apt (a fresh Debian 12):
#   ./verdict.sh run    installs dependencies, builds, opens the workbench (headless: the main job)
#   ./verdict.sh test   installs dependencies, builds, runs every test (ends with ctest's summary)
# Both are idempotent. Dependencies come from packaging/install-deps.sh (Debian packages only, sudo
# only when not root), which also brings make; the rest is the Makefile's targets of the same names
# (configure, build, package and clean work too).
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-}" in
  run|test|configure|build|package|clean) ;;
  *) echo "usage: ./verdict.sh run|test   (also: configure, build, package, clean)" >&2; exit 2 ;;
esac
./packaging/install-deps.sh
exec make "$@"
