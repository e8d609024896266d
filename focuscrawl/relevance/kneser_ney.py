"""Interpolated modified Kneser–Ney n-gram language model, stored and queried as ARPA.

P2 (section 3.1) scores documents with a 5-gram Kneser–Ney model. Training follows
Chen & Goodman (1998) as implemented by KenLM's ``lmplz`` and SRILM's
``-kndiscount -interpolate``:

* sentences are padded as ``<s> w1 … wk </s>``; ``<s>`` is never predicted;
* highest order: raw counts; lower orders: *adjusted* counts = number of distinct
  left extensions N1+(• w2…wn), except n-grams starting with ``<s>`` (nothing can
  precede them), which keep their raw count;
* discounts per order from the count-of-counts t1…t4 of the adjusted counts:
  Y = t1/(t1+2 t2), D1 = 1 − 2Y t2/t1, D2 = 2 − 3Y t3/t2, D3+ = 3 − 4Y t4/t3
  (KenLM's ``--discount_fallback`` values 0.5, 1, 1.5 when they are undefined);
* u(w|h) = (a(hw) − D(a(hw))) / Σ_x a(hx), γ(h) = (D1 N1(h•) + D2 N2(h•) + D3+ N3+(h•)) / Σ_x a(hx),
  p(w|h) = u(w|h) + γ(h) p(w|h') with h' = h without its first word;
* unigrams are interpolated with the uniform distribution over the vocabulary V
  (every word but ``<s>``, with ``</s>`` and ``<unk>``):
  p(w) = u(w) + γ(ε)/|V|. ``<unk>`` has u = 0, so p(<unk>) = γ(ε)/|V| — KenLM's
  convention, which makes Σ_{w∈V} p(w|h) = 1 exactly for every context h.

The result is stored like an ARPA file: per order a dict n-gram → log10 p(w|h)
(the interpolated probability) and a dict context → log10 γ(h) (the back-off
weight), and queried with the ARPA back-off rule, so writing, reading and KenLM
give the same numbers. Log values are rounded to 7 decimals when trained, so an
ARPA file written and read back scores identically.

An n-gram is encoded as one int, its word ids as digits in base |vocabulary|
with the last word least significant: the context is ``key // B``, the n-gram
without its first word ``key % B**(n-1)``, and extending a context by a word is
``key * B + word``. Ids 0, 1, 2 are ``<unk>``, ``<s>``, ``</s>``.

``discount="single"`` uses one fixed discount for all counts (plain interpolated
KN), and ``nltk=True`` copies NLTK's ``KneserNeyInterpolated`` conventions
(order−1 pads on both sides, continuation counts for every lower order,
γ from raw type counts, undiscounted unigrams); it exists to check this code
against NLTK and is not meant for crawling.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from focuscrawl.exceptions import ModelError

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
NO_PROB = -99.0  # SRILM's log10 "probability" of words that are never predicted (<s>)
MISSING_UNK = -100.0  # KenLM's log10 p(<unk>) when an ARPA file lacks <unk>
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)
DECIMALS = 7
_LOG2_10 = math.log2(10.0)


@dataclass
class PerplexityStats:
    """Sums over the tokens (words and one ``</s>`` per sentence) of a document."""

    tokens: int = 0
    oovs: int = 0
    log10_sum: float = 0.0  # Σ log10 p over all tokens
    log10_oov: float = 0.0  # the part of log10_sum due to OOV tokens

    def perplexity(self, include_oov: bool = True) -> float:
        """PP = 2^H, H = −(1/|X|) Σ log2 p(x)   (P2, eq. 1); inf for an empty document.

        Without OOV words they leave both the sum and the count, as SRILM's and
        KenLM's "perplexity excluding OOVs".
        """
        count = self.tokens if include_oov else self.tokens - self.oovs
        total = self.log10_sum if include_oov else self.log10_sum - self.log10_oov
        if count <= 0:
            return math.inf
        entropy = -total * _LOG2_10 / count
        return float(2.0**entropy) if entropy < 1024 else math.inf


@dataclass
class NgramLM:
    """A back-off n-gram model with ARPA semantics (see the module docstring)."""

    order: int
    words: list[str]  # id -> word
    probs: list[dict[int, float]]  # probs[n-1][key of an n-gram] = log10 p
    bows: list[dict[int, float]]  # bows[n-1][key of an n-gram] = log10 back-off (absent: 0)
    ids: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.words[:3] != [UNK, BOS, EOS]:
            raise ModelError("n-gram model: the vocabulary must start with <unk>, <s>, </s>")
        self.ids = {w: i for i, w in enumerate(self.words)}
        self.base = len(self.words)

    def key(self, words: Sequence[str]) -> int:
        k = 0
        for w in words:
            k = k * self.base + self.ids.get(w, UNK_ID)
        return k

    def ngram_words(self, key: int, n: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            key, digit = divmod(key, self.base)
            out.append(self.words[digit])
        return out[::-1]

    def log10_prob(self, word: str, context: Sequence[str] = ()) -> float:
        """log10 p(word | context) by the ARPA back-off rule (context: earlier words, oldest first)."""
        ctx = list(context)[-(self.order - 1) :] if self.order > 1 else []
        m = len(ctx)
        while m > 0 and self.key([*ctx[len(ctx) - m :], word]) not in self.probs[m]:
            m -= 1
        lp = self.probs[m].get(self.key([*ctx[len(ctx) - m :], word]), MISSING_UNK)
        for j in range(m + 1, len(ctx) + 1):  # the contexts we backed off from
            lp += self.bows[j - 1].get(self.key(ctx[len(ctx) - j :]), 0.0)
        return lp

    def log10_probs(self, ids: Sequence[int]) -> list[float]:
        """log10 p of each token of one sentence (ids after ``<s>``, ending with ``</s>``).

        The fast path: the previous word's longest match bounds the next context
        (as KenLM's state), so each token needs about two dict look-ups.
        """
        base, probs, bows, top = self.base, self.probs, self.bows, self.order - 1
        state = [BOS_ID]  # state[j-1] = key of the history suffix of length j
        out: list[float] = []
        for w in ids:
            keys = [w]
            keys.extend(k * base + w for k in state)
            m = len(keys)
            lp = probs[m - 1].get(keys[m - 1])
            while lp is None and m > 1:
                m -= 1
                lp = probs[m - 1].get(keys[m - 1])
            if lp is None:
                lp = MISSING_UNK
            for j in range(m, len(state) + 1):
                lp += bows[j - 1].get(state[j - 1], 0.0)
            out.append(lp)
            state = keys[: min(m, top)]
        return out

    def stats(self, sentences: Iterable[Sequence[str]]) -> PerplexityStats:
        """Token count, OOV count and log10 sums of a document given as word lists."""
        st = PerplexityStats()
        get = self.ids.get
        for words in sentences:
            ids = [get(w, UNK_ID) for w in words]
            ids.append(EOS_ID)
            lps = self.log10_probs(ids)
            st.tokens += len(ids)
            st.log10_sum += sum(lps)
            if UNK_ID in ids:
                oov = [lp for lp, i in zip(lps, ids, strict=True) if i == UNK_ID]
                st.oovs += len(oov)
                st.log10_oov += sum(oov)
        return st

    def perplexity(self, sentences: Iterable[Sequence[str]], include_oov: bool = True) -> float:
        return self.stats(sentences).perplexity(include_oov)

    @property
    def size(self) -> list[int]:
        return [len(p) for p in self.probs]

    # -- ARPA -------------------------------------------------------------------
    def write_arpa(self, path: Path) -> None:
        """Write the model as an ARPA file (gzip-compressed when ``path`` ends in .gz)."""
        with _open(Path(path), "wt") as out:
            out.write("\n\\data\\\n")
            out.writelines(f"ngram {n}={c}\n" for n, c in enumerate(self.size, 1))
            for n in range(1, self.order + 1):
                out.write(f"\n\\{n}-grams:\n")
                bows = self.bows[n - 1]
                for key, lp in self.probs[n - 1].items():
                    text = " ".join(self.ngram_words(key, n))
                    bow = bows.get(key)
                    out.write(f"{lp!r}\t{text}\t{bow!r}\n" if bow is not None else f"{lp!r}\t{text}\n")
            out.write("\n\\end\\\n")

    @classmethod
    def read_arpa(cls, path: Path) -> NgramLM:
        """Read an ARPA file (plain or .gz) written by this module, KenLM or SRILM."""
        path = Path(path)
        try:
            with _open(path, "rt") as handle:
                return _parse_arpa(handle, str(path))
        except (OSError, UnicodeDecodeError, EOFError) as exc:
            raise ModelError(f"{path}: cannot read ARPA file ({exc})") from None


def _open(path: Path, mode: Literal["rt", "wt"]) -> IO[str]:
    if path.suffix == ".gz":
        # level 4: a large ARPA file compresses almost as well, several times faster
        return gzip.open(path, mode, encoding="utf-8", compresslevel=4)
    return path.open(mode, encoding="utf-8", newline="\n" if mode == "wt" else None)


def _parse_arpa(lines: Iterable[str], name: str) -> NgramLM:
    it: Iterator[tuple[int, str]] = enumerate((ln.strip() for ln in lines), 1)
    declared: list[int] = []
    for _, line in it:
        if line == "\\data\\":
            break
    else:
        raise ModelError(f"{name}: not an ARPA file (no \\data\\ line)")
    sections: list[list[list[str]]] = []
    for lineno, line in it:
        if line.startswith("ngram "):
            declared.append(int(line.split("=", 1)[1]))
        elif line.endswith("-grams:"):
            n = len(sections) + 1
            if line != f"\\{n}-grams:":
                raise ModelError(f"{name}:{lineno}: expected \\{n}-grams:")
            sections.append([])
        elif line == "\\end\\":
            break
        elif line:
            parts = line.split()
            if not sections or len(parts) not in (len(sections) + 1, len(sections) + 2):
                raise ModelError(f"{name}:{lineno}: bad ARPA line {line[:60]!r}")
            sections[-1].append(parts)
    if not sections or [len(s) for s in sections] != declared:
        raise ModelError(f"{name}: n-gram counts do not match the \\data\\ header")
    vocab = [UNK, BOS, EOS]
    vocab += [p[1] for p in sections[0] if p[1] not in (UNK, BOS, EOS)]
    if len(set(vocab)) != len(vocab):
        raise ModelError(f"{name}: duplicate unigram")
    order = len(sections)
    lm = NgramLM(order, vocab, [{} for _ in range(order)], [{} for _ in range(order)])
    for n, rows in enumerate(sections, 1):
        probs, bows = lm.probs[n - 1], lm.bows[n - 1]
        for parts in rows:
            words = parts[1 : n + 1]
            if any(w not in lm.ids for w in words):
                raise ModelError(f"{name}: {' '.join(words)!r} holds a word missing from the 1-grams")
            k = lm.key(words)
            try:
                probs[k] = float(parts[0])
                if len(parts) == n + 2:
                    bows[k] = float(parts[-1])
            except ValueError:
                raise ModelError(f"{name}: bad number in {' '.join(parts)[:60]!r}") from None
    if BOS_ID not in lm.probs[0] or EOS_ID not in lm.probs[0]:
        raise ModelError(f"{name}: the 1-grams must hold <s> and </s>")
    lm.probs[0].setdefault(UNK_ID, MISSING_UNK)
    return lm
