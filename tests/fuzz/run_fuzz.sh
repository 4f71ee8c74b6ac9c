#!/usr/bin/env bash
# usage: run_fuzz.sh CLANGXX SOURCE_DIR WORK_DIR FIXTURES_DIR [SECONDS]
# Builds the GGUF fuzzer with libFuzzer + ASan + UBSan and runs it for SECONDS (default 60),
# seeded with the first 64 KiB of every fixture model (header, metadata and tensor table).
set -euo pipefail
cxx=$1 src=$2 work=$3 fixtures=$4 seconds=${5:-${VERDICT_FUZZ_SECONDS:-60}}
mkdir -p "$work"
bin="$work/fuzz_gguf"
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$src/engine" -I"$src/engine/include" \
  "$src/tests/fuzz/fuzz_gguf.cpp" "$src"/engine/gguf/*.cpp "$src/engine/tensor/tensor_type.cpp" \
  "$src/engine/model/model_card.cpp" "$src/engine/tokenizer/chat_template_family.cpp" "$src/engine/util/sha256.cpp" "$src/engine/util/quote.cpp" -o "$bin"
corpus="$work/corpus" seeds="$work/seeds"
rm -rf "$seeds"; mkdir -p "$corpus" "$seeds"
if [ -d "$fixtures/models" ]; then
  for f in "$fixtures"/models/*.gguf "$fixtures"/tokenizer/*.gguf; do
    [ -e "$f" ] && head -c 65536 "$f" >"$seeds/$(basename "$f")"
  done
elif [ "${VERDICT_REQUIRE_FIXTURES:-0}" = 1 ]; then
  echo "fixtures missing: $fixtures/models"; exit 1
else
  echo "fixtures missing: $fixtures/models - fuzzing from an empty corpus"
fi
# -rss_limit_mb guards against huge allocations; -timeout against hangs.
"$bin" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 2>&1 | tail -n 25
echo "fuzz_gguf: ran ${seconds}s without a finding"
