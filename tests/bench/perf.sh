#!/usr/bin/env bash
# The engine's performance benchmark (issue 3): the 0.85 B "perf" model of
# ../shared/fixtures/README.md in F16, Q8_0 and Q4_0, `verdict bench -p 512 -n 128 -r 3 --threads 2`
# on each, a STREAM-triad bandwidth probe, and a table comparing prefill/decode with llama.cpp's
# figures for exactly these files and with the memory-bandwidth roofline of decoding.
#
# Builds nothing: it needs the `verdict` binary ($VERDICT_BINARY, default ./build/verdict) and the
# `bench_stream` binary ($BENCH_STREAM_BINARY, default <dir of verdict>/tests/engine/bench_stream).
# Models are cached in $BENCH_MODELS_DIR (default build/bench-models) and reused when present.
# Output: a markdown table on stdout, JSON in $BENCH_OUT (default $BENCH_MODELS_DIR/perf.json).
# Knobs: BENCH_TYPES ("f16 q8_0 q4_0"), BENCH_REPS (3), BENCH_THREADS (2), BENCH_STREAM_MIB (512 per array).
# BENCH_DEEPSEEK2=1 also times a DeepSeek-V3-style MoE of similar total size (0.80 B parameters,
# 0.51 B active per token: MLA, 8 experts of which 2 routed + 1 shared, 1 dense layer) in the first
# of BENCH_TYPES and prints its decode speed beside the dense model's.
set -euo pipefail

VERDICT="${VERDICT_BINARY:-./build/verdict}"
STREAM="${BENCH_STREAM_BINARY:-$(dirname "$VERDICT")/tests/engine/bench_stream}"
CACHE="${BENCH_MODELS_DIR:-build/bench-models}"
OUT="${BENCH_OUT:-$CACHE/perf.json}"
TYPES="${BENCH_TYPES:-f16 q8_0 q4_0}"
REPS="${BENCH_REPS:-3}"
THREADS="${BENCH_THREADS:-2}"
STREAM_MIB="${BENCH_STREAM_MIB:-512}"

die() { echo "perf.sh: $*" >&2; exit 1; }
[ -x "$VERDICT" ] || die "no verdict binary at $VERDICT (build it, or set VERDICT_BINARY)"
[ -x "$STREAM" ] || die "no bench_stream binary at $STREAM (cmake --build ... --target bench_stream, or set BENCH_STREAM_BINARY)"
command -v python3 >/dev/null || die "python3 is needed to assemble the table"
mkdir -p "$CACHE"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "perf.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) (numbers are only comparable on a quiet machine)" >&2

# 1. Models (the shape of the fixtures README's perf model; random weights do not affect speed).
for t in $TYPES; do
    f="$CACHE/perf-llama-$t.gguf"
    if [ ! -s "$f" ]; then
        echo "perf.sh: making $f" >&2
        "$VERDICT" make-model --arch llama --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 --n-ff 5632 \
            --n-vocab 32000 --ctx 2048 --type "$t" --seed 1 "$f.tmp" >/dev/null 2>"$WORK/make-model.log" \
            || { cat "$WORK/make-model.log" >&2; die "make-model failed for $t"; }
        mv "$f.tmp" "$f"
    fi
done

# 2. Memory bandwidth first (the machine is otherwise idle then).
echo "perf.sh: STREAM triad, $THREADS threads, 3 x $STREAM_MIB MiB" >&2
"$STREAM" --threads "$THREADS" --mib "$STREAM_MIB" --reps 10 > "$WORK/stream.json"

# 3. llama-bench's pp512 / tg128 on each file.
for t in $TYPES; do
    echo "perf.sh: bench $t" >&2
    "$VERDICT" bench "$CACHE/perf-llama-$t.gguf" -p 512 -n 128 -r "$REPS" --threads "$THREADS" --json \
        > "$WORK/bench-$t.json"
done

# 4. Table + JSON.
python3 - "$WORK" "$CACHE" "$OUT" "$TYPES" <<'PY'
import json, os, sys
work, cache, out, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()

# llama.cpp's figures for exactly these files on this machine type (2-vCPU AMD EPYC Zen 5 VM,
# llama-bench -p 512 -n 128 -t 2 -r 3): ../shared/fixtures/README.md, "Performance anchor".
LLAMACPP = {  # type: (pp512 low, high, tg128 low, high)
    "q4_0": (186, 196, 62, 65),
    "q8_0": (121, 126, 31.5, 32.2),
    "f16": (150, 151, 20.5, 21.1),
}
# Bytes per weight of each type (ggml block sizes: Q8_0 34 B / 32, Q4_0 18 B / 32).
BYTES_PER_WEIGHT = {"f16": 2.0, "bf16": 2.0, "f32": 4.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
N_VOCAB, N_EMBD, N_LAYER, N_HEAD_KV, HEAD_DIM = 32000, 2048, 16, 8, 64

stream = json.load(open(os.path.join(work, "stream.json")))
bw = stream["best_gbs"] * 1e9
rows, raw = [], {}
for t in types:
    bench = json.load(open(os.path.join(work, f"bench-{t}.json")))
    raw[t] = bench
    pp = next(x for x in bench if x["test"] == "pp512")
    tg = next(x for x in bench if x["test"] == "tg128")
    path = os.path.join(cache, f"perf-llama-{t}.gguf")
    # Bytes read per decoded token: every weight except the embedding table (one row of it is read),
    # plus the K and V cache read by attention, at the average context of tg128 (f16 KV as bench).
    embd = N_VOCAB * N_EMBD * BYTES_PER_WEIGHT.get(t, 2.0)
    kv_per_pos = N_LAYER * 2 * N_HEAD_KV * HEAD_DIM * (2 if tg["type_k"] == "f16" else 4)
    avg_ctx = (tg["n_gen"] + 1) / 2
    per_token = pp["model_size"] - embd + embd / N_VOCAB + kv_per_pos * avg_ctx
    roofline = bw / per_token
    ref = LLAMACPP.get(t)
    ref_pp = (ref[0] + ref[1]) / 2 if ref else None
    ref_tg = (ref[2] + ref[3]) / 2 if ref else None
    rows.append({
        "type": t.upper(),
        "file": path,
        "file_bytes": os.path.getsize(path),
        "model_size": pp["model_size"],
        "prefill_tps": pp["avg_ts"], "prefill_sd": pp["stddev_ts"],
        "decode_tps": tg["avg_ts"], "decode_sd": tg["stddev_ts"],
        "llamacpp_prefill_tps": ref_pp, "llamacpp_prefill_range": [ref[0], ref[1]] if ref else None,
        "llamacpp_decode_tps": ref_tg, "llamacpp_decode_range": [ref[2], ref[3]] if ref else None,
        "prefill_ratio": pp["avg_ts"] / ref_pp if ref else None,
        "decode_ratio": tg["avg_ts"] / ref_tg if ref else None,
        "bytes_per_token": per_token,
        "roofline_tps": roofline,
        "decode_roofline_fraction": tg["avg_ts"] / roofline,
        "llamacpp_roofline_fraction": ref_tg / roofline if ref else None,
    })

first = raw[types[0]][0]
result = {
    "machine": {k: first.get(k) for k in ("cpu_info", "cpu_physical_cores", "cpu_logical_cores", "simd")},
    "build_commit": first.get("build_commit"), "engine_version": first.get("engine_version"),
    "n_threads": first.get("n_threads"), "load_average": open("/proc/loadavg").read().split()[:3],
    "stream": stream, "rows": rows, "bench": raw,
}
with open(out, "w") as f:
    json.dump(result, f, indent=2)

def num(x, fmt="{:.1f}"):
    return "–" if x is None else fmt.format(x)

print(f"machine: {result['machine']['cpu_info']}, {result['n_threads']} threads, SIMD {result['machine']['simd']}; "
      f"STREAM triad best {stream['best_gbs']:.1f} GB/s (mean {stream['mean_gbs']:.1f}); build {result['build_commit']}")
print()
print("| type | file size | prefill tok/s (pp512) | llama.cpp pp512 | ratio | decode tok/s (tg128) | llama.cpp tg128 | ratio | roofline tok/s | decode / roofline | llama.cpp / roofline |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    size = r["file_bytes"] / 2**20
    size = f"{size:.1f} MiB" if size < 1024 else f"{size / 1024:.2f} GiB"
    lp = r["llamacpp_prefill_range"]; lt = r["llamacpp_decode_range"]
    print(f"| {r['type']} | {size} | {r['prefill_tps']:.1f} ± {r['prefill_sd']:.1f} | "
          f"{'–' if not lp else f'{lp[0]:g}–{lp[1]:g}'} | {num(r['prefill_ratio'], '{:.2f}')} | "
          f"{r['decode_tps']:.1f} ± {r['decode_sd']:.1f} | {'–' if not lt else f'{lt[0]:g}–{lt[1]:g}'} | "
          f"{num(r['decode_ratio'], '{:.2f}')} | {r['roofline_tps']:.1f} | {r['decode_roofline_fraction']:.0%} | "
          f"{'–' if r['llamacpp_roofline_fraction'] is None else format(r['llamacpp_roofline_fraction'], '.0%')} |")
print()
print(f"JSON: {out}")
PY

# 5. Optional: the DeepSeek-V3-style MoE beside the dense model (same width, layers and vocabulary).
if [ "${BENCH_DEEPSEEK2:-0}" = "1" ]; then
    t="${TYPES%% *}"
    f="$CACHE/perf-deepseek2-$t.gguf"
    if [ ! -s "$f" ]; then
        echo "perf.sh: making $f" >&2
        "$VERDICT" make-model --arch deepseek2 --n-embd 2048 --n-layer 16 --n-head 16 --n-ff 5632 \
            --q-lora-rank 1024 --kv-lora-rank 512 --n-expert 8 --n-expert-used 2 --n-expert-shared 1 \
            --n-ff-exp 512 --n-dense-lead 1 --n-vocab 32000 --ctx 2048 --type "$t" --seed 1 "$f.tmp" \
            >/dev/null 2>"$WORK/make-model.log" || { cat "$WORK/make-model.log" >&2; die "make-model failed (deepseek2)"; }
        mv "$f.tmp" "$f"
    fi
    echo "perf.sh: bench deepseek2 $t" >&2
    "$VERDICT" bench "$f" -p 512 -n 128 -r "$REPS" --threads "$THREADS" --json > "$WORK/bench-deepseek2.json"
    "$VERDICT" info "$f" --json > "$WORK/info-deepseek2.json"
    "$VERDICT" info "$CACHE/perf-llama-$t.gguf" --json > "$WORK/info-llama.json"
    python3 - "$WORK" "$t" <<'PY'
import json, os, sys
work, t = sys.argv[1], sys.argv[2]
print()
print("| model | params | active / token | KV bytes / token (f16) | prefill tok/s (pp512) | decode tok/s (tg128) |")
print("|---|---:|---:|---:|---:|---:|")
for name, bench, info in (("dense llama", f"bench-{t}.json", "info-llama.json"),
                          ("deepseek2 MoE + MLA", "bench-deepseek2.json", "info-deepseek2.json")):
    b = json.load(open(os.path.join(work, bench)))
    i = json.load(open(os.path.join(work, info)))
    pp = next(x for x in b if x["test"] == "pp512")
    tg = next(x for x in b if x["test"] == "tg128")
    print(f"| {name} {t.upper()} | {i['n_params'] / 1e9:.2f} B | {i['n_params_active'] / 1e9:.2f} B | "
          f"{i['memory']['kv_bytes_per_token']} | {pp['avg_ts']:.1f} ± {pp['stddev_ts']:.1f} | "
          f"{tg['avg_ts']:.1f} ± {tg['stddev_ts']:.1f} |")
PY
fi
