"""The demo models' SentencePiece-style tokenizer (GGUF tokenizer.ggml.model = "llama").

Vocabulary: <unk>, <s>, </s>, the 256 byte-fallback tokens <0x00>..<0xFF>, every character of the
corpus (except the isolated ones below, which stay byte tokens when they are not in the list), then
the pieces learned by byte-pair merging, in merge order.

Encoding is llama.cpp's SPM algorithm (llm_tokenizer_spm_session, as engine/tokenizer/spm_tokenizer.cpp
implements it): spaces become U+2581 "▁", one "▁" is put in front of the text, and adjacent
symbols whose concatenation is a vocabulary piece merge, the highest score first, ties to the
leftmost pair; a symbol that is no piece becomes its UTF-8 bytes' tokens. Learned pieces get the
score -rank, so earlier merges win. Because no learned piece holds "▁" after its first character,
nor a digit, a newline or "：", text can be cut before every "▁" and around those characters and
each part encoded alone with the same result; that is what makes encoding fast here (a cache per
part) and what keeps the prompt/answer boundary stable (" 68" after "A:" never merges with it).
"""

import collections

SPACE = "\u2581"
ISOLATED = set("0123456789\n：")
UNK, BOS, EOS = 0, 1, 2
TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_BYTE = 1, 2, 3, 6


def escape(text, prefix):
    return (SPACE if prefix else "") + text.replace(" ", SPACE)


def segments(escaped):
    """Cuts an escaped text where no merge can cross."""
    out, cur = [], ""
    for ch in escaped:
        if ch == SPACE or ch in ISOLATED or (cur and cur[-1] in ISOLATED):
            if cur:
                out.append(cur)
            cur = ch
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def learn_merges(texts, max_merges, min_count):
    """Byte-pair merges over the corpus segments (characters as the initial symbols)."""
    freq = collections.Counter()
    for t in texts:
        freq.update(segments(escape(t, True)))
    words = [(list(w), c) for w, c in sorted(freq.items())]
    chars = sorted({ch for w, _ in words for ch in w if ch != "\n"} | {SPACE})
    merges = []
    for _ in range(max_merges):
        pairs = collections.Counter()
        for syms, c in words:
            for a, b in zip(syms, syms[1:]):
                if b[0] == SPACE or a in ISOLATED or b in ISOLATED:
                    continue
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), n = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if n < min_count:
            break
        merges.append(a + b)
        for syms, _ in words:
            i = 0
            while i < len(syms) - 1:
                if syms[i] == a and syms[i + 1] == b:
                    syms[i:i + 2] = [a + b]
                i += 1
    return chars, merges


class Tokenizer:
    def __init__(self, chars, merges):
        self.tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
        self.types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_BYTE] * 256
        self.scores = [0.0] * len(self.tokens)
        seen = set()
        for ch in chars:
            if ch in seen:
                continue
            seen.add(ch)
            self.tokens.append(ch)
            self.types.append(TYPE_NORMAL)
            self.scores.append(0.0)
        for rank, piece in enumerate(merges):
            if piece in seen:
                continue
            seen.add(piece)
            self.tokens.append(piece)
            self.types.append(TYPE_NORMAL)
            self.scores.append(-float(rank + 1))
        self.ids = {t: i for i, t in enumerate(self.tokens) if self.types[i] == TYPE_NORMAL}
        self.cache = {}

    def encode_segment(self, seg):
        got = self.cache.get(seg)
        if got is not None:
            return got
        syms = list(seg)
        while len(syms) > 1:
            best, best_score = -1, None
            for i in range(len(syms) - 1):
                j = self.ids.get(syms[i] + syms[i + 1])
                if j is not None and (best_score is None or self.scores[j] > best_score):
                    best, best_score = i, self.scores[j]
            if best < 0:
                break
            syms[best:best + 2] = [syms[best] + syms[best + 1]]
        out = []
        for s in syms:
            j = self.ids.get(s)
            if j is not None:
                out.append(j)
            else:
                out.extend(3 + b for b in s.encode("utf-8"))
        self.cache[seg] = out
        return out

    def encode(self, text, prefix=True):
        out = []
        for seg in segments(escape(text, prefix)):
            out.extend(self.encode_segment(seg))
        return out

    def decode(self, ids):
        raw = bytearray()
        for i in ids:
            if self.types[i] == TYPE_BYTE:
                raw.append(i - 3)
            elif self.types[i] == TYPE_NORMAL:
                raw.extend(self.tokens[i].replace(SPACE, " ").encode("utf-8"))
        return raw.decode("utf-8", errors="replace")
