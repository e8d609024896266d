"""Terms of the genre-aware cosine model (P3): phrase counting, IDF tables, GenerateTerms.

A *term* is a word or a phrase of consecutive words. Terms and pages go through
the same normalisation (:func:`focuscrawl.relevance.text.tokenize`: lower case,
accents stripped, stop words removed, P3 4.1.3), and a term is stored as its
normalised tokens joined by one space, so "Algorithms and Data Structures" and
"algorithms data structures" are the same term.

>>> normalise_term("Required Text")
'required text'
>>> count_terms(["data", "structures", "data", "structures", "data"],
...             ["data", "data structures", "trees"])
[3, 2, 0]
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.text import bigram_letters, tokenize
from focuscrawl.types import Page

IDF_FORMAT = "focuscrawl-idf-1"
COUNTS = ("freq", "pages", "idf")  # GenerateTerms' ranking: Algorithm 3's, per page, pages x idf


def page_tokens(page: Page, lang: str = "en", *, stem: bool = False) -> list[str]:
    """The normalised token sequence of a page: its title, then its visible text."""
    return tokenize(page.title + "\n" + page.text, lang=lang, stem=stem)


def normalise_term(term: str, lang: str = "en", *, stem: bool = False) -> str:
    """A term as the model stores it: normalised tokens joined by single spaces ("" if none)."""
    return " ".join(tokenize(term, lang=lang, stem=stem))


def ngrams(tokens: Sequence[str], max_n: int) -> Iterable[str]:
    """Every run of 1..max_n consecutive tokens, as a space-joined term, in order.

    >>> list(ngrams(["a", "b", "c"], 2))
    ['a', 'a b', 'b', 'b c', 'c']
    """
    for i in range(len(tokens)):
        for n in range(1, max_n + 1):
            if i + n > len(tokens):
                break
            yield " ".join(tokens[i : i + n])


def index_tokens(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Positions of every token, so that many terms can be counted in one page cheaply.

    A one-letter word of a script written without spaces (猫, 책) is no token inside a
    run, which is cut into bigrams (关于 于猫 猫的): its positions are those of the
    bigrams it begins and of the last bigram of a run that it ends, so a term 猫 counts
    each 猫 of the page once (before, it counted none and such a term meant nothing).
    A run's end is where the next bigram does not go on from this one's second letter:
    two runs apart whose second begins with the first's last letter count it once.

    >>> [index_tokens(t)["猫"] for t in (["关于", "于猫", "猫的"], ["我爱", "爱猫"], ["猫", "x"])]
    [[2], [1], [0]]
    """
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        positions.setdefault(tok, []).append(i)
    bigrams = [bigram_letters(tok) for tok in tokens]
    for i, pair in enumerate(bigrams):
        if pair is None:
            continue
        positions.setdefault(pair[0], []).append(i)
        after = bigrams[i + 1] if i + 1 < len(bigrams) else None
        if after is None or after[0] != pair[1]:  # the run ends here: its last letter
            positions.setdefault(pair[1], []).append(i)
    return positions


def count_terms(
    tokens: Sequence[str],
    terms: Sequence[str],
    index: Mapping[str, list[int]] | None = None,
) -> list[int]:
    """Raw frequency freq(i, j) of each term in a token sequence (eq. 3.3's numerator).

    A phrase counts once per position where all its tokens follow one another;
    occurrences may overlap ("a a" occurs twice in "a a a"). ``index`` is
    :func:`index_tokens` of ``tokens`` when the caller already has it.
    """
    positions = index_tokens(tokens) if index is None else index
    counts: list[int] = []
    for term in terms:
        words = term.split(" ")
        starts = positions.get(words[0], [])
        if len(words) == 1:
            counts.append(len(starts))
            continue
        end = len(tokens) - len(words)
        counts.append(
            sum(1 for s in starts if s <= end and list(tokens[s : s + len(words)]) == words)
        )
    return counts


@dataclass
class IdfTable:
    """Document frequencies n_i of terms in a reference collection of N pages (eq. 3.4).

    ``df`` holds every term of 1..``max_n`` words that occurs in at least
    ``min_df`` pages, or (``max_n`` = 0) only some listed terms, even with df 0. A
    term that was counted but is missing therefore occurs in fewer than
    ``min_df`` pages; it is given n_i = 1, i.e. the largest idf, log N (a
    term the collection never contains is taken to be as rare as one seen once,
    since log(N/0) is undefined). A phrase longer than ``max_n`` that was not
    counted gets the largest idf of its words: a phrase never occurs in more
    pages than its rarest word, so this is a lower bound of its own idf.

    The base of the logarithm does not matter for eq. 3.1: scaling every idf
    by the same factor scales numerator and denominator alike.
    """

    n_docs: int
    df: dict[str, int] = field(default_factory=dict)
    max_n: int = 1
    min_df: int = 1
    lang: str = "en"

    def idf(self, term: str) -> float:
        """idf_i = log(N / n_i) (eq. 3.4) for a normalised term."""
        if self.n_docs <= 0:
            return 0.0
        if term in self.df:
            return math.log(self.n_docs / max(self.df[term], 1))
        words = term.split(" ")
        if len(words) <= self.max_n or len(words) == 1:
            return math.log(self.n_docs)
        return max(self.idf(w) for w in words)

    def save(self, path: Path) -> None:
        data = {
            "format": IDF_FORMAT,
            "n_docs": self.n_docs,
            "max_n": self.max_n,
            "min_df": self.min_df,
            "lang": self.lang,
            "df": dict(sorted(self.df.items())),
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=0), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> IdfTable:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("format") != IDF_FORMAT:
                raise ValueError(f"format is not {IDF_FORMAT}")
            return cls(
                n_docs=int(data["n_docs"]),
                df={str(k): int(v) for k, v in data["df"].items()},
                max_n=int(data["max_n"]),
                min_df=int(data["min_df"]),
                lang=str(data.get("lang", "en")),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelError(f"{path}: not an idf table ({exc})") from None


def compute_idf(
    documents: Iterable[Sequence[str]],
    *,
    max_n: int = 1,
    min_df: int = 1,
    terms: Sequence[str] = (),
    lang: str = "en",
) -> IdfTable:
    """Count, over normalised token sequences, in how many documents each term occurs.

    With ``terms`` only those terms are counted (as the thesis did for the
    experts' terms, 4.1.1); otherwise every n-gram of up to ``max_n`` words.

    >>> t = compute_idf([["a", "b"], ["a"], ["c", "a"]], max_n=2)
    >>> t.df["a"], t.df["a b"], round(t.idf("b"), 4), round(t.idf("d"), 4)
    (3, 1, 1.0986, 1.0986)
    """
    if max_n < 1 or min_df < 1:
        raise ModelError("idf: max_n and min_df must be at least 1")
    df: Counter[str] = Counter()
    wanted = list(dict.fromkeys(t for t in terms if t))
    n_docs = 0
    for tokens in documents:
        n_docs += 1
        if wanted:
            df.update(t for t, c in zip(wanted, count_terms(tokens, wanted), strict=True) if c)
        else:
            df.update(set(ngrams(tokens, max_n)))
    if wanted:
        # max_n=0: only the listed terms were counted, so a missing phrase is estimated
        return IdfTable(n_docs, {t: df.get(t, 0) for t in wanted}, max_n=0, lang=lang)
    kept = {t: c for t, c in df.items() if c >= min_df}
    return IdfTable(n_docs, kept, max_n=max_n, min_df=min_df, lang=lang)


def _is_word(token: str) -> bool:
    return len(token) > 1 and any(ch.isalpha() for ch in token)


def top_terms(table: Mapping[str, float], n: int) -> list[str]:
    """FilterTerms(N) of Algorithm 3: the ``n`` most frequent terms.

    Ties go to the longer term (a phrase as frequent as its words says more),
    then alphabetical order, so the result is deterministic.

    >>> top_terms({"b": 2, "a": 2, "a b": 2, "c": 5}, 3)
    ['c', 'a b', 'a']
    """
    ranked = sorted(table.items(), key=lambda kv: (-kv[1], -kv[0].count(" "), kv[0]))
    return [t for t, _ in ranked[: max(n, 0)]]


def generate_terms(
    genre_docs: Iterable[Sequence[str]],
    relevant_docs: Iterable[Sequence[str]],
    n_genre: int,
    n_content: int,
    *,
    max_n: int = 3,
    count: str = "freq",
    words_only: bool = True,
    idf: IdfTable | None = None,
) -> tuple[list[str], list[str]]:
    """Procedure GenerateTerms (Algorithm 3, P3 5.2) over normalised token sequences.

    A term is a sequence of at most ``max_n`` (paper: 3) consecutive words.
    ``count="freq"`` is the paper's TermTable (total occurrences over the
    example pages); ``count="pages"`` counts each term once per page, which
    keeps one long page from filling the list (an option, not the paper's);
    ``count="idf"`` ranks by pages · idf (eq. 3.4 over ``idf``'s reference
    collection), so that terms of every page of the Web ("page", "edu", "cs",
    "home") give way to those that set the examples apart from the collection
    (a contrastive ranking, not the paper's).
    ``words_only`` leaves out terms holding a token without a letter or of one
    character ("1996", "3", "c"): the thesis's terms are words, and on real
    pages numbers (dates, times, course numbers) otherwise fill the top ranks.

    >>> generate_terms([["syllabus", "exam"], ["syllabus"]],
    ...                [["syllabus", "sql", "sql"]], 1, 2, max_n=2)
    (['syllabus'], ['sql', 'sql sql'])
    """
    if count not in COUNTS:
        raise ModelError(f"generate-terms: count must be one of {', '.join(COUNTS)}")
    if count == "idf" and idf is None:
        raise ModelError("generate-terms: count 'idf' needs an idf table")
    if max_n < 1:
        raise ModelError("generate-terms: max_n must be at least 1")

    def page_terms(tokens: Sequence[str]) -> Iterable[str]:
        grams = ngrams(tokens, max_n)  # Fetch&ParsePage: the list of all terms of a page
        if words_only:
            grams = (g for g in grams if all(_is_word(w) for w in g.split(" ")))
        return grams if count == "freq" else set(grams)

    def ranked(table: Counter[str]) -> Mapping[str, float]:
        if idf is None or count != "idf":
            return table
        return {t: c * idf.idf(t) for t, c in table.items()}

    table: Counter[str] = Counter()
    for tokens in genre_docs:  # steps 1-3
        table.update(page_terms(tokens))
    genre_terms = top_terms(ranked(table), n_genre)  # step 4
    exclude = set(genre_terms)
    table = Counter()
    for tokens in relevant_docs:  # steps 5-8
        table.update(t for t in page_terms(tokens) if t not in exclude)  # step 7
    content_terms = top_terms(ranked(table), n_content)  # step 9
    return genre_terms, content_terms
