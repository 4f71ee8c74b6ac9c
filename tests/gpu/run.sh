#!/usr/bin/env bash
# The one prepared GPU check (issue 10), unattended, < 8 minutes on one GPU:
#   1. configure + build (Release, CUDA for this GPU's architecture only) the binaries it needs;
#   2. the gpu-labelled tests: kernels vs the CPU reference, every op of the backend interface vs the
#      plain reference (test_gpu_backend_ops), the backend vs the CPU backend on the
#      fixture models, llama.cpp's golden logits on the GPU, device discovery;
#   3. the benchmark: the 0.85 B perf model of ../shared/fixtures/README.md in F16, Q8_0 and Q4_0 —
#      prefill 512 (llama-bench pp512) and decode 128 (tg128) at batch 1, then aggregate decode at
#      batch 1, 8 and 32 (bench_batch: 32 sequences stepping together) — with the HBM roofline
#      fraction of batch-1 decode, prefill as a fraction of the GPU's dense F16 tensor throughput,
#      and the VRAM the engine accounted for; suite runs at --parallel 1 / 4 / 16 (GSM8K-shaped
#      generation, MMLU-shaped log-likelihood) and logprobsBatch in groups.
# Prints one markdown report and writes it to $VERDICT_GPU_REPORT when set (default
# build-gpu/gpu-report.md). Knobs: GPU_BENCH_TYPES ("f16 q8_0 q4_0"), GPU_BENCH_REPS (3),
# GPU_PEAK_F16_TFLOPS (dense F16 tensor peak of the GPU; default: 989 for H100/H200, else asked of
# nobody: the column shows "–").
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=build-gpu
REPORT="${VERDICT_GPU_REPORT:-$BUILD/gpu-report.md}"
TYPES="${GPU_BENCH_TYPES:-f16 q8_0 q4_0}"
REPS="${GPU_BENCH_REPS:-3}"
mkdir -p "$BUILD" "$(dirname "$REPORT")"
LOG="$BUILD/gpu-run.log"
: >"$LOG"
start=$(date +%s)
say() { echo "run.sh [$(( $(date +%s) - start ))s]: $*" >&2; }

say "dependencies"
./packaging/install-deps.sh >>"$LOG" 2>&1 || say "install-deps failed (see $LOG); trying with what is installed"
arch=native
say "configure ($arch)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DVERDICT_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" >>"$LOG" 2>&1 || { say "configure failed"; tail -30 "$LOG"; exit 1; }
say "build"
cmake --build "$BUILD" -j "$(nproc)" --target verdict test_gpu_devices test_gpu_kernels test_gpu_backend_ops test_gpu_backend \
    test_golden_logits test_device_option bench_batch bench_gpu_bandwidth >>"$LOG" 2>&1 \
    || { say "build failed"; grep -E "error|FAILED" "$LOG" | head -30; exit 1; }

say "gpu tests"
(cd "$BUILD" && VERDICT_REQUIRE_FIXTURES=1 ctest -L gpu -R "test_gpu|test_device_option" --output-on-failure --timeout 300) \
    >"$BUILD/gpu-ctest.log" 2>&1
tests_rc=$?
# The per-model figures the tests print (max |gpu - cpu| per fixture, batched vs solo).
"$BUILD/tests/gpu/test_gpu_backend" >"$BUILD/gpu-backend.log" 2>&1 || true

say "benchmark models"
MODELS="$BUILD/bench-models"
mkdir -p "$MODELS"
for t in $TYPES; do
    f="$MODELS/perf-llama-$t.gguf"
    [ -s "$f" ] || "$BUILD/verdict" make-model --arch llama --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 \
        --n-ff 5632 --n-vocab 32000 --ctx 2048 --type "$t" --seed 1 "$f" >>"$LOG" 2>&1 || say "make-model $t failed"
done
"$BUILD/tests/gpu/bench_gpu_bandwidth" >"$BUILD/bandwidth.json" 2>>"$LOG" || echo '{}' >"$BUILD/bandwidth.json"
for t in $TYPES; do
    f="$MODELS/perf-llama-$t.gguf"
    say "bench $t"
    timeout 120 "$BUILD/verdict" bench "$f" --device cuda:0 -p 512 -n 128 -r "$REPS" --json \
        >"$BUILD/bench-$t.json" 2>>"$LOG" || echo '[]' >"$BUILD/bench-$t.json"
    VERDICT_CUDA_GRAPHS=0 timeout 60 "$BUILD/verdict" bench "$f" --device cuda:0 -p 0 -n 128 -r "$REPS" --json \
        >"$BUILD/bench-nographs-$t.json" 2>>"$LOG" || echo '[]' >"$BUILD/bench-nographs-$t.json"
    timeout 120 "$BUILD/tests/engine/bench_batch" "$f" --device cuda:0 --batches 1,8,32 --steps 32 --prompt 64 \
        >"$BUILD/batch-$t.json" 2>>"$LOG" || echo '{}' >"$BUILD/batch-$t.json"
done

# Suite runs against --parallel on the GPU (issue 23): GSM8K-shaped generation and MMLU-shaped
# log-likelihood items on the Q4_0 perf model, and logprobsBatch in groups (bench_batch --loglik).
if [ -f "$MODELS/perf-llama-q4_0.gguf" ]; then
    say "suite runs at --parallel 1 / 4 / 16"
    for kind in gsm mmlu; do
        BENCH_KIND=$kind BENCH_DEVICE=cuda:0 BENCH_ITEMS=64 BENCH_MODELS_DIR="$MODELS" VERDICT_BINARY="$BUILD/verdict" \
            timeout 240 tests/bench/suite_parallel.sh >"$BUILD/suite-$kind.json" 2>>"$LOG" || echo '{}' >"$BUILD/suite-$kind.json"
    done
    timeout 120 "$BUILD/tests/engine/bench_batch" "$MODELS/perf-llama-q4_0.gguf" --device cuda:0 --loglik 64 --prompt 256 \
        --batches 1,4,16 >"$BUILD/loglik-q4_0.json" 2>>"$LOG" || echo '{}' >"$BUILD/loglik-q4_0.json"
fi

say "report"
python3 - "$BUILD" "$TYPES" "$tests_rc" "${GPU_PEAK_F16_TFLOPS:-}" >"$REPORT" <<'PY'
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
print("## Tests (ctest -L gpu)")
print()
print("| test | result | time |")
print("|---|---|---|")
for line in open(os.path.join(build, "gpu-ctest.log"), errors="replace"):
    m = re.match(r"\s*\d+/\d+ Test\s+#\d+: (\S+) \.+\s*(\*{0,3}\w[\w ]*?)\s+([\d.]+ sec)", line)
    if m:
        print(f"| {m.group(1)} | {m.group(2).strip()} | {m.group(3)} |")
print()
fig = [l.split("QINFO  : ", 1)[-1].strip() for l in open(os.path.join(build, "gpu-backend.log"), errors="replace")
       if "QINFO" in l and ("max |" in l)]
if fig:
    print("GPU vs CPU backend (test_gpu_backend):")
    print()
    for f in fig:
        print(f"- {f.split(') ', 1)[-1] if ') ' in f else f}")
    print()
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
print(f"Tests exit code: {tests_rc}. Logs: {build}/gpu-ctest.log, {build}/gpu-run.log.")
PY
cat "$REPORT"
say "done"
exit "$tests_rc"
