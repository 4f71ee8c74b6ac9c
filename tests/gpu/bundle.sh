#!/usr/bin/env bash
# Prepares tests/gpu/run.sh for a GPU machine that cannot build Verdict itself — the one this
# workplace lends (tool `device`): it has CUDA's driver, cuBLAS, python3 and cmake, but no Qt, no
# SQLite, no network, and each call carries at most 64 MiB (the tracked tree, ~22 MB, included),
# without ../shared. Run here, on the development machine (tests/gpu/README.md: the calls to make):
#
#   tests/gpu/bundle.sh     # build-device/ (Release, CUDA for sm_90: H100 / H200), then under .device/:
#     gpu-bin.tar.xz        the test binaries, bench_batch, bench_gpu_bandwidth (stripped) and every
#                           shared library they load but glibc / libstdc++ (found through their
#                           DT_RPATH, $ORIGIN/lib): Qt Core + Test, ICU, ...
#     gpu-app.tar.xz        `verdict` (run.sh's benchmark: make-model, bench, run) and the libraries it
#                           adds (Qt Gui / Widgets / Charts, SQLite, curl, ...)
#     gpu-fix1.tar, ...     fixture models + their references, each part as large as fits beside
#                           gpu-bin or gpu-app (the larger) in GPU_BUNDLE_MB (default 42 MB), in
#                           FIXTURE_ORDER: the tests' own files, each architecture, each weight type
#
# On the GPU machine `tests/gpu/run.sh` unpacks the .device/gpu-*.tar* that came, runs the prebuilt
# binaries on the fixtures that came (a missing one skips, by name), and the benchmark when verdict
# came too.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${GPU_BUNDLE_BUILD:-build-device}
ARCHS=${GPU_BUNDLE_ARCHS:-90-real}
BUDGET=$(( ${GPU_BUNDLE_MB:-42} * 1000 * 1000 ))
FIX=${VERDICT_FIXTURES_DIR:-../shared/fixtures}
say() { echo "bundle.sh: $*" >&2; }

# Fixtures in the order they are worth carrying ("models/X" = models/X.gguf + reference/X.json;
# "v0.5.0/X" likewise under v0.5.0/): first the files test_gpu_backend's own cases name, then one
# file per architecture (the device-only code: attention, MoE routing, MLA, sinks, graphs), then the
# weight types (their block decoding is host code too, checked bit-exact on the host), then the rest.
FIXTURE_ORDER="
models/stories260K models/synth-llama-q4_0 v0.5.0/synth-llama-iq2_xxs
v0.5.0/synth-gpt-oss-mxfp4 v0.5.0/synth-glm4moe-f16 v0.5.0/synth-qwen3moe-q8_0 v0.5.0/synth-gemma3-q8_0
v0.5.0/synth-qwen3-q8_0 models/synth-deepseek2lite-f16 models/synth-deepseek2-q4_k v0.5.0/synth-llama3-q4_k_m
v0.5.0/synth-qwen3-q4_k_m models/synth-llama-q8_0 v0.5.0/synth-llama-iq4_xs v0.5.0/synth-llama-mxfp4
models/synth-phi3-f16 models/synth-qwen2-f16 models/synth-gemma2-f16 models/synth-llama-moe-q8_0
models/synth-llama-q4_k models/synth-llama-q6_k v0.5.0/synth-llama-tq1_0 v0.5.0/synth-llama-iq1_s
v0.5.0/synth-llama-iq3_s v0.5.0/synth-llama-tq2_0 v0.5.0/synth-llama-iq1_m v0.5.0/synth-llama-iq2_xs
v0.5.0/synth-llama-iq2_s v0.5.0/synth-llama-iq3_xxs v0.5.0/synth-llama-iq4_nl models/synth-llama-q2_k
models/synth-llama-q3_k models/synth-llama-q4_1 models/synth-llama-q5_0 models/synth-llama-q5_1
models/synth-llama-q5_k v0.5.0/synth-llama-q4_k_m v0.5.0/synth-llama-q5_k_m models/llama-2-tiny-random
models/synth-llama-f16 models/synth-llama-bf16 v0.5.0/synth-qwen3moe-f16 v0.5.0/synth-gemma3-f16
v0.5.0/synth-gpt-oss-f16 v0.5.0/synth-llama3-f16 v0.5.0/synth-qwen3-f16 models/synth-deepseek2-q8_0
models/synth-llama-f32 models/synth-deepseek2-f16 models/synth-llama-moe-f16
"
TARGETS="verdict test_gpu_devices test_gpu_kernels test_gpu_backend_ops test_gpu_backend test_golden_logits
test_device_option bench_batch bench_gpu_bandwidth"
TESTS="tests/gpu/test_gpu_devices tests/gpu/test_gpu_kernels tests/gpu/test_gpu_backend_ops
tests/gpu/test_gpu_backend tests/engine/test_golden_logits tests/engine/test_device_option
tests/engine/bench_batch tests/gpu/bench_gpu_bandwidth"

[ -d "$FIX" ] || { say "no fixtures at $FIX (set VERDICT_FIXTURES_DIR)"; exit 1; }
files_of() {  # the fixture's files, relative to the fixtures folder
    local batch=${1%%/*} name=${1#*/}
    if [ "$batch" = models ]; then echo "models/$name.gguf reference/$name.json"
    else echo "$batch/models/$name.gguf $batch/reference/$name.json"; fi
}
size_of() { local s=0 f; for f in $(files_of "$1"); do s=$(( s + $(stat -c %s "$FIX/$f") )); done; echo "$s"; }

if ! grep -q "^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=$ARCHS\$" "$BUILD/CMakeCache.txt" 2>/dev/null; then
    say "configure $BUILD (CUDA $ARCHS)"
    # DT_RPATH (not RUNPATH): the libraries' own dependencies are found beside them too.
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVERDICT_ENABLE_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" '-DCMAKE_BUILD_RPATH=$ORIGIN/lib;$ORIGIN/../lib;$ORIGIN/../../lib' \
        -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >/dev/null
fi
say "build $BUILD"
# shellcheck disable=SC2086
cmake --build "$BUILD" -j "$(nproc)" --target $TARGETS
[ -x "$BUILD/tests/gpu/test_gpu_kernels" ] || { say "$BUILD has no CUDA backend (is nvcc installed?)"; exit 1; }

mkdir -p .device
rm -rf .device/stage .device/gpu-*
stage=.device/stage
# pack NAME BINARIES...: the binaries and the libraries they load that an earlier pack did not take.
pack() {
    local name=$1 b; shift
    rm -rf "$stage" && mkdir -p "$stage/$BUILD/lib"
    for b in "$@"; do
        mkdir -p "$stage/$BUILD/$(dirname "$b")"
        strip -o "$stage/$BUILD/$b" "$BUILD/$b"
    done
    # Not glibc, libstdc++ or libgcc (the GPU machine's are newer), nor the CUDA driver (cudart is
    # static and opens the machine's libcuda; cuBLAS is dlopen'ed there too).
    for b in "$@"; do ldd "$BUILD/$b"; done | awk '$3 ~ /^\// {print $1, $3}' | sort -u |
        while read -r soname path; do
            case "$soname" in
                libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|libstdc++.so.*|\
                libgcc_s.so.*|ld-linux*|libcuda.so.*) continue ;;
            esac
            grep -qxF "$soname" .device/packed-libs 2>/dev/null && continue
            cp -L "$path" "$stage/$BUILD/lib/$soname"
            echo "$soname" >>.device/packed-libs
        done
    echo "built $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes'), CUDA $ARCHS" \
        >"$stage/$BUILD/PREBUILT-$name"
    tar -C "$stage" -cf - . | xz -9 -T"$(nproc)" -c >".device/$name.tar.xz"
    rm -rf "$stage"
}
say "pack gpu-bin.tar.xz, gpu-app.tar.xz"
rm -f .device/packed-libs
# shellcheck disable=SC2086
pack gpu-bin $TESTS
pack gpu-app verdict
rm -f .device/packed-libs
bin=$(stat -c %s .device/gpu-bin.tar.xz)
app=$(stat -c %s .device/gpu-app.tar.xz)

# The fixtures, in parts that each fit beside gpu-bin or gpu-app, the larger (models do not
# compress: plain tars).
beside=$(( bin > app ? bin : app ))
part=0 left=$FIXTURE_ORDER
while [ -n "$(echo $left)" ]; do
    part=$(( part + 1 ))
    rm -rf "$stage" && mkdir -p "$stage/.device/fixtures"
    used=$beside rest="" taken=()
    for fx in $left; do
        s=$(size_of "$fx")
        if [ $(( used + s )) -gt "$BUDGET" ]; then rest="$rest $fx"; continue; fi
        for f in $(files_of "$fx"); do
            mkdir -p "$stage/.device/fixtures/$(dirname "$f")"
            cp "$FIX/$f" "$stage/.device/fixtures/$f"
        done
        used=$(( used + s )); taken+=("$fx")
    done
    [ ${#taken[@]} -gt 0 ] || { say "$rest: larger than a part"; exit 1; }
    printf '%s\n' "${taken[@]}" >"$stage/.device/fixtures/PART$part"
    tar -C "$stage" -cf ".device/gpu-fix$part.tar" .
    say "gpu-fix$part.tar: $(( $(stat -c %s ".device/gpu-fix$part.tar") / 1000000 )) MB, ${taken[*]}"
    left=$rest
done
rm -rf "$stage"
tracked=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
say "gpu-bin.tar.xz $(( bin / 1000000 )) MB, gpu-app.tar.xz $(( app / 1000000 )) MB, $part fixture parts;" \
    "the tracked tree $(( tracked / 1000000 )) MB; a call carries at most $(( 64 * 1048576 / 1000000 )) MB in all"
[ $(( BUDGET + tracked )) -le $(( 64 * 1048576 )) ] || say "warning: a part beside gpu-app and the tree exceed 64 MiB: lower GPU_BUNDLE_MB"
