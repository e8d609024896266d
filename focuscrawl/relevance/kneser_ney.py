"""Training an interpolated modified Kneser–Ney n-gram language model (P2, section 3.1).

P2 scores documents with a 5-gram Kneser–Ney model. Training follows
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

The result is an :class:`~focuscrawl.relevance.ngram_model.NgramLM`: per order a dict
n-gram → log10 p(w|h) (the interpolated probability) and a dict context → log10 γ(h)
(the back-off weight), queried with the ARPA back-off rule. Log values are rounded
to 7 decimals when trained, so an ARPA file written and read back scores identically.

``discount="single"`` uses one fixed discount for all counts (plain interpolated
KN), and ``nltk=True`` copies NLTK's ``KneserNeyInterpolated`` conventions
(order−1 pads on both sides, continuation counts for every lower order,
γ from raw type counts, undiscounted unigrams); it exists to check this code
against NLTK and is not meant for crawling.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.ngram_model import BOS, BOS_ID, EOS, EOS_ID, NO_PROB, UNK, UNK_ID, NgramLM

FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)
DECIMALS = 7


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
