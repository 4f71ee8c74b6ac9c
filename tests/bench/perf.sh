#!/usr/bin/env bash
# The engine's performance benchmark (issues 3 and 25): the 0.85 B "perf" model of
# ../shared/fixtures/README.md in F16, Q8_0 and Q4_0 (or any type make-model accepts),
# `verdict bench -p 512 -n 128 -r 3 --threads 2` on each, a STREAM-triad bandwidth probe, a
# compute-peak probe (bench_peak), and tables comparing prefill/decode with llama.cpp's figures for
# exactly these files, decoding with the memory-bandwidth roofline, and prefill's achieved GOP/s
# with the peak of the instruction its kernel uses on this CPU.
#
# Builds nothing: it needs the `verdict` binary ($VERDICT_BINARY, default ./build/verdict), the
# `bench_stream` binary ($BENCH_STREAM_BINARY, default <dir of verdict>/tests/engine/bench_stream)
# and the `bench_peak` binary ($BENCH_PEAK_BINARY, default beside bench_stream).
# Models are cached in $BENCH_MODELS_DIR (default build/bench-models) and reused when present.
# Output: markdown tables on stdout, JSON in $BENCH_OUT (default $BENCH_MODELS_DIR/perf.json).
# Knobs: BENCH_TYPES ("f16 q8_0 q4_0"; each made once as perf-llama-<type>.gguf, by make-model or,
# for the types it cannot write and "llama-<mix>", by llama.cpp's tools: see make_with_llama), BENCH_PP ("512";
# prompt sizes, e.g. "64 512 2048"), BENCH_REPS (3), BENCH_THREADS (2), BENCH_STREAM_MIB (512 per array).
# LLAMA_BENCH=/path/to/llama-bench runs llama.cpp's llama-bench on the same files in the same run,
# alternating with verdict (round r: verdict bench -r 1 then llama-bench -r 1, for each type;
# BENCH_REPS rounds), and the tables set the medians side by side (otherwise llama.cpp's columns
# are the fixtures README's anchor figures, measured elsewhere).
# BENCH_DEEPSEEK2=1 also times a DeepSeek-V3-style MoE of similar total size (0.80 B parameters,
# 0.51 B active per token: MLA, 8 experts of which 2 routed + 1 shared, 1 dense layer) in the first
# of BENCH_TYPES and prints its decode speed beside the dense model's.
set -euo pipefail

VERDICT="${VERDICT_BINARY:-./build/verdict}"
STREAM="${BENCH_STREAM_BINARY:-$(dirname "$VERDICT")/tests/engine/bench_stream}"
CACHE="${BENCH_MODELS_DIR:-build/bench-models}"
OUT="${BENCH_OUT:-$CACHE/perf.json}"
TYPES="${BENCH_TYPES:-f16 q8_0 q4_0}"
PP="${BENCH_PP:-512}"
REPS="${BENCH_REPS:-3}"
THREADS="${BENCH_THREADS:-2}"
STREAM_MIB="${BENCH_STREAM_MIB:-512}"
PEAK="${BENCH_PEAK_BINARY:-$(dirname "$STREAM")/bench_peak}"

die() { echo "perf.sh: $*" >&2; exit 1; }
[ -x "$VERDICT" ] || die "no verdict binary at $VERDICT (build it, or set VERDICT_BINARY)"
[ -x "$STREAM" ] || die "no bench_stream binary at $STREAM (cmake --build ... --target bench_stream, or set BENCH_STREAM_BINARY)"
[ -x "$PEAK" ] || die "no bench_peak binary at $PEAK (cmake --build ... --target bench_peak, or set BENCH_PEAK_BINARY)"
# BENCH_PP: positive prompt sizes, space separated; verdict bench takes them comma separated.
read -r -a PP_SIZES <<< "$PP"
[ "${#PP_SIZES[@]}" -gt 0 ] || die "BENCH_PP is empty"
for n in "${PP_SIZES[@]}"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "BENCH_PP: '$n' is not a positive number of tokens"
done
PP_LIST="$(IFS=,; echo "${PP_SIZES[*]}")"
command -v python3 >/dev/null || die "python3 is needed to assemble the table"
mkdir -p "$CACHE"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "perf.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) (numbers are only comparable on a quiet machine)" >&2

# 1. Models (the shape of the fixtures README's perf model; random weights do not affect speed).
make_model() {  # type, file
    echo "perf.sh: making $2" >&2
    "$VERDICT" make-model --arch llama --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 --n-ff 5632 \
        --n-vocab 32000 --ctx 2048 --type "$1" --seed 1 "$2.tmp" >/dev/null 2>"$WORK/make-model.log" \
        || { cat "$WORK/make-model.log" >&2; die "make-model failed for $1"; }
    mv "$2.tmp" "$2"
}
# Types make-model cannot write (the lattice i-quants, llama.cpp's other mixes) and "llama-<type>"
# (llama.cpp's mix of that name, e.g. llama-q2_k, where make-model would write a pure file) come
# from llama.cpp's llama-quantize ($LLAMA_QUANTIZE) of the F16 perf model, with an importance
# matrix that llama-imatrix ($LLAMA_IMATRIX) computes once from this repository's docs (the
# i-quants refuse to quantize without one).
make_with_llama() {  # type, file
    local q="${1#llama-}" f16="$CACHE/perf-llama-f16.gguf" imat="$CACHE/perf-llama.imatrix.gguf"
    [ -n "${LLAMA_QUANTIZE:-}" ] && [ -x "$LLAMA_QUANTIZE" ] \
        || die "type $1 comes from llama.cpp's llama-quantize: set LLAMA_QUANTIZE (tests/bench/README.md)"
    [ -s "$f16" ] || make_model f16 "$f16"
    if [ ! -s "$imat" ]; then
        [ -n "${LLAMA_IMATRIX:-}" ] && [ -x "$LLAMA_IMATRIX" ] || die "type $1 needs an importance matrix: set LLAMA_IMATRIX"
        echo "perf.sh: making $imat (llama-imatrix, 8 chunks of 512 tokens of docs/)" >&2
        cat docs/*.md README.md > "$WORK/imatrix.txt"
        "$LLAMA_IMATRIX" -m "$f16" -f "$WORK/imatrix.txt" -o "$imat.tmp" -c 512 --chunks 8 -t "$THREADS" \
            >"$WORK/imatrix.log" 2>&1 || { tail -20 "$WORK/imatrix.log" >&2; die "llama-imatrix failed"; }
        mv "$imat.tmp" "$imat"
    fi
    echo "perf.sh: making $2 (llama-quantize ${q^^})" >&2
    "$LLAMA_QUANTIZE" --imatrix "$imat" "$f16" "$2.tmp" "${q^^}" "$THREADS" >"$WORK/quantize.log" 2>&1 \
        || { tail -20 "$WORK/quantize.log" >&2; die "llama-quantize failed for $1"; }
    mv "$2.tmp" "$2"
}
for t in $TYPES; do
    f="$CACHE/perf-llama-$t.gguf"
    [ -s "$f" ] && continue
    case "$t" in
        llama-* | iq1_* | iq2_* | iq3_* | q2_k_s | q3_k_[sml] | tq1_0 | tq2_0) make_with_llama "$t" "$f" ;;
        *) make_model "$t" "$f" ;;
    esac
done

# 2. Memory bandwidth first (the machine is otherwise idle then).
echo "perf.sh: STREAM triad, $THREADS threads, 3 x $STREAM_MIB MiB" >&2
"$STREAM" --threads "$THREADS" --mib "$STREAM_MIB" --reps 10 > "$WORK/stream.json"

# 2b. The compute peak of the prefill kernels' instructions (1 and $THREADS threads, ~20 s).
echo "perf.sh: compute peak (bench_peak), 1 and $THREADS threads" >&2
"$PEAK" --threads "$THREADS" --json > "$WORK/peak.json"

# 3. llama-bench's pp<N> (each of BENCH_PP) / tg128 on each file, and the model card; with
# LLAMA_BENCH, verdict and llama.cpp's llama-bench in turn, one repetition each per round.
for t in $TYPES; do
    "$VERDICT" info "$CACHE/perf-llama-$t.gguf" --json > "$WORK/info-$t.json"
done
if [ -n "${LLAMA_BENCH:-}" ]; then
    [ -x "$LLAMA_BENCH" ] || die "LLAMA_BENCH=$LLAMA_BENCH is not an executable"
    for round in $(seq 1 "$REPS"); do
        for t in $TYPES; do
            f="$CACHE/perf-llama-$t.gguf"
            echo "perf.sh: round $round/$REPS: $t (pp $PP_LIST, tg128), verdict then llama-bench" >&2
            "$VERDICT" bench "$f" -p "$PP_LIST" -n 128 -r 1 --threads "$THREADS" --json > "$WORK/bench-$t-r$round.json"
            "$LLAMA_BENCH" -m "$f" -p "$PP_LIST" -n 128 -r 1 -t "$THREADS" -o json > "$WORK/llama-$t-r$round.json" \
                2>"$WORK/llama-bench.log" || { tail -5 "$WORK/llama-bench.log" >&2; die "llama-bench failed on $f"; }
        done
    done
else
    for t in $TYPES; do
        echo "perf.sh: bench $t (pp $PP_LIST, tg128)" >&2
        "$VERDICT" bench "$CACHE/perf-llama-$t.gguf" -p "$PP_LIST" -n 128 -r "$REPS" --threads "$THREADS" --json \
            > "$WORK/bench-$t.json"
    done
fi

# 4. Tables + JSON.
python3 - "$WORK" "$CACHE" "$OUT" "$TYPES" "$PP_LIST" <<'PY'
import glob, json, os, statistics, struct, sys
work, cache, out, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
pp_sizes = [int(n) for n in sys.argv[5].split(",")]

# llama.cpp's figures for exactly these files on this machine type (2-vCPU AMD EPYC Zen 5 VM,
# llama-bench -p 512 -n 128 -t 2 -r 3): ../shared/fixtures/README.md, "Performance anchor".
LLAMACPP = {  # type: (pp512 low, high, tg128 low, high)
    "q4_0": (186, 196, 62, 65),
    "q8_0": (121, 126, 31.5, 32.2),
    "f16": (150, 151, 20.5, 21.1),
}
# The instruction a type's prefill kernel multiplies with, per SIMD level (bench_peak's rows).
# Quantised types multiply int8 activations by the weights' quants: on AVX-512 the 32-element
# formats with vpdpbusd (kernels_avx512_q32.cpp), and so do Q2_K, Q4_K, Q5_K, Q6_K (and the Q4_K_M /
# Q5_K_M mixes made of them) and IQ4_XS on the panels the model repacks them into at load, and the
# lattice i-quants (IQ2_*, IQ3_*, IQ1_*, the ternary TQ1_0 / TQ2_0, and llama.cpp's mixes named
# after them) on the panels their prefill decodes per block of tokens (kernels_avx512_grid.cpp);
# Q3_K with vpmaddubsw +
# vpdpwssd by the sub-block scales (kernels_avx512_k.cpp), on AVX2 all with vpmaddubsw + vpmaddwd.
# The float types widen to
# f32 and use FMA, packed or not, except BF16 on AVX-512 CPUs with AVX512_BF16: vdpbf16ps
# (backend/cpu/kernel_registry.cpp).
def kernel_kind(t):
    t = t.removeprefix("llama-")
    if t == "bf16" and peak.get("features", {}).get("avx512bf16"):
        return "bf16dot"
    if t in ("f32", "f16", "bf16"):
        return "float"
    if t in ("q2_k", "q4_k", "q5_k", "q6_k", "q4_k_m", "q5_k_m", "iq4_xs") and os.environ.get("VERDICT_CPU_REPACK") != "0":
        return "panel"
    if t.startswith(("iq2_", "iq3_", "iq1_", "tq")):
        return "grid"
    return "superblock" if "_k" in t or (t.startswith("iq") and t != "iq4_nl") else "block32"


PEAK_ROW = {("avx512", "float"): "fma_f32_zmm", ("avx512", "block32"): "vpdpbusd_zmm",
            ("avx512", "superblock"): "int8_dpwssd_zmm", ("avx512", "panel"): "vpdpbusd_zmm",
            ("avx512", "bf16dot"): "vdpbf16ps_zmm", ("avx2", "bf16dot"): "fma_f32_ymm",
            ("avx2", "float"): "fma_f32_ymm", ("avx2", "block32"): "int8_avx2", ("avx2", "superblock"): "int8_avx2",
            ("avx2", "panel"): "int8_avx2", ("avx512", "grid"): "vpdpbusd_zmm", ("avx2", "grid"): "int8_avx2"}


def gguf_tensors(path):
    """name -> (dims, data bytes) from a GGUF (v2/v3) header; bytes = distance to the next tensor's
    data (alignment padding of up to general.alignment - 1 bytes included)."""
    fixed = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value types
    with open(path, "rb") as f:
        def rd(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]

        def skip(vt):
            if vt == 8:  # string
                f.seek(rd("Q"), 1)
            elif vt == 9:  # array: element type, count, elements
                et, n = rd("I"), rd("Q")
                if et in fixed:
                    f.seek(fixed[et] * n, 1)
                else:
                    for _ in range(n):
                        skip(et)
            else:
                f.seek(fixed[vt], 1)

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        rd("I")  # version
        n_tensors, n_kv = rd("Q"), rd("Q")
        alignment = 32
        for _ in range(n_kv):
            key = f.read(rd("Q"))
            vt = rd("I")
            if key == b"general.alignment" and vt == 4:
                alignment = rd("I")
            else:
                skip(vt)
        infos = []
        for _ in range(n_tensors):
            name = f.read(rd("Q")).decode()
            dims = [rd("Q") for _ in range(rd("I"))]
            rd("I")  # ggml type
            infos.append((name, dims, rd("Q")))
        data_start = (f.tell() + alignment - 1) // alignment * alignment
    data_size = os.path.getsize(path) - data_start
    offsets = sorted({o for _, _, o in infos}) + [data_size]
    end_of = {o: offsets[i + 1] for i, o in enumerate(offsets[:-1])}
    return {name: (dims, end_of[o] - o) for name, dims, o in infos}


def rounds(prefix, t):
    """The rounds' results of one tool (LLAMA_BENCH runs) merged: per (n_prompt, n_gen), avg_ts = the
    median of the rounds' figures, stddev_ts their sample sd, rounds_ts the figures; None if absent."""
    paths = sorted(glob.glob(os.path.join(work, f"{prefix}-{t}-r*.json")))
    if not paths:
        return None
    runs = [json.load(open(p)) for p in paths]
    merged = []
    for x in runs[0]:
        key = (x["n_prompt"], x["n_gen"])
        vals = [y["avg_ts"] for r in runs for y in r if (y["n_prompt"], y["n_gen"]) == key]
        z = dict(x, avg_ts=statistics.median(vals), stddev_ts=statistics.stdev(vals) if len(vals) > 1 else 0.0,
                 rounds_ts=vals)
        merged.append(z)
    return merged


def prod(dims):
    r = 1
    for d in dims:
        r *= d
    return r


stream = json.load(open(os.path.join(work, "stream.json")))
peak = json.load(open(os.path.join(work, "peak.json")))
peak_by = {(r["name"], r["threads"]): r for r in peak["rows"]}
cpu_flags = []
with open("/proc/cpuinfo") as f:
    for line in f:
        if line.startswith("flags"):
            cpu_flags = sorted(x for x in line.split(":", 1)[1].split()
                               if x.startswith(("avx512", "amx", "avx_vnni")))
            break
bw = stream["best_gbs"] * 1e9
rows, raw, raw_llama = [], {}, {}
for t in types:
    bench = rounds("bench", t) or json.load(open(os.path.join(work, f"bench-{t}.json")))
    live = rounds("llama", t)  # llama-bench in this run (LLAMA_BENCH), or None
    info = json.load(open(os.path.join(work, f"info-{t}.json")))
    raw[t] = bench
    json.dump(bench, open(os.path.join(work, f"bench-{t}.json"), "w"))  # (merged rounds) for step 5
    if live:
        raw_llama[t] = live
    pps = {x["n_prompt"]: x for x in bench if x["test"].startswith("pp")}
    pp = pps.get(512) or pps[pp_sizes[0]]  # the main table's prefill column: pp512 when it ran
    tg = next(x for x in bench if x["test"] == "tg128")
    path = os.path.join(cache, f"perf-llama-{t}.gguf")
    tensors = gguf_tensors(path)
    # Bytes read per decoded token: every weight except the embedding table (one row of it is read),
    # plus the K and V cache read by attention, at the average context of tg128 (f16 KV as bench).
    n_vocab, n_layer, n_head, n_head_kv = info["n_vocab"], info["n_layer"], info["n_head"], info["n_head_kv"]
    hd_k, hd_v = info["head_dim_k"], info["head_dim_v"]
    embd = tensors["token_embd.weight"][1]
    kv_per_pos = n_layer * n_head_kv * (hd_k + hd_v) * (2 if tg["type_k"] == "f16" else 4)
    avg_ctx = (tg["n_gen"] + 1) / 2
    per_token = pp["model_size"] - embd + embd / n_vocab + kv_per_pos * avg_ctx
    roofline = bw / per_token
    # Prefill work per token: 2 ops per weight of every matrix a token goes through (the layers'
    # matrices; experts scaled by n_expert_used / n_expert), the output head once per prompt (pp
    # asks for the last token's logits only, as llama-bench), plus attention's QK and PV products
    # at the causal average context (N + 1) / 2 (the masked half not counted).
    head = "output.weight" if "output.weight" in tensors else "token_embd.weight"
    per_tok_weights = 0.0
    for name, (dims, _) in tensors.items():
        if len(dims) < 2 or name in ("token_embd.weight", "output.weight"):
            continue
        share = info["n_expert_used"] / info["n_expert"] if len(dims) == 3 and info["n_expert"] else 1.0
        per_tok_weights += prod(dims) * share
    head_weights = prod(tensors[head][0])
    if sum(prod(d) for d, _ in tensors.values()) != info["n_params"]:
        print(f"perf.sh: warning: {path}: the tensor table and verdict info disagree on the parameter count",
              file=sys.stderr)
    simd = pp.get("simd", "")
    peak_row = peak_by.get((PEAK_ROW.get((simd, kernel_kind(t)), ""), pp["n_threads"]))
    prefill = []
    for n in pp_sizes:
        x = pps[n]
        attn_ops = n_head * (hd_k + hd_v) * (n + 1)  # 2 ops x n_head x (hd_k + hd_v) x (n + 1) / 2
        ops = 2 * per_tok_weights + 2 * head_weights / n + attn_ops
        gops = ops * x["avg_ts"] / 1e9
        lx = next((y for y in live or [] if y["n_prompt"] == n and y["n_gen"] == 0), None)
        prefill.append({
            "test": x["test"], "n_prompt": n, "tps": x["avg_ts"], "sd": x["stddev_ts"],
            "llamacpp_tps": lx["avg_ts"] if lx else None,
            "ratio": x["avg_ts"] / lx["avg_ts"] if lx else None,
            "ops_per_token": ops, "attention_ops_per_token": attn_ops, "gops": gops,
            "peak_row": peak_row["name"] if peak_row else None,
            "peak_instr": peak_row["instr"] if peak_row else None,
            "peak_gops": peak_row["gops"] if peak_row else None,
            "peak_fraction": gops / peak_row["gops"] if peak_row else None,
        })
    ref = LLAMACPP.get(t)
    ref_pp_range = [ref[0], ref[1]] if ref and pp["n_prompt"] == 512 else None  # the anchor is pp512
    ref_pp = (ref[0] + ref[1]) / 2 if ref_pp_range else None
    ref_tg = (ref[2] + ref[3]) / 2 if ref else None
    if live:  # this run's llama-bench: the median of its rounds, the range of them
        lpp = next(y for y in live if y["n_prompt"] == pp["n_prompt"] and y["n_gen"] == 0)
        ltg = next(y for y in live if y["n_prompt"] == 0 and y["n_gen"] == 128)
        ref_pp, ref_pp_range = lpp["avg_ts"], [min(lpp["rounds_ts"]), max(lpp["rounds_ts"])]
        ref_tg = ltg["avg_ts"]
        ref = (0, 0, min(ltg["rounds_ts"]), max(ltg["rounds_ts"]))
    rows.append({
        "type": t.upper(),
        "file": path,
        "file_bytes": os.path.getsize(path),
        "model_size": pp["model_size"],
        "n_params": info["n_params"], "weights_per_token": per_tok_weights, "head_weights": head_weights,
        "token_embd_bytes": embd,
        "prefill_test": pp["test"],
        "prefill_tps": pp["avg_ts"], "prefill_sd": pp["stddev_ts"],
        "decode_tps": tg["avg_ts"], "decode_sd": tg["stddev_ts"],
        "llamacpp_prefill_tps": ref_pp, "llamacpp_prefill_range": ref_pp_range,
        "llamacpp_decode_tps": ref_tg, "llamacpp_decode_range": [ref[2], ref[3]] if ref else None,
        "prefill_ratio": pp["avg_ts"] / ref_pp if ref_pp else None,
        "decode_ratio": tg["avg_ts"] / ref_tg if ref else None,
        "bytes_per_token": per_token,
        "roofline_tps": roofline,
        "decode_roofline_fraction": tg["avg_ts"] / roofline,
        "llamacpp_roofline_fraction": ref_tg / roofline if ref else None,
        "prefill": prefill,
    })

first = raw[types[0]][0]
result = {
    "machine": {k: first.get(k) for k in ("cpu_info", "cpu_physical_cores", "cpu_logical_cores", "simd")},
    "build_commit": first.get("build_commit"), "engine_version": first.get("engine_version"),
    "n_threads": first.get("n_threads"), "load_average": open("/proc/loadavg").read().split()[:3],
    "cpu_flags": cpu_flags, "stream": stream, "peak": peak, "rows": rows, "bench": raw,
    "llamacpp_live": bool(raw_llama), "llamacpp_bench": raw_llama,
    "llamacpp_build": next((v[0].get("build_commit") for v in raw_llama.values()), None),
}
with open(out, "w") as f:
    json.dump(result, f, indent=2)

def num(x, fmt="{:.1f}"):
    return "–" if x is None else fmt.format(x)

print(f"machine: {result['machine']['cpu_info']}, {result['n_threads']} threads, SIMD {result['machine']['simd']}; "
      f"STREAM triad best {stream['best_gbs']:.1f} GB/s (mean {stream['mean_gbs']:.1f}); build {result['build_commit']}")
print(f"cpu flags: {' '.join(cpu_flags) or '(no avx512* / amx* / avx_vnni)'}")
print("compute peak (bench_peak, GOP/s, 1 / " + str(peak["threads"]) + " threads): " + "; ".join(
    f"{r['instr']} {peak_by[(r['name'], 1)]['gops']:.0f} / {r['gops']:.0f}"
    for r in peak["rows"] if r["threads"] == peak["threads"] and (r["name"], 1) in peak_by)
    + (f"; skipped (CPU lacks): {', '.join(peak['skipped'])}" if peak["skipped"] else ""))
print()
main_pp = rows[0]["prefill_test"]
if raw_llama:
    print(f"llama.cpp: llama-bench (build {result['llamacpp_build']}) on the same files in this run, alternating "
          f"with verdict, {len(next(iter(raw_llama.values()))[0]['rounds_ts'])} rounds: medians, [range]; "
          "verdict's figures are the medians of its rounds too")
else:
    print("llama.cpp: the fixtures README's anchor figures (llama-bench on this machine type, not this run)")
print()
print(f"| type | file size | prefill tok/s ({main_pp}) | llama.cpp {main_pp if raw_llama else 'pp512'} | ratio | decode tok/s (tg128) | llama.cpp tg128 | ratio | roofline tok/s | decode / roofline | llama.cpp / roofline |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    size = r["file_bytes"] / 2**20
    size = f"{size:.1f} MiB" if size < 1024 else f"{size / 1024:.2f} GiB"
    lp = r["llamacpp_prefill_range"]; lt = r["llamacpp_decode_range"]
    print(f"| {r['type']} | {size} | {r['prefill_tps']:.1f} ± {r['prefill_sd']:.1f} | "
          f"{'–' if not lp else f'{lp[0]:.1f}–{lp[1]:.1f}'} | {num(r['prefill_ratio'], '{:.2f}')} | "
          f"{r['decode_tps']:.1f} ± {r['decode_sd']:.1f} | {'–' if not lt else f'{lt[0]:.1f}–{lt[1]:.1f}'} | "
          f"{num(r['decode_ratio'], '{:.2f}')} | {r['roofline_tps']:.1f} | {r['decode_roofline_fraction']:.0%} | "
          f"{'–' if r['llamacpp_roofline_fraction'] is None else format(r['llamacpp_roofline_fraction'], '.0%')} |")
print()
print(f"Prefill against the compute peak ({result['n_threads']} threads): GOP / token = 2 x the weights a token "
      "goes through (all matrices but the token embedding; the output head once per prompt) + attention's "
      "QK and PV at the causal average context")
print()
print("| type | test | prefill tok/s | llama.cpp tok/s | ratio | GOP / token (attention) | GOP/s | kernel's instruction | peak GOP/s | ÷ peak |")
print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
for r in rows:
    for p in r["prefill"]:
        print(f"| {r['type']} | {p['test']} | {p['tps']:.1f} ± {p['sd']:.1f} | {num(p['llamacpp_tps'])} | "
              f"{num(p['ratio'], '{:.2f}')} | {p['ops_per_token'] / 1e9:.3f} "
              f"({p['attention_ops_per_token'] / p['ops_per_token']:.2%}) | {p['gops']:.1f} | "
              f"{p['peak_instr'] or '–'} | {num(p['peak_gops'], '{:.0f}')} | {num(p['peak_fraction'], '{:.1%}')} |")
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
    "$VERDICT" bench "$f" -p "$PP_LIST" -n 128 -r "$REPS" --threads "$THREADS" --json > "$WORK/bench-deepseek2.json"
    "$VERDICT" info "$f" --json > "$WORK/info-deepseek2.json"
    "$VERDICT" info "$CACHE/perf-llama-$t.gguf" --json > "$WORK/info-llama.json"
    python3 - "$WORK" "$t" <<'PY'
import json, os, sys
work, t = sys.argv[1], sys.argv[2]
b = json.load(open(os.path.join(work, "bench-deepseek2.json")))
pp_test = "pp512" if any(x["test"] == "pp512" for x in b) else next(x["test"] for x in b if x["test"].startswith("pp"))
print()
print(f"| model | params | active / token | KV bytes / token (f16) | prefill tok/s ({pp_test}) | decode tok/s (tg128) |")
print("|---|---:|---:|---:|---:|---:|")
for name, bench, info in (("dense llama", f"bench-{t}.json", "info-llama.json"),
                          ("deepseek2 MoE + MLA", "bench-deepseek2.json", "info-deepseek2.json")):
    b = json.load(open(os.path.join(work, bench)))
    i = json.load(open(os.path.join(work, info)))
    pp = next(x for x in b if x["test"] == pp_test)
    tg = next(x for x in b if x["test"] == "tg128")
    print(f"| {name} {t.upper()} | {i['n_params'] / 1e9:.2f} B | {i['n_params_active'] / 1e9:.2f} B | "
          f"{i['memory']['kv_bytes_per_token']} | {pp['avg_ts']:.1f} ± {pp['stddev_ts']:.1f} | "
          f"{tg['avg_ts']:.1f} ± {tg['stddev_ts']:.1f} |")
PY
fi
