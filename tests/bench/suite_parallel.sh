#!/usr/bin/env bash
# Suite-run throughput against --parallel (issue 23): GSM8K-shaped items (datasets/word_problems.jsonl,
# greedy, a fixed number of generated tokens each) or, with BENCH_KIND=mmlu, MMLU-shaped
# multiple-choice items scored by log-likelihood (datasets/multiple_choice.jsonl, 5-shot, 4 choices:
# prefill only) through `verdict run` on the perf model, items/s at each level and the ratio to
# --parallel 1. Every level must give the same answers: the script compares the stored outputs
# (and, for mmlu, every choice's log-probability) and says so. Prints JSON; never fails on speed.
#
#   cmake --build build --target verdict
#   tests/bench/suite_parallel.sh                 # ~10 minutes on 2 cores (the model is made once)
#
# Environment: VERDICT_BINARY (./build/verdict), BENCH_MODELS_DIR (build/bench-models),
# BENCH_MODEL (default: perf-llama-q4_0.gguf there, made with perf.sh's shape when missing),
# BENCH_PARALLEL ("1 4 16"), BENCH_ITEMS (32), BENCH_MAX_TOKENS (64), BENCH_THREADS (2),
# BENCH_KIND (gsm or mmlu), BENCH_SHOTS (mmlu: 5), BENCH_DEVICE (cpu; cuda:0 on a GPU: tests/gpu/run.sh).
# Run it on a quiet machine: the load average is printed and stored.
set -euo pipefail
VERDICT=${VERDICT_BINARY:-./build/verdict}
CACHE=${BENCH_MODELS_DIR:-build/bench-models}
MODEL=${BENCH_MODEL:-$CACHE/perf-llama-q4_0.gguf}
LEVELS=${BENCH_PARALLEL:-1 4 16}
ITEMS=${BENCH_ITEMS:-32}
MAXTOK=${BENCH_MAX_TOKENS:-64}
THREADS=${BENCH_THREADS:-2}
KIND=${BENCH_KIND:-gsm}
SHOTS=${BENCH_SHOTS:-5}
DEVICE=${BENCH_DEVICE:-cpu}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "suite_parallel.sh: $*" >&2; exit 1; }
[ -x "$VERDICT" ] || die "no verdict binary at $VERDICT (cmake --build build --target verdict)"
mkdir -p "$CACHE"
if [ ! -f "$MODEL" ]; then
    echo "making $MODEL (perf.sh's llama shape, Q4_0)" >&2
    "$VERDICT" make-model --arch llama --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 --n-ff 5632 \
        --n-vocab 32000 --ctx 2048 --type q4_0 --seed 1 "$MODEL.tmp" >/dev/null || die "make-model failed"
    mv "$MODEL.tmp" "$MODEL"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export VERDICT_DB="$WORK/bench.db"
case "$KIND" in
  gsm) "$VERDICT" suite import "$SRC/datasets/word_problems.jsonl" --name bench >/dev/null
       RUNOPTS=(--max-tokens "$MAXTOK" --stop "NEVER-STOP") ;;
  mmlu) "$VERDICT" suite import "$SRC/datasets/multiple_choice.jsonl" --name bench >/dev/null
        RUNOPTS=(--mc-mode loglik --shots "$SHOTS") ;;
  *) die "BENCH_KIND must be gsm or mmlu" ;;
esac
# Warm-up: pages the weights in, so the first level does not pay for it.
"$VERDICT" run "$MODEL" --suite bench --limit 2 --max-tokens 4 -t "$THREADS" --device "$DEVICE" --parallel 1 --new >/dev/null 2>&1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

rows=()
for p in $LEVELS; do
    start=$(date +%s.%N)
    "$VERDICT" run "$MODEL" --suite bench --limit "$ITEMS" "${RUNOPTS[@]}" -t "$THREADS" --device "$DEVICE" \
        --parallel "$p" --new --json >"$WORK/run-$p.json" 2>"$WORK/run-$p.err" || { cat "$WORK/run-$p.err" >&2; die "run at --parallel $p failed"; }
    end=$(date +%s.%N)
    run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$WORK/run-$p.json")
    "$VERDICT" export "$run" --format json >"$WORK/items-$p.json"
    rows+=("$p $run $start $end")
    echo "parallel $p: $(python3 -c "print(round($end - $start, 1))") s" >&2
done

python3 - "$WORK" "$ITEMS" "$MAXTOK" "$THREADS" "$MODEL" "$KIND" "$DEVICE" "${rows[@]}" <<'EOF'
import json, os, platform, sys
work, items, maxtok, threads, model, kind, device = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
                                                     sys.argv[5], sys.argv[6], sys.argv[7])
levels = []
for row in sys.argv[8:]:
    p, run, start, end = row.split()
    data = json.load(open(os.path.join(work, f"items-{p}.json")))
    outputs = [(i["item_idx"], i["output"], json.dumps((i.get("details") or {}).get("logprobs"))) for i in data["items"]]
    tokens = sum(i.get("tokens_out") or 0 for i in data["items"])
    secs = float(end) - float(start)
    levels.append({"parallel": int(p), "seconds": round(secs, 2), "items_per_s": round(items / secs, 3),
                   "output_tok_per_s": round(tokens / secs, 1), "outputs": sorted(outputs)})
base = levels[0]
for l in levels:
    l["ratio_to_first"] = round(l["items_per_s"] / base["items_per_s"], 2)
    l["same_outputs_as_first"] = l["outputs"] == base["outputs"]
for l in levels:
    del l["outputs"]
print(json.dumps({"bench": "suite_parallel", "kind": kind, "device": device, "model": os.path.basename(model), "items": items,
                  "max_tokens": maxtok if kind == "gsm" else 0, "threads": threads, "machine": platform.machine(),
                  "cpus": os.cpu_count(), "load_average": open("/proc/loadavg").read().split()[:3],
                  "levels": levels}, indent=2))
EOF
