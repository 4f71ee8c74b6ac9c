#!/usr/bin/env bash
# usage: run_asan.sh SOURCE_DIR WORK_DIR
# The unit and golden tests of every parser that reads outside input (GGUF, model card, chat
# templates, tokenizer, suite import, HTTP server, JSON and text scorers: ctest label `parsers`)
# built with the `asan` preset (ASan + UBSan, CMakePresets.json) in WORK_DIR and run there.
# Registered as the ctest test `asan_parsers`; the full preset run is
#   cmake --preset asan && cmake --build --preset asan && ctest --preset asan
set -euo pipefail
src=$1 work=$2
jobs=${VERDICT_ASAN_JOBS:-$(nproc)}
# The preset's sanitizers, at -O1 with line tables only (-g1): a third of the CPU time of its
# RelWithDebInfo (measured: 10m46s against 34m42s of CPU for the build and run), asserts kept (no
# NDEBUG), reports still name file and line.
cmake --preset asan -S "$src" -B "$work" -DVERDICT_FIXTURES_DIR="${VERDICT_FIXTURES_DIR:-$src/../shared/fixtures}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" >"$work.configure.log" 2>&1 ||
  { cat "$work.configure.log"; exit 1; }
targets=$(cd "$work" && ctest -N -L parsers | sed -n 's/^ *Test *#[0-9]*: //p')
[ -n "$targets" ] || { echo "asan: no test carries the label 'parsers'"; exit 1; }
echo "asan: building $(echo $targets | wc -w) parser test(s) with ASan + UBSan: $(echo $targets)"
# shellcheck disable=SC2086
cmake --build "$work" -j "$jobs" --target $targets >"$work.build.log" 2>&1 || { tail -n 60 "$work.build.log"; exit 1; }
# halt_on_error: the first report fails the test; UBSan aborts (-fno-sanitize-recover in the preset).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$work" && ctest -L parsers --output-on-failure -j "$jobs"
