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
from collections.abc import Iterable, Sequence
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
        state = [BOS_ID] if top else []  # state[j] = key of the history suffix of length j+1
        out: list[float] = []
        append = out.append
        for w in ids:
            n = m = len(state)
            lp: float | None = None
            while m:  # longest match first; m = its context length
                lp = probs[m].get(state[m - 1] * base + w)
                if lp is not None:
                    break
                m -= 1
            if lp is None:
                lp = probs[0].get(w, MISSING_UNK)
            for j in range(m, n):  # back-off weights of the longer contexts that failed
                lp += bows[j].get(state[j], 0.0)
            append(lp)
            k = min(m + 1, top)  # the n-grams ending at w that exist have lengths 1..m+1
            state = [w] + [state[j] * base + w for j in range(k - 1)] if k else []
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
            texts: dict[int, str] = {}  # n-gram texts of the previous order, built once
            for n in range(1, self.order + 1):
                out.write(f"\n\\{n}-grams:\n")
                bows, words, base = self.bows[n - 1], self.words, self.base
                if n == 1:
                    current = {k: words[k] for k in self.probs[0]}
                else:
                    current = {
                        k: f"{self._context_text(texts, k, n)} {words[k % base]}"
                        for k in self.probs[n - 1]
                    }
                for key, lp in self.probs[n - 1].items():
                    bow = bows.get(key)
                    text = current[key]
                    out.write(
                        f"{lp!r}\t{text}\t{bow!r}\n" if bow is not None else f"{lp!r}\t{text}\n"
                    )
                texts = current
            out.write("\n\\end\\\n")

    def _context_text(self, texts: dict[int, str], key: int, n: int) -> str:
        context = key // self.base  # a model read from ARPA may lack it (no prefix closure)
        return texts.get(context) or " ".join(self.ngram_words(context, n - 1))

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
    """Stream an ARPA file into an :class:`NgramLM` (higher orders go straight into dicts)."""
    it = iter(lines)
    if not any(line.strip() == "\\data\\" for line in it):
        raise ModelError(f"{name}: not an ARPA file (no \\data\\ line)")
    declared: list[int] = []
    unigrams: list[list[str]] = []
    lm: NgramLM | None = None
    n, at = 0, 0  # at: line number after the \data\ line, for messages
    try:
        for raw in it:
            at += 1
            line = raw.strip()
            if not line:
                continue
            if line.startswith("\\"):
                if line == "\\end\\":
                    break
                n += 1
                if line != f"\\{n}-grams:" or n > len(declared):
                    raise ValueError("unexpected section")
                if n == 2:
                    lm = _with_unigrams(unigrams, len(declared), name)
                continue
            parts = line.split()
            if n == 0:
                if parts[0] != "ngram" or not line.partition("=")[2].strip().isdigit():
                    raise ValueError("bad header")
                declared.append(int(line.partition("=")[2]))
            elif len(parts) not in (n + 1, n + 2):
                raise ValueError("wrong number of fields")
            elif n == 1:
                unigrams.append(parts)
            else:
                assert lm is not None
                key, ids, base = 0, lm.ids, lm.base
                for w in parts[1 : n + 1]:
                    key = key * base + ids[w]
                lm.probs[n - 1][key] = float(parts[0])
                if len(parts) == n + 2:
                    lm.bows[n - 1][key] = float(parts[-1])
    except (ValueError, IndexError):
        raise ModelError(f"{name}: bad ARPA line {at} after \\data\\") from None
    except KeyError as exc:
        raise ModelError(
            f"{name}: line {at} after \\data\\: word {exc} missing from the 1-grams"
        ) from None
    if lm is None:
        lm = _with_unigrams(unigrams, len(declared), name)
    if not declared or [len(unigrams), *lm.size[1:]] != declared:
        raise ModelError(f"{name}: n-gram counts do not match the \\data\\ header")
    return lm


def _with_unigrams(rows: list[list[str]], order: int, name: str) -> NgramLM:
    words = [UNK, BOS, EOS] + [p[1] for p in rows if p[1] not in (UNK, BOS, EOS)]
    if len(set(words)) != len(words):
        raise ModelError(f"{name}: duplicate 1-gram")
    lm = NgramLM(order, words, [{} for _ in range(order)], [{} for _ in range(order)])
    try:
        for parts in rows:
            k = lm.ids[parts[1]]
            lm.probs[0][k] = float(parts[0])
            if len(parts) == 3:
                lm.bows[0][k] = float(parts[2])
    except ValueError:
        raise ModelError(f"{name}: bad ARPA line in the 1-grams") from None
    if BOS_ID not in lm.probs[0] or EOS_ID not in lm.probs[0]:
        raise ModelError(f"{name}: the 1-grams must hold <s> and </s>")
    if UNK_ID not in lm.probs[0]:  # as KenLM does for a model without <unk>
        lm.probs[0][UNK_ID] = MISSING_UNK
    return lm


# -- training -------------------------------------------------------------------
def train_kneser_ney(
    sentences: Iterable[Sequence[str]],
    order: int = 5,
    *,
    discount: Literal["modified", "single"] = "modified",
    fixed_discount: float = 0.75,
    nltk: bool = False,
) -> NgramLM:
    """Train an interpolated Kneser–Ney model of ``order`` on word lists (one per sentence)."""
    if order < 1:
        raise ModelError("n-gram model: order must be >= 1")
    if nltk and discount != "single":
        raise ModelError("n-gram model: NLTK conventions need discount='single'")
    vocab = [UNK, BOS, EOS]
    ids = {w: i for i, w in enumerate(vocab)}
    pad = order - 1 if nltk else 1
    padded: list[list[int]] = []
    for sentence in sentences:
        row = [BOS_ID] * pad
        for w in sentence:
            i = ids.get(w)
            if i is None:
                i = ids[w] = len(vocab)
                vocab.append(w)
            row.append(i)
        padded.append(row + [EOS_ID] * (order - 1 if nltk else 1))
    if not padded:
        raise ModelError("n-gram model: no training sentences")
    lm = NgramLM(order, vocab, [{} for _ in range(order)], [{} for _ in range(order)])
    counts = _count(padded, order, lm.base, first=0 if nltk else 1)
    del padded
    adjusted = _adjust(counts, lm.base, keep_bos_raw=not nltk)
    del counts
    _estimate(lm, adjusted, discount, fixed_discount, nltk)
    return lm


def _count(padded: list[list[int]], order: int, base: int, first: int) -> list[dict[int, int]]:
    """Raw counts of every n-gram (n <= order) ending at position >= ``first`` of each sentence."""
    counts: list[dict[int, int]] = [{} for _ in range(order)]
    powers = [base**j for j in range(order)]
    for row in padded:
        for i in range(first, len(row)):
            key = 0
            for n in range(min(order, i + 1)):
                key += row[i - n] * powers[n]
                table = counts[n]
                table[key] = table.get(key, 0) + 1
    return counts


def _adjust(counts: list[dict[int, int]], base: int, keep_bos_raw: bool) -> list[dict[int, int]]:
    """Adjusted counts: raw at the top order, N1+(• g) below (raw for <s>-initial g)."""
    order = len(counts)
    adjusted: list[dict[int, int]] = [{} for _ in range(order)]
    adjusted[-1] = counts[-1]
    for n in range(order - 1, 0, -1):  # n = order of the n-grams being adjusted
        drop_first = base**n
        continuations: dict[int, int] = {}
        for g in counts[n]:  # the (n+1)-grams, each distinct
            s = g % drop_first
            continuations[s] = continuations.get(s, 0) + 1
        lead = base ** (n - 1)
        adjusted[n - 1] = {
            g: c if keep_bos_raw and g // lead == BOS_ID else continuations.get(g, 0)
            for g, c in counts[n - 1].items()
        }
    return adjusted


def modified_discounts(adjusted: Iterable[int]) -> tuple[float, float, float]:
    """D1, D2, D3+ of Chen & Goodman from the count-of-counts t1..t4 (fallback when undefined).

    t = (10, 4, 2, 1): Y = 10/18, D1 = 1 − 2Y·4/10 = 5/9, D2 = 2 − 3Y·2/4 = 7/6, D3+ = 3 − 4Y/2 = 17/9

    >>> [round(d, 4) for d in modified_discounts([1] * 10 + [2] * 4 + [3] * 2 + [4, 7])]
    [0.5556, 1.1667, 1.8889]
    """
    t = [0] * 5
    for c in adjusted:
        if 1 <= c <= 4:
            t[c] += 1
    if min(t[1:]) == 0:
        return FALLBACK_DISCOUNTS
    y = t[1] / (t[1] + 2 * t[2])
    d = (1 - 2 * y * t[2] / t[1], 2 - 3 * y * t[3] / t[2], 3 - 4 * y * t[4] / t[3])
    if not all(0 < d[k] < k + 1 for k in range(3)):
        return FALLBACK_DISCOUNTS
    return d


def _estimate(
    lm: NgramLM, adjusted: list[dict[int, int]], discount: str, fixed: float, nltk: bool
) -> None:
    """Fill ``lm.probs``/``lm.bows`` with the interpolated probabilities, lowest order first."""
    base = lm.base
    lower: dict[int, float] = {}
    for n in range(1, lm.order + 1):
        a = adjusted[n - 1]
        d = (fixed, fixed, fixed) if discount == "single" else modified_discounts(a.values())
        denom: dict[int, int] = {}
        mass: dict[int, float] = {}  # Σ_w D(a(hw)): the discounted mass of context h
        for g, c in a.items():
            h = g // base
            denom[h] = denom.get(h, 0) + c
            # NLTK's γ counts every type seen after h, even with continuation count 0
            mass[h] = mass.get(h, 0.0) + (d[min(c, 3) - 1] if c > 0 else d[0] if nltk else 0.0)
        gamma = {h: mass[h] / t if t > 0 else 1.0 for h, t in denom.items()}
        probs: dict[int, float] = {}
        drop_first = base ** (n - 1)
        vocab_size = len(lm.words) - 1  # V = every word but <s>
        for g, c in a.items():
            h = g // base
            t = denom[h]
            u = max(c - d[min(c, 3) - 1], 0.0) / t if c > 0 and t > 0 else 0.0
            if n == 1:
                probs[g] = (c / t if t > 0 else 0.0) if nltk else u + gamma[0] / vocab_size
            else:
                probs[g] = u + gamma[h] * lower[g % drop_first]
        if n == 1 and not nltk:
            probs.setdefault(UNK_ID, gamma[0] / vocab_size)
        if n == 1:
            probs.setdefault(UNK_ID, 0.0)
        lm.probs[n - 1] = {g: _log10(p) for g, p in probs.items()}
        if n == 1 and not nltk:
            lm.probs[0][BOS_ID] = NO_PROB
        if n > 1:
            lm.bows[n - 2] = {h: round(math.log10(v), DECIMALS) for h, v in gamma.items()}
        lower = probs


def _log10(p: float) -> float:
    return round(math.log10(p), DECIMALS) if p > 0 else NO_PROB
