#!/usr/bin/env python3
"""Regenerates the hand-picked goldens in this folder with the reference implementation.

Expected strings come from Python jinja2 (3.1.6 when these were written) configured exactly as
../../../../shared/fixtures/chat-templates/README.md describes transformers' environment:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, loopcontrols), transformers'
tojson (json.dumps, ensure_ascii=False), raise_exception, strftime_now frozen at 2026-01-15 12:00.

  jinja_features.json     small templates, one interpreter feature each (test_chat_template)
  tool_conversations.json multi-turn tool-calling conversations rendered with fixture templates
                          (by name; the templates are read in place from shared/fixtures)

Run: python3 generate_goldens.py [path/to/shared/fixtures/chat-templates]
"""
import datetime
import json
import os
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../../shared/fixtures/chat-templates")


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime(2026, 1, 15, 12, 0, 0).strftime(fmt)
    return env


def render(env, source, variables):
    try:
        return {"expected": env.from_string(source).render(**variables)}
    except Exception as e:  # the C++ test checks the exception type (and the message for TemplateError)
        return {"raises": f"{type(e).__name__}: {e}"}


FEATURES = [
    # whitespace control: trim_blocks, lstrip_blocks, '-' and '+' modifiers, comments, raw
    ("ws_trim_lstrip", "a\n  {% if true %}\n  x\n  {% endif %}\n{{ 1 }}  \n  {{ 2 }}\n", {}),
    ("ws_minus", "  {%- if true -%}  a  {%- endif -%}  ", {}),
    ("ws_loop_lines", "{% for i in range(3) %}\n  {{ i }}\n{% endfor %}", {}),
    ("ws_plus", "{%+ if true %}x{% endif +%}\ny", {}),
    ("ws_comments", "{# comment #}\na {# c2 -#}   b\n  {#- c3 #}c", {}),
    ("ws_raw", "text {% raw %}{{ not parsed }} {% if %}{% endraw %} after", {}),
    ("ws_raw_strip", "  {% raw -%}   raw  {%- endraw %}\nz", {}),
    ("ws_indented_loop", "  {% for x in [1,2] %}\n    {{ x }}\n  {% endfor %}\ndone", {}),
    ("ws_var_not_lstripped", "  {{ 'var' }}  {% if true %}x{% endif %}", {}),
    ("ws_tab", "\t{% if true %}tab{% endif %}", {}),
    ("ws_trailing_newlines", "{% if true %}a{% endif %}\n\n\n", {}),
    ("ws_var_minus", "a{{- '  b  ' -}}c", {}),
    ("ws_macro_body", "{% macro m() -%}\n  body\n{%- endmacro %}\n[{{ m() }}]", {}),
    ("ws_crlf", "CRLF line1\r\n{% if true %}\r\nin\r\n{% endif %}\r\n", {}),
    # literals and operators (jinja2 precedence: ~ binds tighter than +, unary minus looser than **)
    ("ops_arith", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 4 / 2 }}", {}),
    ("ops_numbers", "{{ 1.5 + 1 }} {{ 0.1 + 0.2 }} {{ 1e3 }} {{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 2.5e-3 }} {{ 1e100 }} {{ 3.0 }} {{ 1e16 }} {{ 123456789.0 * 1000 }}", {}),
    ("ops_concat", "{{ 'a' ~ 1 ~ none ~ true }} {{ 'x' + 'y' }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ [1,2] + [3] }} {{ 'a' ~ 'b' | upper }}", {}),
    ("ops_string_escapes", r"{{ 'it\'s' }} {{ 'tab\there' }} {{ 'nl\nx' }} {{ '\u00e9\x41\101' }} {{ 'back\\slash' }} {{ '\d' }} {{ 'a' 'b' }}", {}),
    ("ops_repr", "{{ [1, 'a', none, true, 1.5, [2]] }} {{ {'a': 1, 'b': [1,2]} }} {{ (1,) }} {{ () }} {{ (1, 2) }} {{ [\"it's\", 'say \"hi\"'] }}", {}),
    ("ops_logic", "{{ true and 'x' }} {{ false or 0 or 'y' }} {{ not none }} {{ 1 if false }}|{{ 'a' if 0 else 'b' }} {{ none or [] }}", {}),
    ("ops_compare", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' in 'cat' }} {{ 1 in [1,2] }} {{ 'k' in {'k':1} }} {{ 'z' not in 'abc' }} {{ [1,2] == [1,2] }} {{ (1,2) == [1,2] }}", {}),
    ("ops_pow_div", "{{ 10 ** -1 }} {{ 2 ** 0.5 }} {{ -(3) }} {{ +3 }} {{ 5 - 10 }} {{ 1e-7 }} {{ 0.0001 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 10 % 3.5 }}", {}),
    ("ops_percent", "{{ '%s and %s' % ('a', 'b') }} {{ '%d%%' % 50 }} {{ '%(x)s' % {'x': 1} }} {{ '%.2f' % 3.14159 }} {{ '%5s|%-5s|' % ('a','b') }} {{ '%r' % 'q' }} {{ '%05.1f|%x' % (3.14159, 255) }}", {}),
    ("ops_div_zero", "{{ 1 / 0 }}", {}),
    ("ops_str_plus_int", "{{ 'a' + 1 }}", {}),
    ("ops_order_mixed", "{{ 1 < 'a' }}", {}),
    # subscripts and slices, code points not bytes
    ("slice_string", "{{ s[0] }} {{ s[-1] }} {{ s[1:4] }} {{ s[::-1] }} {{ s[::2] }} {{ s[-3:] }} {{ s[:-3] }} {{ u[1] }} {{ u[::-1] }} {{ u|length }} {{ u[2:5] }}",
     {"s": "Hello World", "u": "héllo wörld 日本"}),
    ("slice_list", "{{ l[1:] }} {{ l[:2] }} {{ l[::-1] }} {{ l[-2:] }} {{ l[1:-1] }} {{ l[::2] }} {{ l[10:] }} {{ l[-10:2] }} {{ l[3:1:-1] }} {{ l[5] }}|{{ l[-6] }}|",
     {"l": [1, 2, 3, 4, 5]}),
    ("slice_bad_index", "{{ [1,2,3][x:] }}", {}),
    ("slice_step_zero", "{{ [1,2,3][::0] }}", {}),
    ("dict_access", "{{ d.a }} {{ d['b']['c'][1] }} {{ d.b.c.0 }} {{ d.missing }}|{{ d.get('a') }} {{ d.get('z', 'def') }} {{ d.get('z') }} {{ d.items() }} {{ d.keys() }} {{ d.values()|list }} {{ {'items': 5}['items'] }}",
     {"d": {"a": 1, "b": {"c": [10, 20]}}}),
    # undefined semantics (jinja2 default Undefined)
    ("undefined_soft", "{{ nope }}|{{ nope ~ 'a' }}|{{ nope is defined }}|{{ nope|default('dflt') }}|{{ nope|length }}|{{ 'lazy' if true else nope.x }}", {}),
    # jinja2 reads the name after a test as its argument unless it is else/or/and: a syntax error
    ("syntax_test_then_if", "{{ x is defined if true else 'no' }}", {}),
    ("undefined_attr", "{{ d.x.y }}", {}),
    ("undefined_plus", "{{ nope + 'a' }}", {}),
    ("undefined_call", "{{ nope() }}", {}),
    ("undefined_iter", "{% for x in nope %}no{% else %}empty{% endfor %}", {}),
    ("none_attr_soft", "{{ none.x }}|{{ 'abc'[5] }}|{{ [1,2]['x'] }}|", {}),
    ("none_attr_chain", "{{ none.x.y }}", {}),
    ("none_not_iterable", "{% for t in none %}{% endfor %}", {}),
    # filters
    ("filters_text", "{{ '  hi  '|trim }}|{{ 'xxhixx'|trim('x') }}|{{ 'HeLLo'|lower }}|{{ 'hello world'|upper }}|{{ 'hello wORLD-foo(bar'|title }}|{{ 'hELLO'|capitalize }}|{{ 'Hello World'|replace('o', '0') }}|{{ 'aaa'|replace('a', 'b', 2) }}", {}),
    ("filters_unicode_case", "{{ 'ÉCOLE'|lower }} {{ 'straße'|upper }} {{ 'éa'|title }} {{ 'Ωμέγα'|upper }} {{ 'привет'|upper }} {{ '日本語'|upper }}", {}),
    ("filters_sort_min_max", "{{ [3,1,2]|sort }} {{ [3,1,2]|sort(reverse=true) }} {{ ['b','A','c']|sort }} {{ ['b','A','c']|sort(case_sensitive=true) }} {{ [1,2,3]|sum }} {{ [1,2,3]|min }} {{ [1,2,3]|max }} {{ ['a','B']|max }} {{ [[2, 'a'], [1, 'b']]|sort }}", {}),
    ("filters_attr_pipelines", "{{ items|map(attribute='n')|join(',') }} {{ items|selectattr('v')|map(attribute='n')|list }} {{ items|rejectattr('v')|list }} {{ items|selectattr('v', 'equalto', 1)|list }} {{ items|sort(attribute='n', reverse=true)|map(attribute='n')|join }} {{ items|map(attribute='v', default=0)|list }} {{ items|selectattr('v', 'defined')|list|length }}",
     {"items": [{"n": "x", "v": 2}, {"n": "y", "v": 1}, {"n": "z"}]}),
    ("filters_select", "{{ [1,2,3,4]|select('odd')|list }} {{ [1,2,3,4]|reject('even')|list }} {{ [0,1,'',none,'a']|select|list }} {{ ['a','b']|map('upper')|list }} {{ ['ab','cb']|map('replace','b','x')|list }} {{ [1,2,2,1,3]|unique|list }} {{ ['a','A','b']|unique|list }} {{ none|selectattr('x')|list }} {{ none|map('upper')|list }}", {}),
    ("filters_seq", "{{ {'b':1,'a':2}|items|list }} {{ {'b':1,'a':2}|dictsort }} {{ {'b':1,'a':2}|list }} {{ 'abc'|list }} {{ [1,2,3]|first }} {{ [1,2,3]|last }} {{ 'abc'|first }} {{ []|first }}|{{ [1,2,3]|reverse|list }} {{ 'abc'|reverse }}", {}),
    ("filters_convert", "{{ [1,2,3]|join }} {{ [1,2,3]|join(', ') }} {{ ['a',none,1]|join('-') }} {{ 42|string }} {{ 3.7|int }} {{ '42'|int }} {{ '4.9'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ '0x1A'|int(0, 16) }} {{ '3.5'|float }} {{ 'a'|float }} {{ -3|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.567|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(0,'floor') }} {{ 3|round }}", {}),
    ("filters_tojson", "{{ {'a': 'é', 'b': [1, 2.0, none, true], 'c': '<&>\\''}|tojson }} {{ [1,{'x':'y'}]|tojson(indent=2) }} {{ {}|tojson }} {{ []|tojson(indent=4) }} {{ 'a\\nb\\t\"c\"\\\\'|tojson }} {{ {'b':1,'a':2}|tojson(sort_keys=true) }} {{ 'é'|tojson(true) }} {{ {'a': 1}|tojson(separators=(',', ':')) }} {{ 1e20|tojson }} {{ '😀'|tojson(ensure_ascii=true) }}", {}),
    ("filters_tojson_generator", "{{ [1,2]|map('string')|tojson }}", {}),
    ("filters_indent", "{{ 'line1\\nline2\\n\\nline4'|indent }}|{{ 'line1\\nline2'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}|{{ 'a\\n'|indent }}|", {}),
    ("filters_misc", "{{ 'Hello World foo'|wordcount }} {{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3,4,5]|batch(2, 'x')|list }} {{ [1,2,3,4,5]|slice(2)|list }} {{ 'x'|center(5) }}| {{ '%s-%d'|format('a', 3) }} {{ 'long text here'|truncate(9) }} {{ '<p>hi <b>x</b></p>'|striptags }}", {}),
    ("filters_default", "{{ (x|default([]))|length }} {{ none|default('d') }} {{ ''|default('d', true) }} {{ 0|d('zero', boolean=true) }}", {}),
    ("filters_safe_markup", "{{ 'x'|safe + '<b>' }} {{ '<a>'|escape }} {{ ('<i>'|safe + '&')|length }} {{ 'a'|safe ~ '<>' }} {{ ('<q>'|safe)|upper }}", {}),
    ("filters_sum_strings", "{{ ['a','b']|sum(start='') }}", {}),
    # str / list / dict methods
    ("methods_split_strip", "{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  a b  '.rsplit(None, 1) }} {{ 'xxhixx'.strip('x') }} {{ '  hi '.lstrip() }}| {{ 'hi  '.rstrip() }}| {{ 'a\\nb\\r\\nc'.splitlines() }}", {}),
    ("methods_search", "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith(('x','lo')) }} {{ 'Hello'.find('l') }} {{ 'Hello'.rfind('l') }} {{ 'Hello'.find('z') }} {{ 'Hello'.count('l') }} {{ 'Hello'.replace('l','L') }} {{ 'Hello'.replace('l','L',1) }} {{ 'hello world'.title() }} {{ 'ab'.join(['1','2','3']) }}", {}),
    ("methods_format", "{{ '{} and {}'.format(1, 'x') }} {{ '{1}{0}'.format('a','b') }} {{ '{name}!'.format(name='Bob') }} {{ '{:>5}|{:<5}|{:^5}'.format('a','b','c') }} {{ '{:.2f}'.format(3.14159) }} {{ '{:05d}'.format(42) }} {{ '{:,}'.format(1234567) }} {{ '{!r}'.format('x') }} {{ '{{}}'.format() }} {{ '{0:b} {0:x} {0:#x}'.format(10) }} {{ '{:*^9}'.format('mid') }} {{ '{0[1]}'.format(['a', 'b']) }}", {}),
    ("methods_predicates", "{{ 'abc'.isalpha() }} {{ '123'.isdigit() }} {{ '  '.isspace() }} {{ 'ABC'.isupper() }} {{ 'abc'.islower() }} {{ 'ab'.zfill(5) }} {{ 'a-b-c'.partition('-') }} {{ 'pre_x'.removeprefix('pre_') }} {{ [1,2,1].count(1) }} {{ [1,2,3].index(2) }}", {}),
    ("methods_list_append_refused", "{% set l = [1,2] %}{{ l.append(3) }}", {}),
    ("methods_dict_update_refused", "{{ {'a':1}.update({'b':2}) }}", {}),
    ("methods_unknown", "{{ 'x'.foo() }}", {}),
    # statements and scoping
    ("scope_if_leaks", "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    ("scope_for_does_not_leak", "{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}", {}),
    ("scope_per_iteration", "{% set x = 5 %}{% for i in range(3) %}{{ x }}{% set x = i %}{{ x }};{% endfor %}{{ x }}", {}),
    ("namespace", "{% set ns = namespace(c=0, items=[]) %}{% for i in range(5) %}{% set ns.c = ns.c + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.c }} {{ ns.items }}", {}),
    ("set_unpack", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set (c, d) = [3, 4] %}{{ c }}{{ d }}", {}),
    ("set_block", "{% set t %}inner {{ 1 + 1 }}{% endset %}[{{ t }}]{% set u | upper %}shout{% endset %}{{ u }}", {}),
    ("for_unpack_items", "{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }}{{ ',' if not loop.last }}{% endfor %}", {}),
    ("for_filtered", "{% for x in [1,2,3,4,5] if x is odd %}{{ loop.index }}:{{ x }}/{{ loop.length }} {% endfor %}", {}),
    ("for_loop_vars", "{% for x in 'abc' %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('x','y') }}{{ loop.depth }}|{% endfor %}", {}),
    ("for_break_continue", "{% for x in [1,2,3,4] %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 4 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_nested_loop_var", "{% for a in [1,2] %}{% for b in [3,4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }}|{% endfor %}", {}),
    ("for_else", "{% for x in [] %}x{% else %}none{% endfor %}{% for x in [1,2] if x > 5 %}x{% else %}filtered-all{% endfor %}", {}),
    ("for_recursive", "{% for item in [[1, [2, 3]], [4, []]] recursive %}{{ item[0] if item is sequence and item[0] is number else item }}{% if item is sequence and item|length > 1 and item[1] %}({{ loop(item[1]) }}){% endif %}{% endfor %}", {}),
    ("for_unpack_mismatch", "{% for a, b in [[1, 2], [3]] %}{{ a }}{% endfor %}", {}),
    ("if_elif_else", "{% if 1 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 0 %}b{% else %}c{% endif %}", {}),
    ("macro_defaults_kwargs", "{% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', 'Hi') }} {{ greet(name='C', punct='?') }}", {}),
    ("macro_varargs", "{% macro m(a) %}{{ a }}|{{ varargs }}|{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, x=4) }}", {}),
    ("macro_recursion", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}", {}),
    ("macro_late_binding", "{% set x = 5 %}{% macro show() %}{{ x }}{% endmacro %}{% set x = 6 %}{{ show() }}", {}),
    ("macro_namespace_mutation", "{% set ns = namespace(v=1) %}{% macro bump() %}{% set ns.v = ns.v + 1 %}{% endmacro %}{{ bump() }}{{ bump() }}{{ ns.v }}", {}),
    ("call_block", "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inside{% endcall %}{% macro lst(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) lst([1,2]) %}[{{ x }}]{% endcall %}", {}),
    ("filter_block", "{% filter upper %}hello {{ 'world' }}{% endfilter %}{% filter trim|title %}   multi word   {% endfilter %}", {}),
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}", {}),
    # tests
    ("tests_builtin", "{{ 1 is odd }} {{ 2 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ none is none }} {{ 'a' is string }} {{ 1 is number }} {{ 1.0 is float }} {{ 1 is integer }} {{ true is boolean }} {{ true is true }} {{ false is false }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is sequence }} {{ 1 is in [1] }} {{ 'x' is eq 'x' }} {{ 2 is gt 1 }} {{ range is callable }} {{ 'abc' is lower }} {{ true is number }} {{ true is integer }} {{ nope is undefined }} {{ nope is iterable }}", {}),
    ("tests_negated", "{{ x is not defined }} {{ none is not none }} {{ not x is defined }} {{ [] is not mapping }}", {}),
    # globals
    ("globals", "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }} {{ namespace(a=1).a }}", {}),
    ("globals_raise", "{{ raise_exception('boom: custom message') }}", {}),
    ("globals_strftime", "{{ strftime_now('%d %b %Y') }} {{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %j %U %W %w %y %I %p') }} {{ strftime_now('%-d %e|%c|%x %X') }}", {}),
    ("globals_range_too_big", "{% for i in range(1000000) %}{% endfor %}", {}),
]

# A weather tool and a conversation that calls it, in the shapes the templates expect.
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city name, e.g. Paris"}},
                   "required": ["city"]}}}


def tool_conversation(arguments):
    return [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "{\"temp_c\": 21}"},
        {"role": "assistant", "content": "It is 21 °C in Paris."},
        {"role": "user", "content": "Thanks! And tomorrow?"},
    ]


THINKING_HISTORY = [
    {"role": "user", "content": "2+2?"},
    {"role": "assistant", "content": "<think>\nAdd them.\n</think>\n\n4"},
    {"role": "user", "content": "3+3?"},
]

# (name, fixture template, builtin family expected to agree or None, messages, tools, add_generation_prompt)
CONVERSATIONS = [
    ("qwen25_tool_calls", "Qwen-Qwen2.5-7B-Instruct", "qwen2.5", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("qwen3_tool_calls", "qwen3-0.6b", "qwen3", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("qwen3_thinking_history", "qwen3-0.6b", "qwen3", THINKING_HISTORY, None, True),
    ("qwq_tool_calls", "qwen-qwq-32b", "qwq", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("qwq_thinking_history", "qwen-qwq-32b", "qwq", THINKING_HISTORY, None, True),
    ("llama31_tool_calls", "meta-llama-Llama-3.1-8B-Instruct", "llama3.1", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("llama32_tool_calls", "meta-llama-Llama-3.2-3B-Instruct", "llama3.2", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], False),
    ("nemo_tool_calls", "mistralai-Mistral-Nemo-Instruct-2407", "mistral-v3-tekken", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("large2407_tool_calls", "llamacpp-test-mistral-large-instruct-2407", "mistral-v3", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("kimi_tool_calls", "kimi-k2-instruct", "kimi-k2", tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("deepseek_r1_distill_tool_calls", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", None,
     tool_conversation("{\"city\": \"Paris\"}"), None, True),
    ("deepseek_r1_distill_thinking_history", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1", THINKING_HISTORY, None, True),
    ("deepseek_v31_history", "deepseek-v3.1", "deepseek-v3.1", THINKING_HISTORY, None, True),
    ("hermes2pro_tools", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", None, tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("command_r_plus_tools", "CohereForAI-c4ai-command-r-plus-tool_use", None, tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("command_r7b_tools", "CohereForAI-c4ai-command-r7b-12-2024-tool_use", None, tool_conversation({"city": "Paris"}), [WEATHER_TOOL], True),
    ("functionary_v32_tools", "meetkai-functionary-medium-v3.2", None, tool_conversation("{\"city\": \"Paris\"}"), [WEATHER_TOOL], True),
    ("gemma3_parts_content", "gemma-3", "gemma",
     [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
      {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe it."}]}], None, True),
    ("granite_tools", "llamacpp-test-granite-3.0-8b-instruct", "granite", [{"role": "user", "content": "Weather in Paris?"}], [WEATHER_TOOL, WEATHER_TOOL], True),
]

def main():
    env = make_env()
    features = []
    for name, source, variables in FEATURES:
        case = {"name": name, "template": source, "vars": variables}
        case.update(render(env, source, variables))
        features.append(case)
    with open(os.path.join(HERE, "jinja_features.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "generate_goldens.py with Python jinja2 " + __import__("jinja2").__version__,
                   "cases": features}, f, ensure_ascii=False, indent=1)
        f.write("\n")

    conversations = []
    for name, stem, family, messages, tools, gen in CONVERSATIONS:
        meta = json.load(open(os.path.join(FIXTURES, stem + ".json"), encoding="utf-8"))
        source = open(os.path.join(FIXTURES, stem + ".jinja"), encoding="utf-8").read()
        variables = {"messages": messages, "tools": tools, "documents": None, "add_generation_prompt": gen}
        for key in ("bos_token", "eos_token"):
            if meta[key] is not None:
                variables[key] = meta[key]
        case = {"name": name, "template": stem, "builtin": family, "messages": messages, "tools": tools,
                "add_generation_prompt": gen}
        case.update(render(env, source, variables))
        conversations.append(case)
    with open(os.path.join(HERE, "tool_conversations.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "generate_goldens.py with Python jinja2 " + __import__("jinja2").__version__,
                   "note": "templates are the fixtures of the same name; bos/eos as in their JSON",
                   "cases": conversations}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
