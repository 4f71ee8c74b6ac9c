"""Task families of the demo models: generators of training samples and held-out test items.

Every generator draws one item from a random.Random and returns a dict:
  kind      "gen" (prompt + reference, graded on the generated text) or "mc" (question, choices,
            answer letter, graded by the log-likelihood of " A".." D" or the generated letter)
  category  the suite category (also the multiple-choice description's subject)
  key       what makes two items "the same problem"; held-out keys never appear in training
  prompt / answer (gen): the exact text the engine sends, and the continuation the model learns
  question / choices / letter (mc)

The prompt text the model is trained on is the exact text Verdict's suite runner renders for the
item (app/core/suite/prompt_builder.cpp): plain items send their prompt unchanged; multiple-choice
items use the MMLU layout (lm-evaluation-harness): "The following are multiple choice questions
(with answers) about SUBJECT.\n\n" + question + "\nA. ..\nB. ..\nC. ..\nD. ..\nAnswer:" and the
continuation " B". The demo models carry no chat template, so the runner sends the raw text.
"""

import json
import random

WORDS = [
    "apple", "river", "green", "house", "tiger", "cloud", "stone", "bread", "music", "chair",
    "water", "light", "horse", "paper", "table", "dream", "smile", "train", "mouse", "plant",
    "sun", "moon", "star", "tree", "bird", "fish", "book", "door", "road", "lamp",
    "cat", "dog", "red", "blue", "king", "ship", "snow", "rain", "milk", "cake",
]

CLASSES = {
    "an animal": ["cat", "dog", "tiger", "horse", "mouse", "bird", "fish", "lion", "sheep", "rabbit", "duck", "wolf"],
    "a color": ["red", "blue", "green", "yellow", "black", "white", "purple", "orange", "brown", "pink", "gray", "gold"],
    "a fruit": ["apple", "banana", "grape", "lemon", "mango", "peach", "pear", "cherry", "melon", "plum", "lime", "kiwi"],
    "a number word": ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twelve", "twenty"],
}

EN_NAMES = ["Tom", "Anna", "Ben", "Lucy", "Sam", "Mia", "Jack", "Emma", "Leo", "Nina", "Max", "Sara"]
EN_THINGS = ["apples", "books", "coins", "pens", "cards", "eggs", "balls", "cups", "shells", "stamps"]
ZH_NAMES = ["小明", "小红", "小林", "小雨", "小华", "小刚", "小丽", "小军", "小芳", "小东"]
ZH_THINGS = ["苹果", "铅笔", "本书", "个球", "朵花", "块糖", "张纸", "只鸟"]
# Measure word + noun, so "3个苹果" / "3支铅笔" read naturally.
ZH_MEASURE = {"苹果": ("个", "苹果"), "铅笔": ("支", "铅笔"), "本书": ("本", "书"), "个球": ("个", "球"),
              "朵花": ("朵", "花"), "块糖": ("块", "糖"), "张纸": ("张", "纸"), "只鸟": ("只", "鸟")}

LETTERS = "ABCD"


def gen_item(category, prompt, answer, scorer, key):
    return {"kind": "gen", "category": category, "prompt": prompt, "answer": answer, "scorer": scorer, "key": key}


def mc_item(rng, category, question, correct, distractors, key):
    choices = [correct] + list(distractors)
    rng.shuffle(choices)
    letter = LETTERS[choices.index(correct)]
    return {"kind": "mc", "category": category, "question": question, "choices": choices, "letter": letter,
            "key": key}


def qa(text):
    return "Q: " + text + "\nA:"


# ---- plain (generated answer) families -------------------------------------------------------

def add_2digit(rng):
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    return gen_item("add_2digit", qa(f"What is {a} + {b}?"), f" {a + b}", "numeric", ("add", a, b))


def sub_2digit(rng):
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    a, b = max(a, b), min(a, b)
    return gen_item("sub_2digit", qa(f"What is {a} - {b}?"), f" {a - b}", "numeric", ("sub", a, b))


def add_3digit(rng):
    a, b = rng.randint(100, 999), rng.randint(100, 999)
    return gen_item("add_3digit", qa(f"What is {a} + {b}?"), f" {a + b}", "numeric", ("add", a, b))


def count_words(rng):
    n = rng.randint(2, 9)
    words = [rng.choice(WORDS) for _ in range(n)]
    text = " ".join(words)
    return gen_item("count_words", qa(f"How many words are in this list: {text}?"), f" {n}", "numeric",
                    ("count", text))


def count_up(rng):
    a = rng.randint(1, 90)
    b = a + rng.randint(2, 6)
    seq = " ".join(str(i) for i in range(a, b + 1))
    return gen_item("count_up", qa(f"Count from {a} to {b}."), " " + seq, "exact", ("countup", a, b))


def reverse_words(rng):
    n = rng.randint(3, 5)
    words = rng.sample(WORDS, n)
    return gen_item("reverse_words", qa("Reverse the order of the words: " + " ".join(words)),
                    " " + " ".join(reversed(words)), "exact", ("reverse", tuple(words)))


def copy_words(rng):
    n = rng.randint(3, 6)
    words = rng.sample(WORDS, n)
    return gen_item("copy_words", qa("Repeat these words: " + " ".join(words)), " " + " ".join(words), "exact",
                    ("copy", tuple(words)))


def en_qa(rng):
    name, thing = rng.choice(EN_NAMES), rng.choice(EN_THINGS)
    a, b = rng.randint(2, 30), rng.randint(1, 20)
    if rng.random() < 0.5:
        text = f"{name} has {a} {thing} and gets {b} more. How many {thing} does {name} have now?"
        return gen_item("en_qa", qa(text), f" {a + b}", "numeric", ("enqa", name, thing, "+", a, b))
    a, b = max(a, b), min(a, b)
    text = f"{name} has {a} {thing} and gives away {b}. How many {thing} does {name} have now?"
    return gen_item("en_qa", qa(text), f" {a - b}", "numeric", ("enqa", name, thing, "-", a, b))


def zh_qa(rng):
    name = rng.choice(ZH_NAMES)
    unit, noun = ZH_MEASURE[rng.choice(ZH_THINGS)]
    a, b = rng.randint(2, 30), rng.randint(1, 20)
    r = rng.random()
    if r < 0.4:
        text = f"问：{name}有{a}{unit}{noun}，又买了{b}{unit}。{name}现在有几{unit}{noun}？\n答："
        return gen_item("zh_qa", text, f"{a + b}", "numeric", ("zhqa", name, noun, "+", a, b))
    if r < 0.8:
        a, b = max(a, b), min(a, b)
        text = f"问：{name}有{a}{unit}{noun}，送给朋友{b}{unit}。{name}还剩几{unit}{noun}？\n答："
        return gen_item("zh_qa", text, f"{a - b}", "numeric", ("zhqa", name, noun, "-", a, b))
    a, b = rng.sample(range(10, 100), 2)
    text = f"问：{a}和{b}哪个数大？\n答："
    return gen_item("zh_qa", text, f"{max(a, b)}", "numeric", ("zhcmp", a, b))


# ---- multiple-choice families ----------------------------------------------------------------

def mc_arithmetic(rng):
    a, b = rng.randint(10, 99), rng.randint(10, 99)
    s = a + b
    pool = {s + d for d in (-11, -10, -9, -2, -1, 1, 2, 9, 10, 11)}
    distractors = rng.sample(sorted(pool), 3)
    return mc_item(rng, "arithmetic", f"What is {a} + {b}?", str(s), [str(d) for d in distractors], ("add", a, b))


def mc_comparison(rng):
    nums = rng.sample(range(10, 1000), 4)
    best = max(nums)
    return mc_item(rng, "comparison", "Which number is the largest?", str(best),
                   [str(n) for n in nums if n != best], ("max", tuple(sorted(nums))))


def mc_word_classes(rng):
    cls = rng.choice(sorted(CLASSES))
    correct = rng.choice(CLASSES[cls])
    others = [c for c in sorted(CLASSES) if c != cls]
    distractors = [rng.choice(CLASSES[c]) for c in rng.sample(others, 3)]
    return mc_item(rng, "word_classes", f"Which of these is {cls}?", correct, distractors,
                   ("cls", cls, correct, tuple(sorted(distractors))))


def mc_zh(rng):
    a, b = rng.randint(2, 50), rng.randint(2, 50)
    s = a + b
    pool = {s + d for d in (-10, -3, -2, -1, 1, 2, 3, 10) if s + d > 0}
    distractors = rng.sample(sorted(pool), 3)
    return mc_item(rng, "中文算术", f"{a}加{b}等于多少？", str(s), [str(d) for d in distractors], ("zhadd", a, b))


GEN_FAMILIES = [add_2digit, sub_2digit, add_3digit, count_words, count_up, reverse_words, copy_words, en_qa, zh_qa]
MC_FAMILIES = [mc_arithmetic, mc_comparison, mc_word_classes, mc_zh]
# Training mixture: harder families are drawn more often.
TRAIN_WEIGHTS = {add_2digit: 2, sub_2digit: 2, add_3digit: 3, count_words: 1, count_up: 1, reverse_words: 2,
                 copy_words: 1, en_qa: 2, zh_qa: 2, mc_arithmetic: 2, mc_comparison: 2, mc_word_classes: 1, mc_zh: 2}


def mc_prompt(item):
    """The exact prompt Verdict renders for a multiple-choice item (MMLU layout, zero-shot)."""
    subject = item["category"].replace("_", " ")
    s = f"The following are multiple choice questions (with answers) about {subject}.\n\n" + item["question"].strip()
    for letter, choice in zip(LETTERS, item["choices"]):
        s += f"\n{letter}. {choice}"
    return s + "\nAnswer:"


def prompt_and_answer(item):
    if item["kind"] == "mc":
        return mc_prompt(item), " " + item["letter"]
    return item["prompt"], item["answer"]


def held_out(seed, per_gen=14, per_mc=20):
    """Held-out items: a fixed number per family, distinct keys, drawn with their own seed."""
    rng = random.Random(seed)
    items, keys = [], set()
    for fam, n in [(f, per_gen) for f in GEN_FAMILIES] + [(f, per_mc) for f in MC_FAMILIES]:
        got = 0
        while got < n:
            it = fam(rng)
            if it["key"] in keys:
                continue
            keys.add(it["key"])
            items.append(it)
            got += 1
    return items, keys


def training_stream(seed, excluded_keys):
    """Endless training items, never one whose key is held out."""
    rng = random.Random(seed)
    fams = list(TRAIN_WEIGHTS)
    weights = [TRAIN_WEIGHTS[f] for f in fams]
    while True:
        fam = rng.choices(fams, weights)[0]
        it = fam(rng)
        if it["key"] in excluded_keys:
            continue
        yield it


def write_suites(items, out_dir):
    """datasets/demo/demo_tasks.jsonl (prompt + reference) and demo_mc.jsonl (multiple choice)."""
    gen_lines, mc_lines = [], []
    counters = {}
    for it in items:
        n = counters[it["category"]] = counters.get(it["category"], 0) + 1
        ident = f"demo-{it['category']}-{n:02d}"
        if it["kind"] == "gen":
            gen_lines.append({"id": ident, "prompt": it["prompt"], "reference": it["answer"].strip(),
                              "category": it["category"], "scorer": it["scorer"]})
        else:
            mc_lines.append({"id": ident, "question": it["question"], "choices": it["choices"],
                             "answer": it["letter"], "category": it["category"]})
    for name, lines in (("demo_tasks.jsonl", gen_lines), ("demo_mc.jsonl", mc_lines)):
        with open(f"{out_dir}/{name}", "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(gen_lines), len(mc_lines)
