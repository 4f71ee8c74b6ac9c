#!/usr/bin/env bash
# The one prepared GPU check (issues 10, 18, 19), unattended, within GPU_DEADLINE_S (default 480 s)
# on one GPU:
#   1. the binaries: prebuilt ones from .device/gpu-*.tar* when present (tests/gpu/bundle.sh makes
#      them on a development machine: for a GPU machine without Qt or network, the one this workplace
#      lends), else configure + build (Release, CUDA for this GPU's architecture only) here;
#   2. the gpu tests, side by side, each under a timeout: kernels vs the CPU reference, every op of
#      the backend interface vs the plain reference (test_gpu_backend_ops), the backend vs the CPU
#      backend on the fixture models (with and without CUDA graphs / tensor-core tiles), llama.cpp's
#      golden logits on the GPU, device discovery and --device;
#   3. while time is left: the benchmark — the 0.85 B perf model of ../shared/fixtures/README.md in
#      F16, Q8_0 and Q4_0: prefill 512 (llama-bench pp512) and decode 128 (tg128) at batch 1, with
#      and without CUDA graphs, aggregate decode at batch 1, 8 and 32 (bench_batch) — with the HBM
#      roofline fraction of batch-1 decode, prefill as a fraction of the GPU's dense F16 tensor
#      throughput, and the VRAM the engine accounted for; then suite runs at --parallel 1 / 4 / 16
#      (GSM8K-shaped generation, MMLU-shaped log-likelihood) and logprobsBatch in groups.
# Prints one markdown report (each failure with its message) and writes it to $VERDICT_GPU_REPORT
# (default <build>/gpu-report.md); every log and JSON goes to gpu-logs.tar.gz beside the report.
# Knobs: GPU_DEADLINE_S (480), GPU_TEST_TIMEOUT_S (300), GPU_TESTS (names; default all seven),
# GPU_FIXTURE_PARTS (e.g. "2": only that carried part's fixtures), GPU_SANITIZE (test names to run
# under compute-sanitizer memcheck; exit 99 = errors, listed in their log), GPU_SKIP_BENCH=1, GPU_BENCH_TYPES
# ("f16 q8_0 q4_0"), GPU_BENCH_REPS (3), GPU_PEAK_F16_TFLOPS (dense F16 tensor peak; default 989 for
# H100 / H200). Exit status: 0 when every test passed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
start=$(date +%s)
DEADLINE=$(( start + ${GPU_DEADLINE_S:-480} ))
TEST_CAP=${GPU_TEST_TIMEOUT_S:-300}
TYPES="${GPU_BENCH_TYPES:-f16 q8_0 q4_0}"
REPS="${GPU_BENCH_REPS:-3}"
say() { echo "run.sh [$(( $(date +%s) - start ))s]: $*" >&2; }
left() { echo $(( DEADLINE - $(date +%s) )); }
# within CAP GUARD CMD...: runs CMD under a timeout of min(CAP, time left - GUARD); skips it (status
# 124) when less than 15 s would remain.
within() {
    local cap=$1 guard=$2; shift 2
    local t=$(( $(left) - guard )); [ "$t" -gt "$cap" ] && t=$cap
    if [ "$t" -lt 15 ]; then echo "skipped (deadline): $*" >>"$LOG"; return 124; fi
    timeout -k 5 "$t" "$@"
}

prebuilt=0
archives=".device/gpu-bin.tar.xz .device/gpu-app.tar.xz .device/gpu-fix*.tar"
if [ -n "${GPU_FIXTURE_PARTS:-}" ]; then  # e.g. "2": only that part's fixtures (a later call, same machine)
    rm -rf .device/fixtures
    archives=".device/gpu-bin.tar.xz .device/gpu-app.tar.xz $(for n in $GPU_FIXTURE_PARTS; do printf '.device/gpu-fix%s.tar ' "$n"; done)"
fi
for a in $archives; do
    [ -f "$a" ] || continue
    prebuilt=1
    echo "run.sh: unpacking $a" >&2
    tar -xf "$a" 2>/dev/null || python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall('.')" "$a" \
        || { echo "run.sh: cannot unpack $a" >&2; exit 1; }
done
if [ "$prebuilt" = 1 ]; then
    BUILD=build-device
    [ -f "$BUILD/PREBUILT-gpu-bin" ] || { echo "run.sh: no prebuilt test binaries here: carry .device/gpu-bin.tar.xz too" >&2; exit 1; }
    export VERDICT_FIXTURES_DIR="$PWD/.device/fixtures"
    REQUIRE=0  # a subset of the fixtures travelled: a missing one skips, by name
else
    BUILD=build-gpu
    REQUIRE=1
fi
REPORT="${VERDICT_GPU_REPORT:-$BUILD/gpu-report.md}"
LOGS="$BUILD/gpu-logs"
rm -rf "$LOGS" && mkdir -p "$LOGS" "$(dirname "$REPORT")"
LOG="$LOGS/run.log"
: >"$LOG"

if [ "$prebuilt" = 1 ]; then
    say "prebuilt: $(cat "$BUILD/PREBUILT-gpu-bin"); fixtures: $(cat .device/fixtures/PART* 2>/dev/null | wc -l) models"
    if [ ! -x "$BUILD/verdict" ] && [ "${GPU_SKIP_BENCH:-0}" != 1 ]; then
        say "no verdict binary (.device/gpu-app.tar.xz did not come): no benchmark"
        GPU_SKIP_BENCH=1
    fi
else
    say "dependencies"
    ./packaging/install-deps.sh >>"$LOG" 2>&1 || say "install-deps failed (see $LOG); trying with what is installed"
    say "configure (native)"
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVERDICT_ENABLE_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=native >>"$LOG" 2>&1 || { say "configure failed"; tail -30 "$LOG"; exit 1; }
    say "build"
    cmake --build "$BUILD" -j "$(nproc)" --target verdict test_gpu_devices test_gpu_kernels test_gpu_backend_ops \
        test_gpu_backend test_golden_logits test_device_option bench_batch bench_gpu_bandwidth >>"$LOG" 2>&1 \
        || { say "build failed"; grep -E "error|FAILED" "$LOG" | head -30; exit 1; }
fi

# The machine: GPU, driver, C library, and where cuBLAS is (dlopen'ed by the engine: a CUDA Toolkit's
# lib64, or the nvidia-cublas wheel that PyTorch brings).
{
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
    echo "glibc: $(getconf GNU_LIBC_VERSION 2>&1)"
    echo "kernel: $(uname -r)"
} >"$LOGS/machine.txt"
if ! ldconfig -p 2>/dev/null | grep -q "libcublas.so.13 "; then
    cublas=$(find /usr/local /opt /usr/lib -name 'libcublas.so.13' -print -quit 2>/dev/null)
    if [ -n "$cublas" ]; then
        LD_LIBRARY_PATH="$(dirname "$cublas")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export LD_LIBRARY_PATH
    fi
    echo "cublas: ${cublas:-not found}" >>"$LOGS/machine.txt"
fi
# The driver's libcuda.so.1 (opened by the static CUDA runtime): where ldconfig does not know it, the
# usual mounts (never a CUDA Toolkit's compat/ copy, which must match the kernel module).
if ! ldconfig -p 2>/dev/null | grep -q "libcuda.so.1 "; then
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        if [ -e "$d/libcuda.so.1" ]; then
            LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            export LD_LIBRARY_PATH
            echo "libcuda: $d" >>"$LOGS/machine.txt"
            break
        fi
    done
fi
ldd "$BUILD/verdict" "$BUILD/tests/gpu/test_gpu_backend" 2>&1 | grep "not found" | sort -u | sed 's/^/missing library: /' >>"$LOGS/machine.txt"
cat "$LOGS/machine.txt" >&2

# The perf models are made (CPU work) while the tests run.
MODELS="$BUILD/bench-models"
mkdir -p "$MODELS"
if [ "${GPU_SKIP_BENCH:-0}" != 1 ]; then
    (for t in $TYPES; do
        f="$MODELS/perf-llama-$t.gguf"
        [ -s "$f" ] || "$BUILD/verdict" make-model --arch llama --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 \
            --n-ff 5632 --n-vocab 32000 --ctx 2048 --type "$t" --seed 1 "$f" >>"$LOGS/make-model.log" 2>&1 \
            || echo "make-model $t failed" >>"$LOGS/make-model.log"
    done) &
    makers=$!
fi

# The gpu tests (tests/gpu/CMakeLists.txt registers the same with ctest), side by side.
say "gpu tests"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run_test() {  # NAME BINARY [ENV=VALUE...]
    local name=$1 bin=$2; shift 2
    local t0 wrap=(); t0=$(date +%s)
    # GPU_SANITIZE="test_gpu_kernels ...": those tests under compute-sanitizer's memcheck (out-of-bounds
    # and misaligned accesses by kernel and address; far slower).
    if [[ " ${GPU_SANITIZE:-} " == *" $name "* ]] && [ -n "$sanitizer" ]; then
        wrap=("$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20)
    fi
    within "$TEST_CAP" 0 env QT_QPA_PLATFORM=offscreen VERDICT_REQUIRE_FIXTURES=$REQUIRE "$@" "${wrap[@]}" "$BUILD/$bin" \
        >"$LOGS/$name.log" 2>&1
    echo "$name $? $(( $(date +%s) - t0 ))" >"$LOGS/$name.rc"
}
TESTS="${GPU_TESTS:-test_gpu_devices test_gpu_kernels test_gpu_backend_ops test_gpu_backend test_gpu_backend_plain
test_gpu_golden_logits test_device_option}"
pids=()
for name in $TESTS; do
    case $name in
        test_gpu_backend_plain) run_test "$name" tests/gpu/test_gpu_backend VERDICT_CUDA_GRAPHS=0 VERDICT_CUDA_MMA=0 & ;;
        test_gpu_golden_logits) run_test "$name" tests/engine/test_golden_logits VERDICT_TEST_DEVICE=cuda:0 & ;;
        test_device_option) run_test "$name" tests/engine/test_device_option & ;;
        *) run_test "$name" "tests/gpu/$name" & ;;
    esac
    pids+=($!)
done
wait "${pids[@]}"
tests_rc=0
cat "$LOGS"/*.rc >"$LOGS/tests.txt"
while read -r _ rc _; do [ "$rc" = 0 ] || tests_rc=1; done <"$LOGS/tests.txt"
say "tests done (status $tests_rc)"

if [ "${GPU_SKIP_BENCH:-0}" != 1 ]; then
    say "benchmark (waiting for the models)"
    wait "$makers"
    within 30 5 "$BUILD/tests/gpu/bench_gpu_bandwidth" >"$LOGS/bandwidth.json" 2>>"$LOG" || echo '{}' >"$LOGS/bandwidth.json"
    for t in $TYPES; do
        f="$MODELS/perf-llama-$t.gguf"
        say "bench $t"
        within 120 5 "$BUILD/verdict" bench "$f" --device cuda:0 -p 512 -n 128 -r "$REPS" --json \
            >"$LOGS/bench-$t.json" 2>>"$LOG" || echo '[]' >"$LOGS/bench-$t.json"
        within 120 5 "$BUILD/tests/engine/bench_batch" "$f" --device cuda:0 --batches 1,8,32 --steps 32 --prompt 64 \
            >"$LOGS/batch-$t.json" 2>>"$LOG" || echo '{}' >"$LOGS/batch-$t.json"
    done
    for t in $TYPES; do
        within 60 5 env VERDICT_CUDA_GRAPHS=0 "$BUILD/verdict" bench "$MODELS/perf-llama-$t.gguf" --device cuda:0 -p 0 -n 128 \
            -r "$REPS" --json >"$LOGS/bench-nographs-$t.json" 2>>"$LOG" || echo '[]' >"$LOGS/bench-nographs-$t.json"
    done
    # Suite runs against --parallel on the GPU (issue 23): GSM8K-shaped generation and MMLU-shaped
    # log-likelihood items on the Q4_0 perf model, and logprobsBatch in groups (bench_batch --loglik).
    if [ -f "$MODELS/perf-llama-q4_0.gguf" ]; then
        say "suite runs at --parallel 1 / 4 / 16"
        within 120 5 "$BUILD/tests/engine/bench_batch" "$MODELS/perf-llama-q4_0.gguf" --device cuda:0 --loglik 64 \
            --prompt 256 --batches 1,4,16 >"$LOGS/loglik-q4_0.json" 2>>"$LOG" || echo '{}' >"$LOGS/loglik-q4_0.json"
        for kind in gsm mmlu; do
            within 240 5 env BENCH_KIND=$kind BENCH_DEVICE=cuda:0 BENCH_ITEMS=64 BENCH_MODELS_DIR="$MODELS" \
                VERDICT_BINARY="$BUILD/verdict" tests/bench/suite_parallel.sh >"$LOGS/suite-$kind.json" 2>>"$LOG" || echo '{}' >"$LOGS/suite-$kind.json"
        done
    fi
fi

say "report"
if python3 - "$LOGS" "$TYPES" "$tests_rc" "${GPU_PEAK_F16_TFLOPS:-}" >"$REPORT" <<'PY'
import json, os, re, sys
build, types, tests_rc, peak_arg = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4]

def load(name, default):
    try:
        with open(os.path.join(build, name)) as f:
            return json.load(f)
    except Exception:
        return default

bw = load("bandwidth.json", {})
gpu = bw.get("device", "unknown GPU")
# Dense F16 tensor-core peak (no sparsity): NVIDIA H100/H200 SXM datasheets, 989.4 TFLOPS.
peak = float(peak_arg) if peak_arg else (989.4 if re.search(r"H100|H200", gpu) else None)
N_VOCAB, N_EMBD, N_LAYER, N_HEAD_KV, HEAD_DIM, N_FF = 32000, 2048, 16, 8, 64, 5632
BPW = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
# Matrix multiply-adds per token of the perf model (attention projections, FFN, output head).
MATRIX_PARAMS = N_LAYER * (2 * N_EMBD * N_EMBD + 2 * N_EMBD * N_HEAD_KV * HEAD_DIM + 3 * N_EMBD * N_FF) + N_VOCAB * N_EMBD

print(f"# Verdict GPU check: {gpu}")
print()
print(f"Device copy bandwidth (read + write, best of 10): {bw.get('copy_gbs', '–')} GB/s; "
      f"dense F16 peak used for prefill: {peak if peak else '–'} TFLOPS.")
print()
print("Machine: " + "; ".join(l.strip() for l in open(os.path.join(build, "machine.txt"), errors="replace")))
print()
print("## Tests")
print()
print("| test | result | passed | failed | skipped | seconds |")
print("|---|---|---:|---:|---:|---:|")
failures = []
for line in open(os.path.join(build, "tests.txt"), errors="replace"):
    name, rc, secs = line.split()
    text = open(os.path.join(build, name + ".log"), errors="replace").read()
    tot = re.search(r"Totals: (\d+) passed, (\d+) failed, (\d+) skipped", text)
    result = {"0": "passed", "124": "TIMEOUT", "137": "KILLED (timeout)"}.get(rc, f"FAILED (exit {rc})")
    if rc not in ("0", "1", "124", "137") and int(rc) > 128:
        result = f"CRASHED (signal {int(rc) - 128})"
    p, f, sk = tot.groups() if tot else ("–", "–", "–")
    print(f"| {name} | {result} | {p} | {f} | {sk} | {secs} |")
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("FAIL!"):
            loc = lines[i + 1].strip() if i + 1 < len(lines) and "Loc:" in lines[i + 1] else ""
            failures.append(f"{name}: {l.split(':', 1)[1].strip()} {loc}")
        elif l.startswith("========= ") and ("Invalid" in l or "Misaligned" in l or ("ERROR SUMMARY" in l and " 0 errors" not in l)):
            where = lines[i + 1].strip() if i + 1 < len(lines) and "ERROR SUMMARY" not in l else ""
            failures.append(f"{name} (compute-sanitizer): {l[10:].strip()} {where}")
    if rc != "0" and not any(x.startswith(name + ":") for x in failures):
        failures.append(f"{name}: exit {rc}; last lines: " + " / ".join(lines[-4:]))
print()
if failures:
    print("Failures (first 60):")
    print()
    for x in failures[:60]:
        print(f"- {x}")
    print()
skips, missing = {}, set()
for line in open(os.path.join(build, "tests.txt"), errors="replace"):
    name = line.split()[0]
    for l in open(os.path.join(build, name + ".log"), errors="replace"):
        if l.startswith("SKIP"):
            m = re.search(r"fixture missing: \S*?([^/]+)\.(gguf|json)", l)
            if m:
                missing.add(m.group(1))
                continue
            c = re.match(r"SKIP\s*:\s*(\S+\(.*?\)|\S+)\s+(.*)", l)
            key = (c.group(2) if c else l[6:]).strip()[:200]
            skips.setdefault(key, {}).setdefault(name, 0)
            skips[key][name] += 1
if skips or missing:
    print("Skipped:")
    print()
    for k, v in sorted(skips.items()):
        print(f"- {k} (" + ", ".join(f"{t}: {n}" for t, n in sorted(v.items())) + ")")
    if missing:
        print(f"- the cases of {len(missing)} fixtures that did not come: " + ", ".join(sorted(missing)))
    print()
backend_log = os.path.join(build, "test_gpu_backend.log")
fig = [l.split("QINFO  : ", 1)[-1].strip() for l in (open(backend_log, errors="replace") if os.path.exists(backend_log) else [])
       if "QINFO" in l and ("max |" in l)]
if fig:
    print("GPU vs CPU backend (test_gpu_backend):")
    print()
    for f in fig:
        print(f"- {f.split(') ', 1)[-1] if ') ' in f else f}")
    print()
if not os.path.exists(os.path.join(build, "bandwidth.json")):
    print("Benchmark: not run (GPU_SKIP_BENCH, or verdict did not come).")
    print()
    print(f"Tests exit status: {tests_rc}. Logs: gpu-logs.tar.gz beside this report ({build}).")
    sys.exit(0)
print("## Perf model (0.85 B llama, 2048 x 16 layers, GQA 32/8, n_ff 5632, vocab 32000)")
print()
print("| type | pp512 tok/s | tg128 tok/s | tg128 w/o graphs | decode b1 | b8 (agg) | b32 (agg) | b32 / b1 | b1 decode / HBM roofline | pp512 / F16 peak | VRAM weights | VRAM KV | VRAM scratch+ws | VRAM peak |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def mib(x):
    return "–" if x is None else f"{x / 2**20:.0f} MiB"
for t in types:
    bench = load(f"bench-{t}.json", [])
    batch = load(f"batch-{t}.json", {})
    pp = next((x for x in bench if x.get("test") == "pp512"), {})
    tg = next((x for x in bench if x.get("test") == "tg128"), {})
    tg0 = next((x for x in load(f"bench-nographs-{t}.json", []) if x.get("test") == "tg128"), {})
    runs = {r["batch"]: r for r in batch.get("runs", [])}
    b1, b8, b32 = (runs.get(b, {}).get("decode_tok_s") for b in (1, 8, 32))
    roof = None
    if tg and bw.get("copy_gbs"):
        embd = N_VOCAB * N_EMBD * BPW[t]
        kv = N_LAYER * 2 * N_HEAD_KV * HEAD_DIM * (2 if tg.get("type_k") == "f16" else 4) * (tg["n_gen"] + 1) / 2
        per_token = tg["model_size"] - embd + embd / N_VOCAB + kv
        roof = tg["avg_ts"] * per_token / (bw["copy_gbs"] * 1e9)
    ppf = pp.get("avg_ts") * 2 * MATRIX_PARAMS / (peak * 1e12) if pp and peak else None
    mem = (tg or pp).get("memory", {})
    fmt = lambda v, f="{:.1f}": "–" if v is None else f.format(v)
    print(f"| {t.upper()} | {fmt(pp.get('avg_ts'))} | {fmt(tg.get('avg_ts'))} | {fmt(tg0.get('avg_ts'))} | {fmt(b1)} | {fmt(b8)} | {fmt(b32)} | "
          f"{fmt(b32 / b1 if b1 and b32 else None, '{:.1f}x')} | {fmt(roof, '{:.0%}')} | {fmt(ppf, '{:.0%}')} | "
          f"{mib(mem.get('vram_weights_bytes'))} | {mib(mem.get('vram_kv_bytes'))} | "
          f"{mib((mem.get('vram_scratch_bytes') or 0) + (mem.get('vram_workspace_bytes') or 0)) if mem else '–'} | "
          f"{mib(mem.get('vram_peak_bytes'))} |")
print()
print("Targets (issue 10): b1 decode >= 70 % of the roofline; b32 >= 15x b1; pp512 >= 40 % of the F16 peak.")
print()
print("## Suite runs on the GPU (Q4_0 perf model; tests/bench/suite_parallel.sh, bench_batch --loglik)")
print()
print("| what | --parallel / group | items/s | vs 1 | same results as 1 |")
print("|---|---:|---:|---:|---|")
for kind, label in (("gsm", "GSM8K-shaped, 64 tokens"), ("mmlu", "MMLU-shaped 5-shot loglik")):
    for lv in load(f"suite-{kind}.json", {}).get("levels", []):
        print(f"| {label} | {lv['parallel']} | {lv['items_per_s']} | {lv['ratio_to_first']}x | {lv['same_outputs_as_first']} |")
ll = load("loglik-q4_0.json", {})
if ll.get("session_logprobs"):
    print(f"| logprobsBatch, 256-token prefix | one at a time | {ll['session_logprobs']['items_per_s']} | 1x | – |")
    for g in ll.get("batched", []):
        print(f"| logprobsBatch, 256-token prefix | {g['group']} | {g['items_per_s']} | {g['vs_session_logprobs']}x | {g['same_as_first_group']} |")
print(f"Tests exit status: {tests_rc}. Logs and JSON: gpu-logs.tar.gz beside this report ({build}).")
PY
then :; else
    # The report's script failed: the test summaries and the end of each log instead.
    { echo "# Verdict GPU check (the report script failed; raw summaries)"; cat "$LOGS/machine.txt" "$LOGS/tests.txt"
      for f in "$LOGS"/*.log; do echo "## $f"; grep -E "^(FAIL|Totals)" "$f" | head -40; tail -5 "$f"; done; } >"$REPORT"
fi
tar -czf "$(dirname "$REPORT")/gpu-logs.tar.gz" -C "$BUILD" gpu-logs 2>/dev/null || say "could not pack the logs"
cat "$REPORT"
say "done"
exit "$tests_rc"
