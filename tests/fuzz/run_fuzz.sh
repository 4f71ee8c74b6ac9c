#!/usr/bin/env bash
# usage: run_fuzz.sh TARGET CLANGXX SOURCE_DIR WORK_DIR FIXTURES_DIR [SECONDS]
# Builds tests/fuzz/fuzz_TARGET.cpp with libFuzzer + ASan + UBSan into WORK_DIR (only again when a
# source is newer than the binary), writes its seeds to WORK_DIR/seeds and fuzzes for SECONDS
# (default $VERDICT_FUZZ_SECONDS, else 60; 0 = no time limit), keeping what it finds in
# WORK_DIR/corpus and any crash/leak/timeout input as WORK_DIR/crash-* (or leak-*, timeout-*, oom-*).
# TARGET: gguf, suite_import, jinja, sse, judge_verdict (see tests/fuzz/README.md).
# Environment: VERDICT_FUZZ_ARGS   more libFuzzer flags (a campaign: "-runs=10000000")
#              VERDICT_REQUIRE_FIXTURES=1   fail instead of fuzzing on when fixtures are missing
#              VERDICT_FUZZ_BUILD_ONLY=1    build and write the seeds, do not fuzz
set -euo pipefail
target=$1 cxx=$2 src=$3 work=$4 fixtures=$5 seconds=${6:-${VERDICT_FUZZ_SECONDS:-60}}

# Per target: the sources (explicit and minimal), libraries, the longest input, the per-input
# timeout, and whether coverage skips the standard library and nlohmann (coverage_ignore.txt).
libs=() max_len=65536 timeout=10 ignore=1
case $target in
gguf)
  sources=(engine/gguf/gguf_file.cpp engine/gguf/gguf_value.cpp engine/gguf/mapped_file.cpp
           engine/tensor/tensor_type.cpp engine/model/model_card.cpp engine/template/chat_template_family.cpp
           engine/util/sha256.cpp engine/util/quote.cpp)
  ignore=0 ;;
suite_import)
  sources=(app/core/suite/suite_importer.cpp app/core/suite/byte_source.cpp app/core/suite/record_reader.cpp
           app/core/suite/json_parse.cpp app/core/suite/utf8_text.cpp app/core/suite/field_mapping.cpp
           app/core/suite/suite_shape.cpp app/core/suite/record_fields.cpp app/core/suite/item_mapper.cpp
           app/core/suite/item_mapper_mc.cpp app/core/suite/promptfoo_mapper.cpp app/core/suite/item_mapper_tools.cpp
           app/core/suite/chat_turn_json.cpp app/core/score/tool_call_scorer.cpp app/core/score/json_schema.cpp
           engine/util/sha256.cpp engine/tokenizer/unicode.cpp engine/tokenizer/unicode_tables.cpp)
  libs=(-lz) max_len=2048 ;;
jinja)
  sources=(engine/template/chat_template.cpp engine/template/jinja_lexer.cpp engine/template/jinja_parser.cpp
           engine/template/jinja_interpreter.cpp engine/template/jinja_eval.cpp engine/template/jinja_value.cpp
           engine/template/jinja_string.cpp engine/template/jinja_json.cpp engine/template/jinja_filters.cpp
           engine/template/jinja_filters_seq.cpp engine/template/jinja_tests.cpp engine/template/jinja_methods.cpp
           engine/template/jinja_format.cpp)
  max_len=4096 ;;  # 10M executions in under an hour; templates over 4 KiB enter truncated
sse)
  sources=(app/core/net/sse.cpp app/core/net/openai_response.cpp)
  max_len=8192 ignore=0 ;;  # here nlohmann's parser is what turns bytes into chunks: keep its coverage
judge_verdict)
  sources=(app/core/judge/judge_verdict.cpp app/core/suite/utf8_text.cpp engine/util/quote.cpp
           engine/tokenizer/unicode.cpp engine/tokenizer/unicode_tables.cpp)
  max_len=8192 ;;
*) echo "run_fuzz.sh: unknown target '$target' (gguf, suite_import, jinja, sse, judge_verdict)"; exit 2 ;;
esac

mkdir -p "$work"
bin="$work/fuzz_$target"
inputs=("$src/tests/fuzz/fuzz_$target.cpp" "$src/tests/fuzz/run_fuzz.sh" "$src/tests/fuzz/coverage_ignore.txt")
for s in "${sources[@]}"; do inputs+=("$src/$s"); done
# Rebuild when the harness, a source, or a header next to one (or a public one) is newer.
stale=1
if [ -x "$bin" ]; then
  dirs=$(for s in "${sources[@]}"; do dirname "$src/$s"; done | sort -u)
  # shellcheck disable=SC2086
  newer=$(find "${inputs[@]}" $dirs "$src/engine/include" -maxdepth 1 -newer "$bin" \
            \( -name '*.[ch]*' -o -name run_fuzz.sh -o -name coverage_ignore.txt \) -print -quit)
  if [ -z "$newer" ]; then stale=0; fi
fi
if [ "$stale" = 1 ]; then
  echo "fuzz_$target: building"
  cov=()
  if [ "$ignore" = 1 ]; then cov=(-fsanitize-coverage-ignorelist="$src/tests/fuzz/coverage_ignore.txt"); fi
  "$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined "${cov[@]}" \
    -I"$src/app" -I"$src/engine" -I"$src/engine/include" \
    "${inputs[0]}" "${inputs[@]:3}" "${libs[@]}" -o "$bin.tmp"
  mv "$bin.tmp" "$bin"
fi

corpus="$work/corpus" seeds="$work/seeds"
rm -rf "$seeds"; mkdir -p "$corpus" "$seeds"

# True when fixtures/$1 exists; otherwise says so, and fails with VERDICT_REQUIRE_FIXTURES=1.
have_fixtures() {
  [ -d "$fixtures/$1" ] && return 0
  if [ "${VERDICT_REQUIRE_FIXTURES:-0}" = 1 ]; then echo "fixtures missing: $fixtures/$1"; exit 1; fi
  echo "fixtures missing: $fixtures/$1 - fuzzing without their seeds"
  return 1
}
# seed NAME BYTES: one seed file; BYTES is printf format text (\xNN escapes).
seed() { printf "$2" >"$seeds/$1"; }

case $target in
gguf)
  # The first 64 KiB of every fixture model: header, metadata and tensor table.
  if have_fixtures models; then
    for f in "$fixtures"/models/*.gguf "$fixtures"/tokenizer/*.gguf; do
      [ -e "$f" ] && head -c 65536 "$f" >"$seeds/$(basename "$f")"
    done
  fi ;;
suite_import)
  # First byte: the mode (see fuzz_suite_import.cpp). Every test suite file as detected and with
  # its format hinted, gzip-wrapped, and the start of each bundled dataset.
  for f in "$src"/tests/data/suites/* "$src"/datasets/*.jsonl; do
    [ -f "$f" ] || continue
    b=$(basename "$f")
    case $b in *.jsonl*) hint='\x01' ;; *.json*) hint='\x02' ;; *.csv*) hint='\x03' ;; *.tsv*) hint='\x04' ;; *) hint='\x00' ;; esac
    { printf '\x00'; head -c 4096 "$f"; } >"$seeds/detect-$b"
    { printf "$hint"; head -c 4096 "$f"; } >"$seeds/hint-$b"
    case $b in *.gz) ;; *) { printf '\x08'; head -c 4096 "$f"; } >"$seeds/gzip-$b" ;; esac
  done
  seed promptfoo-config '\x00{"description": "d", "prompts": ["Q: {{question}}"], "tests": [{"vars": {"question": "2+2?"}, "assert": [{"type": "equals", "value": "4"}, {"type": "contains", "value": "x"}, {"type": "javascript", "value": "1"}]}]}'
  seed csv-quotes '\x03question,A,B,C,D,answer\n"What ""is"" 1+1?\nThink",1,2,3,4,B\r\nplain,a,b,c,d,E\n"open,1,2\n'
  seed mmlu-noheader '\x06What?,a,b,c,d,A\nWhy?,1,2,3\n'
  seed openai-evals '\x01{"input": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], "ideal": ["x", "y"]}\n'
  seed inspect '\x01{"input": "q", "target": "t", "choices": ["a", "b"], "id": 3, "metadata": {"k": 1}}\n{"input": [{"role": "user", "content": "c"}], "target": ["A"], "choices": ["x", "y"]}\n'
  seed arc '\x01{"question": {"stem": "\\ud83d\\ude00?", "choices": [{"text": "a", "label": "A"}, {"text": "b", "label": "B"}]}, "answerKey": "B", "id": "x"}\n'
  seed tools '\x01{"id": "w", "prompt": "p", "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}], "expected_calls": [{"name": "f", "arguments": {"a": 1}, "accept": {"b": [null, "x"]}}], "tool_results": {"f": {"r": 2}}, "reference": "2"}\n{"messages": [{"role": "user", "content": "u"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c", "content": "r"}], "tools": [{"name": "f"}], "expected_calls": []}\n'
  seed bfcl '\x01{"id": "simple_0", "question": [[{"role": "user", "content": "q"}]], "function": [{"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "any"}}}}}], "ground_truth": [{"f": {"x": [1.5, ""], "t": [[1, 2]]}}]}\n{"id": "irrelevance_3", "question": "q", "function": {"name": "g"}}\n'
  seed gsm8k '\x01{"question": "q", "answer": "work\\n#### 1,234"}\n{"question": "r", "answer": "-3.5"}\n'
  seed aqua '\x02[{"question": "q", "options": ["A)1", "B)2", "C)3"], "correct": "C", "rationale": "r"}, {"question": "p", "options": [], "correct": "A"},]'
  seed code '\x01{"task_id": "t/0", "prompt": "def f():\\n", "canonical_solution": "  return 1\\n", "test": "assert f()==1", "entry_point": "f"}\n{"text": "t", "code": "c", "test_list": ["assert 1"]}\n'
  seed bom-crlf '\x00\xef\xbb\xbf{"prompt": "a"}\r\n\r\n{"prompt": "b", "reference": 3}\r\n'
  seed tests-object '\x02{"name": "n", "tests": [{"vars": {"q": 1}}], "other": [1, 2]}'
  seed mapped-prompt '\xd0{"question": "q", "answer": "a", "target": "t", "meta": {"subject": "s"}, "id": 1}\n'
  seed mapped-mc '\xe0{"q": {"stem": "s"}, "A": "1", "B": "2", "C": "3", "D": "4", "label": "C", "sys": "be brief", "messages": [{"role": "user", "content": "m"}]}\n'
  seed template '\xf0{"vars": {"question": "q", "topic": "t"}, "assert": [{"type": "icontains", "value": "Q"}]}\n' ;;
jinja)
  # Every chat template of the fixtures, and the feature templates of the golden tests.
  if have_fixtures chat-templates; then
    for f in "$fixtures"/chat-templates/*.jinja "$fixtures"/chat-templates/llamacpp-v0.5.0/*.jinja; do
      [ -e "$f" ] && cp "$f" "$seeds/$(basename "$(dirname "$f")")-$(basename "$f")"
    done
  fi
  cp "$src"/tests/data/chat-templates/*.jinja "$seeds/"
  if command -v python3 >/dev/null; then
    python3 - "$src/tests/data/chat-templates/jinja_features.json" "$seeds" <<'EOF'
import json, sys
for i, case in enumerate(json.load(open(sys.argv[1], encoding="utf-8"))["cases"]):
    open(f"{sys.argv[2]}/feature-{i:03d}", "w", encoding="utf-8").write(case["template"])
EOF
  fi ;;
sse)
  # First byte: how the rest is split (see fuzz_sse.cpp); the rest is what a server sends.
  seed chat-stream '\x0fdata: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}\n\ndata: [DONE]\n\n'
  seed completion-stream '\x03: keep-alive\r\nevent: message\r\nid: 7\r\ndata: {"choices":[{"text":"Once","index":0,"logprobs":null,"finish_reason":null}]}\r\n\r\ndata:{"choices":[{"text":" upon","finish_reason":"length"}],\r\ndata: "usage":{"prompt_tokens":3.0,"completion_tokens":true}}\r\n\r\ndata: [DONE]\r\n\r\n'
  seed error-stream '\x00data: {"error": {"message": "overloaded", "type": "server_error", "code": 503}}\n\ndata: not json\n\ndata: [1, 2]\n\n'
  seed chat-completion '\x0f{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}'
  seed tool-call '\x0f{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":"9","completion_tokens":null}}'
  seed echo-logprobs '\x01{"choices":[{"text":"The cat sat","index":0,"logprobs":{"tokens":["The"," cat"," sat","."],"token_logprobs":[null,-1.5,-0.25,-2.0],"top_logprobs":[null,{" cat":-1.5,"dog":-3.0},{" sat":-0.25},{".":-2.0}],"text_offset":[0,3,7,11]},"finish_reason":"length"}]}' ;;
judge_verdict)
  # What judges write: MT-Bench pairwise and rubric endings, restated formats, reasoning blocks.
  seed pairwise 'Assistant A answers the question directly, while B digresses.\n\nFinal verdict: [[A]]'
  seed tie 'Both responses are accurate and equally helpful. [[C]]'
  seed restated 'I will output [[A]] if A is better, [[B]] if B is better, [[C]] for a tie.\n[[B]]'
  seed rubric 'The answer is correct but terse.\n\nRating: [[7]]'
  seed rubric-decimal 'Rating: [[8.5]] ... to confirm: [[8.5]]'
  seed think '<think>\nA is longer; is it better? [[A]]?\n</think>\n\n[[B]]'
  seed think-unended '<think>\nComparing the two answers step by step'
  seed harmony '<|start|>assistant<|channel|>analysis<|message|>Weigh [[A]] vs [[B]].<|end|><|start|>assistant<|channel|>final<|message|>Verdict: [[ tie ]]<|return|>'
  seed brackets '[[[A]]] [[ 10 ]] [[7/10]] [[-1]] [[1e1]] [[\nB]]' ;;
esac

# -rss_limit_mb guards against huge allocations (mallocs past it fail too); -timeout against hangs;
# -reload=0: one process, nobody else adds to the corpus while it runs.
extra=()
read -r -a extra <<<"${VERDICT_FUZZ_ARGS:-}"
if [ "${VERDICT_FUZZ_BUILD_ONLY:-0}" = 1 ]; then echo "fuzz_$target: built $bin, $(ls "$seeds" | wc -l) seeds"; exit 0; fi
"$bin" "$corpus" "$seeds" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout="$timeout" -reload=0 \
  -artifact_prefix="$work/" -print_final_stats=1 "${extra[@]}" >"$work/fuzz.log" 2>&1 || {
  tail -n 60 "$work/fuzz.log"
  echo "fuzz_$target: FOUND a problem; the input is in $work (crash-*/leak-*/timeout-*/oom-*), the log in $work/fuzz.log"
  exit 1
}
grep -E '(DONE|^Done |^stat::)' "$work/fuzz.log" | tail -n 8
echo "fuzz_$target: ran $([ "$seconds" = 0 ] || echo "${seconds}s ")without a finding"
