"""An n-gram language model as an ARPA file holds it, queried with the ARPA back-off rule.

Per order a dict n-gram → log10 p(w|h) and a dict context → log10 γ(h) (the
back-off weight): p(w|h) is the stored probability of hw if there is one, else
γ(h)·p(w|h') with h' = h without its first word. Read from and written to ARPA
files (plain or gzip), so a model trained here (:mod:`focuscrawl.relevance.kneser_ney`),
written, read back or loaded by KenLM gives the same numbers; perplexity as
KenLM counts it (:class:`PerplexityStats`).

An n-gram is encoded as one int, its word ids as digits in base |vocabulary|
with the last word least significant: the context is ``key // B``, the n-gram
without its first word ``key % B**(n-1)``, and extending a context by a word is
``key * B + word``. Ids 0, 1, 2 are ``<unk>``, ``<s>``, ``</s>``.
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
