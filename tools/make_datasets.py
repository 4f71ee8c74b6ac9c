#!/usr/bin/env python3
"""Generate Verdict's bundled test suites (datasets/*.jsonl) deterministically.

Every item is written by this script from templates and public facts; nothing is copied from
an existing benchmark. Run it from the repository root (Debian's python3, standard library only):

    python3 tools/make_datasets.py            # rewrite datasets/
    python3 tools/make_datasets.py --check    # exit 1 if datasets/ differs from what it would write

Code-completion items are verified while generating: each canonical solution is run against its
own tests with python3, and generation fails if one does not pass.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets")
LETTERS = "ABCDE"


def with_commas(n):
    return f"{n:,}"


def dump(records):
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


# ---------------------------------------------------------------- arithmetic (prompt shape)
def arithmetic():
    rng = random.Random(101)
    items = []
    ops = ["add", "sub", "mul", "div", "mixed", "negative"]
    for i in range(120):
        kind = ops[i % len(ops)]
        if kind == "add":
            a, b = rng.randint(100, 9999), rng.randint(100, 9999)
            expr, value = f"{a} + {b}", a + b
        elif kind == "sub":
            a, b = rng.randint(100, 9999), rng.randint(100, 9999)
            expr, value = f"{a} - {b}", a - b
        elif kind == "mul":
            a, b = rng.randint(12, 99), rng.randint(12, 999)
            expr, value = f"{a} × {b}", a * b
        elif kind == "div":
            b, q = rng.randint(3, 49), rng.randint(12, 999)
            expr, value = f"{b * q} ÷ {b}", q
        elif kind == "mixed":
            a, b, c = rng.randint(2, 60), rng.randint(2, 60), rng.randint(2, 30)
            expr, value = f"({a} + {b}) × {c}", (a + b) * c
        else:
            a, b = rng.randint(10, 500), rng.randint(501, 2000)
            c = rng.randint(2, 9)
            expr, value = f"{a} - {b} × {c}", a - b * c
        items.append({
            "id": f"arith-{i + 1:03d}",
            "prompt": f"Compute {expr}. Reply with the number only.",
            "category": kind,
            "reference": str(value),
            "scorer": "numeric",
        })
    return items


# ---------------------------------------------------------------- word problems (GSM8K shape)
NAMES = [("Maya", "She"), ("Omar", "He"), ("Lena", "She"), ("Tariq", "He"), ("Ines", "She"), ("Kenji", "He"),
         ("Zoe", "She"), ("Mateo", "He"), ("Priya", "She"), ("Felix", "He")]


def word_problems():
    rng = random.Random(202)
    items = []
    for i in range(100):
        name, pron = NAMES[i % len(NAMES)]
        kind = i % 6
        if kind == 0:
            packs, per, give, use = rng.randint(3, 12), rng.randint(6, 24), rng.randint(2, 10), rng.randint(1, 8)
            total = packs * per
            left = total - give - use
            q = (f"{name} buys {packs} packs of stickers with {per} stickers in each pack. {pron} gives {give} stickers "
                 f"to a friend and uses {use} on a notebook. How many stickers does {name} have left?")
            sol = (f"{name} buys {packs} * {per} = <<{packs}*{per}={total}>>{total} stickers.\n"
                   f"After giving and using some, {total} - {give} - {use} = <<{total}-{give}-{use}={left}>>{left} are left.\n"
                   f"#### {left}")
        elif kind == 1:
            s1, h1, s2, h2 = rng.randint(40, 90), rng.randint(2, 5), rng.randint(40, 110), rng.randint(1, 4)
            d1, d2 = s1 * h1, s2 * h2
            q = (f"A bus travels {s1} km per hour for {h1} hours, then {s2} km per hour for {h2} hours. "
                 f"How many kilometres does it travel in total?")
            sol = (f"First part: {s1} * {h1} = <<{s1}*{h1}={d1}>>{d1} km.\nSecond part: {s2} * {h2} = <<{s2}*{h2}={d2}>>{d2} km.\n"
                   f"Total: {d1} + {d2} = <<{d1}+{d2}={d1 + d2}>>{d1 + d2} km.\n#### {d1 + d2}")
        elif kind == 2:
            wage, hours, weeks = rng.randint(15, 40), rng.randint(20, 40), rng.randint(4, 12)
            earned = wage * hours * weeks
            spend = rng.randint(earned // 5, earned // 2)
            left = earned - spend
            q = (f"{name} earns ${wage} per hour and works {hours} hours a week. After {weeks} weeks, {pron.lower()} "
                 f"spends ${with_commas(spend)} on a laptop. How many dollars does {name} have left?")
            sol = (f"Weekly pay: {wage} * {hours} = <<{wage}*{hours}={wage * hours}>>{wage * hours} dollars.\n"
                   f"Over {weeks} weeks: {wage * hours} * {weeks} = <<{wage * hours}*{weeks}={earned}>>{with_commas(earned)} dollars.\n"
                   f"Left: {earned} - {spend} = <<{earned}-{spend}={left}>>{with_commas(left)} dollars.\n#### {with_commas(left)}")
        elif kind == 3:
            classes, students = rng.randint(4, 12), rng.choice([20, 25, 30, 40])
            total = classes * students
            pct = rng.choice([p for p in (10, 20, 25, 40, 50, 60, 75) if total * p % 100 == 0])  # whole students
            join = total * pct // 100
            q = (f"A school has {classes} classes with {students} students in each class. {pct}% of the students join "
                 f"the chess club. How many students join the chess club?")
            sol = (f"Students: {classes} * {students} = <<{classes}*{students}={total}>>{total}.\n"
                   f"Joining: {total} * {pct} / 100 = <<{total}*{pct}/100={join}>>{join}.\n#### {join}")
        elif kind == 4:
            t0, rise, fall = rng.randint(-10, 8), rng.randint(2, 12), rng.randint(10, 25)
            noon = t0 + rise
            night = noon - fall
            q = (f"The temperature at dawn was {t0} degrees Celsius. It rose by {rise} degrees by noon and then fell by "
                 f"{fall} degrees by midnight. What was the temperature at midnight, in degrees Celsius?")
            sol = (f"At noon: {t0} + {rise} = <<{t0}+{rise}={noon}>>{noon} degrees.\n"
                   f"At midnight: {noon} - {fall} = <<{noon}-{fall}={night}>>{night} degrees.\n#### {night}")
        else:
            cups, batch = rng.randint(2, 5), rng.choice([12, 16, 20, 24])
            mult = rng.randint(2, 6)
            cookies = batch * mult
            need = cups * mult
            q = (f"A recipe uses {cups} cups of flour for {batch} cookies. {name} wants to bake {cookies} cookies. "
                 f"How many cups of flour does {pron.lower()} need?")
            sol = (f"{cookies} cookies is {cookies} / {batch} = <<{cookies}/{batch}={mult}>>{mult} batches.\n"
                   f"Flour: {mult} * {cups} = <<{mult}*{cups}={need}>>{need} cups.\n#### {need}")
        items.append({"id": f"wp-{i + 1:03d}", "question": q, "answer": sol})
    return items


# ---------------------------------------------------------------- Chinese reading comprehension (mc)
ZH_NAMES = ["小明", "小红", "李华", "王芳", "张伟", "刘洋", "陈静", "赵磊"]
ZH_FRIENDS = ["同学小林", "表哥", "邻居阿姨", "好朋友小雨", "爷爷", "妹妹"]
ZH_PLACES = [("图书馆", "看书"), ("公园", "放风筝"), ("博物馆", "参观恐龙化石展"), ("超市", "买晚饭的食材"),
             ("体育馆", "打羽毛球"), ("动物园", "看大熊猫")]
ZH_TRANSPORT = ["骑自行车", "坐公交车", "步行", "坐地铁"]
ZH_TIMES = ["早上八点", "上午十点", "下午两点", "下午三点半"]
ZH_DAYS = ["星期六", "星期天", "国庆节那天", "暑假的第一天"]
ZH_FRUITS = ["苹果", "橘子", "桃子", "梨"]
ZH_RELATIVES = ["妈妈", "奶奶", "外公", "弟弟"]
ZH_HOURS = ["一", "两", "三", "四"]


def zh_reading():
    rng = random.Random(303)
    items = []
    for p in range(16):
        name = ZH_NAMES[p % len(ZH_NAMES)]
        friend = rng.choice(ZH_FRIENDS)
        place, activity = rng.choice(ZH_PLACES)
        transport = rng.choice(ZH_TRANSPORT)
        time = rng.choice(ZH_TIMES)
        day = rng.choice(ZH_DAYS)
        fruit = rng.choice(ZH_FRUITS)
        relative = rng.choice(ZH_RELATIVES)
        hours = rng.choice(ZH_HOURS)
        count = rng.randint(3, 9)
        passage = (f"{day}{time}，{name}和{friend}一起{transport}去{place}{activity}。他们在那里待了{hours}个小时，"
                   f"玩得很开心。回家的路上，{name}在水果店买了{count}个{fruit}，把它们送给了{relative}。"
                   f"{relative}笑着说：“谢谢你，真懂事！”")
        questions = [
            ("谁和" + name + "一起去了" + place + "？", friend, ZH_FRIENDS),
            (name + "是怎么去" + place + "的？", transport, ZH_TRANSPORT),
            ("他们在" + place + "待了多长时间？", hours + "个小时", [h + "个小时" for h in ZH_HOURS]),
            (name + "把" + fruit + "送给了谁？", relative, ZH_RELATIVES),
            (name + "是什么时候出发的？", day + time, [d + t for d in ZH_DAYS for t in ZH_TIMES]),
        ]
        for qi, (question, answer, pool) in enumerate(questions):
            distractors = [x for x in pool if x != answer]
            rng.shuffle(distractors)
            choices = distractors[:3] + [answer]
            rng.shuffle(choices)
            items.append({
                "id": f"zh-{p + 1:02d}-{qi + 1}",
                "question": f"阅读短文，回答问题。\n\n{passage}\n\n问题：{question}",
                "choices": choices,
                "answer": LETTERS[choices.index(answer)],
                "category": "中文阅读理解",
            })
    return items


# ---------------------------------------------------------------- instruction following (promptfoo, regex)
IF_TOPICS = ["the ocean", "a rainy morning", "electric cars", "chess", "honeybees", "the moon", "bread baking", "mountain hiking"]
IF_TEMPLATES = [
    ("three_lowercase_words", "In exactly three lowercase words, describe {t}. Output only those three words.",
     r"^\s*[a-z]+ [a-z]+ [a-z]+[.!]?\s*$"),
    ("single_integer", "Rate {t} from 1 to 10. Output only the integer.", r"^\s*([1-9]|10)\s*$"),
    ("ends_with_done", "Write one sentence about {t} and end your reply with the word DONE.", r"DONE[.!]?\s*$"),
    ("all_capitals", "Describe {t} in one short sentence using only capital letters.", r"^[^a-z]+$"),
    ("iso_date", "Invent a plausible date for an event about {t}. Reply with the date only, formatted YYYY-MM-DD.",
     r"^\s*\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\s*$"),
    ("yes_or_no", "Is {t} mentioned in this instruction? Answer with Yes or No only.", r"^\s*(Yes|No)[.!]?\s*$"),
    ("numbered_list", "List three facts about {t} as a numbered list using the markers 1., 2. and 3.",
     r"(^|\n)\s*1\. [^\n]+\n\s*2\. [^\n]+\n\s*3\. \S"),
    ("json_keys", "Return a JSON object with exactly the keys \"topic\" and \"summary\" describing {t}. No other text.",
     r"^\s*\{[\s\S]*\"topic\"[\s\S]*\"summary\"[\s\S]*\}\s*$"),
]


def instruction_following():
    items = []
    n = 0
    for ti, topic in enumerate(IF_TOPICS):
        for name, template, pattern in IF_TEMPLATES:
            n += 1
            if n > 60:
                break
            items.append({
                "vars": {"prompt": template.format(t=topic)},
                "assert": [{"type": "regex", "value": pattern}],
                "metadata": {"id": f"if-{n:03d}", "category": name},
            })
    return items


# ---------------------------------------------------------------- multiple choice (mc)
CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Canada", "Ottawa"), ("Australia", "Canberra"),
            ("Brazil", "Brasília"), ("Egypt", "Cairo"), ("Kenya", "Nairobi"), ("India", "New Delhi"),
            ("Germany", "Berlin"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Mexico", "Mexico City"),
            ("Argentina", "Buenos Aires"), ("Norway", "Oslo"), ("Sweden", "Stockholm"), ("Turkey", "Ankara"),
            ("South Korea", "Seoul"), ("Thailand", "Bangkok"), ("Vietnam", "Hanoi"), ("Peru", "Lima"),
            ("Chile", "Santiago"), ("Nigeria", "Abuja"), ("Poland", "Warsaw"), ("Portugal", "Lisbon"),
            ("New Zealand", "Wellington")]
ELEMENTS = [("hydrogen", "H"), ("helium", "He"), ("carbon", "C"), ("nitrogen", "N"), ("oxygen", "O"),
            ("sodium", "Na"), ("magnesium", "Mg"), ("aluminium", "Al"), ("silicon", "Si"), ("phosphorus", "P"),
            ("sulfur", "S"), ("chlorine", "Cl"), ("potassium", "K"), ("calcium", "Ca"), ("iron", "Fe"),
            ("copper", "Cu"), ("zinc", "Zn"), ("silver", "Ag"), ("gold", "Au"), ("lead", "Pb")]
PLANETS = ["Mercury", "Venus", "Earth", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune"]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]


def mc_item(rng, ident, question, answer, pool, subject):
    distractors = sorted(set(x for x in pool if x != answer))
    rng.shuffle(distractors)
    choices = distractors[:3] + [answer]
    rng.shuffle(choices)
    return {"id": ident, "question": question, "choices": choices, "answer": LETTERS[choices.index(answer)], "subject": subject}


def multiple_choice():
    rng = random.Random(404)
    items = []
    for i, (country, capital) in enumerate(CAPITALS):
        items.append(mc_item(rng, f"mc-geo-{i + 1:02d}", f"What is the capital city of {country}?", capital,
                             [c for _, c in CAPITALS], "geography"))
    for i, (element, symbol) in enumerate(ELEMENTS):
        items.append(mc_item(rng, f"mc-chem-{i + 1:02d}", f"What is the chemical symbol for {element}?", symbol,
                             [s for _, s in ELEMENTS], "chemistry"))
    for i, planet in enumerate(PLANETS):
        items.append(mc_item(rng, f"mc-astro-{i + 1:02d}", f"Which planet is {ORDINALS[i]} in order from the Sun?", planet,
                             PLANETS, "astronomy"))
    units = [("metres", "centimetres", 100), ("kilometres", "metres", 1000), ("hours", "minutes", 60),
             ("minutes", "seconds", 60), ("kilograms", "grams", 1000), ("litres", "millilitres", 1000)]
    for i in range(30):
        big, small, factor = units[i % len(units)]
        x = rng.randint(2, 19)
        ans = x * factor
        pool = [str(ans), str(ans // 10), str(ans * 10), str(ans + factor), str(ans - factor), str(x * (factor + 1))]
        items.append(mc_item(rng, f"mc-unit-{i + 1:02d}", f"How many {small} are there in {x} {big}?", str(ans), pool,
                             "units"))
    for i in range(37):
        a, b, c = rng.randint(3, 19), rng.randint(2, 12), rng.randint(1, 40)
        ans = a * a - b * c
        pool = [str(ans), str(a * a + b * c), str(2 * a - b * c), str(ans + 1), str(ans - 2), str(a * b - c)]
        items.append(mc_item(rng, f"mc-math-{i + 1:02d}", f"What is the value of {a}² − {b} × {c}?", str(ans), pool,
                             "mathematics"))
    return items


# ---------------------------------------------------------------- code completion (HumanEval shape)
def code_tasks():
    """(name, signature+docstring, body, [test inputs as python expressions]) per task."""
    tasks = []
    for k in (2, 3, 5, 7, 11):
        tasks.append((f"sum_divisible_by_{k}",
                      f"def sum_divisible_by_{k}(nums: list) -> int:\n    \"\"\"Return the sum of the numbers in nums that are divisible by {k}.\n    >>> sum_divisible_by_{k}([{k}, 1, {2 * k}])\n    {3 * k}\n    \"\"\"\n",
                      f"    return sum(n for n in nums if n % {k} == 0)\n",
                      [f"[{k}, 1, {2 * k}]", "[]", f"[-{k}, {k + 1}, {k * 5}, 0]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 22, 33]"]))
    for n in (3, 4, 5, 6, 7):
        tasks.append((f"count_words_longer_than_{n}",
                      f"def count_words_longer_than_{n}(text: str) -> int:\n    \"\"\"Count the whitespace-separated words of text with more than {n} characters.\"\"\"\n",
                      f"    return sum(1 for w in text.split() if len(w) > {n})\n",
                      ["'the quick brown fox jumps over the lazy dog'", "''", "'extraordinary   things happen   everywhere'", "'a bb ccc dddd eeeee ffffff ggggggg hhhhhhhh'"]))
    for k in (2, 3, 4, 5, 10):
        tasks.append((f"scale_and_clip_{k}",
                      f"def scale_and_clip_{k}(values: list) -> list:\n    \"\"\"Multiply each value by {k}, then clip the result to the range [-100, 100].\"\"\"\n",
                      f"    return [max(-100, min(100, v * {k})) for v in values]\n",
                      ["[1, 20, -30, 60]", "[]", "[0, 49, -51, 100]", "[7]"]))
    for k in (2, 3, 4, 5, 6):
        tasks.append((f"every_{k}th",
                      f"def every_{k}th(items: list) -> list:\n    \"\"\"Return every {k}th element of items, starting with the {k}th (1-based).\"\"\"\n",
                      f"    return items[{k - 1}::{k}]\n",
                      ["list(range(1, 21))", "[]", "['a', 'b', 'c', 'd', 'e', 'f', 'g']", "[9]"]))
    for k in (1, 2, 3, 4, 5):
        tasks.append((f"rotate_left_{k}",
                      f"def rotate_left_{k}(items: list) -> list:\n    \"\"\"Rotate items left by {k} positions (wrapping around); an empty list stays empty.\"\"\"\n",
                      f"    if not items:\n        return []\n    s = {k} % len(items)\n    return items[s:] + items[:s]\n",
                      ["[1, 2, 3, 4, 5, 6]", "[]", "[1, 2]", "['x', 'y', 'z']"]))
    for k in (1, 3, 5, 13, 25):
        tasks.append((f"caesar_shift_{k}",
                      f"def caesar_shift_{k}(text: str) -> str:\n    \"\"\"Shift every ASCII letter of text {k} places forward in the alphabet, wrapping\n    around and keeping its case; other characters are unchanged.\"\"\"\n",
                      f"    out = []\n    for ch in text:\n        if 'a' <= ch <= 'z':\n            out.append(chr((ord(ch) - 97 + {k}) % 26 + 97))\n        elif 'A' <= ch <= 'Z':\n            out.append(chr((ord(ch) - 65 + {k}) % 26 + 65))\n        else:\n            out.append(ch)\n    return ''.join(out)\n",
                      ["'Hello, World!'", "''", "'xyz ABC 123'", "'Zebra'"]))
    for m in (7, 9, 10, 11, 13):
        tasks.append((f"digit_product_mod_{m}",
                      f"def digit_product_mod_{m}(n: int) -> int:\n    \"\"\"Return the product of the decimal digits of the non-negative integer n, modulo {m}.\"\"\"\n",
                      f"    p = 1\n    for d in str(n):\n        p *= int(d)\n    return p % {m}\n",
                      ["0", "7", "1234", "987654321"]))
    for t in (10, 15, 20, 50, 100):
        tasks.append((f"running_sum_reset_{t}",
                      f"def running_sum_reset_{t}(nums: list) -> list:\n    \"\"\"Running sum of nums that restarts from 0 after any sum greater than {t}\n    (the sum that went over is still reported).\"\"\"\n",
                      f"    out, s = [], 0\n    for n in nums:\n        s += n\n        out.append(s)\n        if s > {t}:\n            s = 0\n    return out\n",
                      ["[5, 5, 5, 5, 5, 5]", "[]", "[30, 1, 2, 90, 3]", "[1] * 12"]))
    for ch in ("a", "b", "x", "0", "1"):
        tasks.append((f"longest_run_of_{ch}",
                      f"def longest_run_of_{ch}(s: str) -> int:\n    \"\"\"Length of the longest run of consecutive '{ch}' characters in s.\"\"\"\n",
                      f"    best = cur = 0\n    for c in s:\n        cur = cur + 1 if c == '{ch}' else 0\n        best = max(best, cur)\n    return best\n",
                      [f"'{ch}{ch}z{ch}{ch}{ch}y{ch}'", "''", "'zzz'", f"'{ch * 5}'"]))
    for k in (2, 3, 4, 8, 10):
        tasks.append((f"pad_to_multiple_of_{k}",
                      f"def pad_to_multiple_of_{k}(text: str) -> str:\n    \"\"\"Append '.' characters to text until its length is a multiple of {k}.\"\"\"\n",
                      f"    return text + '.' * (-len(text) % {k})\n",
                      ["'abc'", "''", "'abcdefgh'", "'hello world'"]))
    return tasks


VERIFY_CODE = True  # off for --check: the unit tests run every canonical solution anyway


def code_completion():
    items = []
    for i, (name, head, body, inputs) in enumerate(code_tasks()):
        env = {}
        exec(head + body, env)  # the canonical solution computes the expected values
        fn = env[name]
        lines = ["def check(candidate):"]
        for expr in inputs:
            expected = fn(eval(expr))
            lines.append(f"    assert candidate({expr}) == {expected!r}")
        items.append({"task_id": f"VerdictCode/{i}", "prompt": head, "canonical_solution": body,
                      "test": "\n".join(lines) + "\n", "entry_point": name})
    if VERIFY_CODE:
        verify_code(items)
    return items


def verify_code(items):
    for it in items:
        program = it["prompt"] + it["canonical_solution"] + "\n\n" + it["test"] + f"\n\ncheck({it['entry_point']})\n"
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(program)
            path = f.name
        try:
            r = subprocess.run([sys.executable, "-I", path], capture_output=True, text=True, timeout=30)
        finally:
            os.unlink(path)
        if r.returncode != 0:
            raise SystemExit(f"{it['task_id']}: canonical solution fails:\n{r.stderr}")


# ---------------------------------------------------------------- sentiment (classification)
def sentiment_labels():
    """Short product reviews, graded by the label scorer (positive / negative / neutral)."""
    rng = random.Random(707)
    things = ["the headphones", "this kettle", "the laptop bag", "the desk lamp", "this phone case",
              "the running shoes", "the coffee grinder", "this backpack", "the keyboard", "the blender"]
    positive = ["{t} works perfectly and arrived a day early.", "I love {t}; it is sturdy and looks great.",
                "{T} exceeded my expectations, I would buy it again.", "Excellent value: {t} does everything I need.",
                "{T} is comfortable, quiet and well made."]
    negative = ["{T} broke after two days and support never replied.", "I regret buying {t}; it stopped working at once.",
                "{T} is flimsy and far too loud.", "Terrible: {t} arrived scratched and the refund took weeks.",
                "{T} overheats and the buttons stick."]
    neutral = ["{T} arrived on Tuesday in a brown box.", "{T} comes in black and grey.",
               "I bought {t} for my office last month.", "{T} has a two-year warranty and weighs 400 grams.",
               "The manual of {t} is printed in four languages."]
    items = []
    for i in range(60):
        label = ["positive", "negative", "neutral"][i % 3]
        pool = {"positive": positive, "negative": negative, "neutral": neutral}[label]
        t = rng.choice(things)
        review = rng.choice(pool).format(t=t, T=t[0].upper() + t[1:])
        items.append({
            "id": f"sent-{i + 1:03d}",
            "category": label,
            "prompt": "Classify the sentiment of this review as positive, negative or neutral. "
                      "Answer with one word.\n\nReview: " + review,
            "reference": label,
            "scorer": {"name": "label", "params": {"labels": ["positive", "negative", "neutral"]}},
        })
    return items


# ---------------------------------------------------------------- conversation recall (multi-turn)
def conversation_recall():
    """A fact in the first turn, small requests, then the fact asked for (turn_references)."""
    rng = random.Random(808)
    facts = [("My favourite colour is teal.", "What is my favourite colour?", "teal"),
             ("My cat is called Pixel.", "What is my cat called?", "Pixel"),
             ("I was born in Lisbon.", "Where was I born?", "Lisbon"),
             ("My locker number is 417.", "What is my locker number?", "417"),
             ("My sister's name is Ingrid.", "What is my sister's name?", "Ingrid"),
             ("I drive a green tractor.", "What do I drive?", "tractor"),
             ("My flight leaves at gate B12.", "Which gate does my flight leave from?", "B12"),
             ("I am allergic to peanuts.", "What am I allergic to?", "peanuts")]
    fillers = ["Name a fruit that is yellow.", "What is 7 plus 5?", "Give me a synonym of happy.",
               "How many legs does a spider have?", "Name a planet.", "Spell the word cat backwards.",
               "What is the opposite of cold?", "Name a month with 30 days.", "What is 9 times 3?",
               "Name an animal that lives in the sea."]
    items = []
    for i in range(50):
        fact, question, answer = facts[i % len(facts)]
        gap = 1 + i % 8  # small requests between the fact and the question
        turns = [fact] + [rng.choice(fillers) for _ in range(gap)] + [question + " Answer in a few words."]
        refs = [None] * len(turns)
        refs[-1] = answer
        items.append({"id": f"recall-{i + 1:03d}", "category": f"after {gap} turn" + ("s" if gap > 1 else ""), "turns": turns,
                      "turn_references": refs})
    return items


SUITES = {
    "arithmetic.jsonl": arithmetic,
    "word_problems.jsonl": word_problems,
    "zh_reading.jsonl": zh_reading,
    "instruction_following.jsonl": instruction_following,
    "multiple_choice.jsonl": multiple_choice,
    "code_completion.jsonl": code_completion,
    "sentiment_labels.jsonl": sentiment_labels,
    "conversation_recall.jsonl": conversation_recall,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with datasets/ instead of writing")
    args = ap.parse_args()
    global VERIFY_CODE
    VERIFY_CODE = not args.check
    os.makedirs(OUT_DIR, exist_ok=True)
    stale = []
    for fname, make in SUITES.items():
        records = make()
        assert 50 <= len(records) <= 200, (fname, len(records))
        text = dump(records)
        path = os.path.join(OUT_DIR, fname)
        if args.check:
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != text:
                stale.append(fname)
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"{fname}: {len(records)} items")
    if stale:
        print("out of date: " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
