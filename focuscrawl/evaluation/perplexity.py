"""P2's corpus-expansion measure: held-out perplexity of an LM trained on the training
text plus the crawled text, retrained as the crawl's text grows.

P2 [5] trains on the domain texts plus the first k tokens of the crawl for growing
k and reports the perplexity of a held-out test set, with and without OOV words
(a crawl that finds in-domain text lowers both; off-domain text lowers the OOV
rate but raises the perplexity of the known words). Sentences are normalised as
for the perplexity model (:mod:`focuscrawl.relevance.lm_text`), at least
``min_words`` long and de-duplicated across training and crawled text (P2 [4]).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from focuscrawl.parse.maintext import extracted_text
from focuscrawl.relevance.examples import iter_archive_pages
from focuscrawl.relevance.kneser_ney import train_kneser_ney
from focuscrawl.relevance.lm_text import lm_sentences


def perplexity_curve(
    train_texts: Iterable[str],
    crawled_texts: Iterable[str],
    heldout_texts: Iterable[str],
    *,
    every_tokens: int,
    order: int = 3,
    min_words: int = 5,
    max_points: int = 20,
) -> list[dict[str, float]]:
    """Points ``{tokens, perplexity, perplexity_no_oov, oov_rate}``: first with the
    training text alone (tokens = 0), then after every ``every_tokens`` crawled tokens
    (and once more at the end of the crawled text), at most ``max_points`` in all.

    A toy check: crawled text identical to the held-out text makes the held-out
    perplexity fall and removes the OOV words.

    >>> pts = perplexity_curve(["the cat sat on the mat today"], ["a dog ran in the park now"],
    ...                        ["a dog ran in the park now"], every_tokens=5, order=2)
    >>> [p["tokens"] for p in pts], pts[1]["perplexity"] < pts[0]["perplexity"]
    ([0, 7], True)
    >>> pts[0]["oov_rate"] > 0, pts[1]["oov_rate"]
    (True, 0.0)
    """
    seen: set[str] = set()
    base = [s for t in train_texts for s in lm_sentences(t, min_words=min_words, dedup=True, seen=seen)]
    heldout = [s for t in heldout_texts for s in lm_sentences(t, min_words=1)]
    crawled: list[list[str]] = []
    tokens = 0
    points: list[dict[str, float]] = []

    def measure() -> None:
        lm = train_kneser_ney([*base, *crawled], order)
        st = lm.stats(heldout)
        points.append({
            "tokens": tokens, "perplexity": st.perplexity(True),
            "perplexity_no_oov": st.perplexity(False),
            "oov_rate": st.oovs / st.tokens if st.tokens else 0.0,
        })  # fmt: skip

    measure()
    next_at = every_tokens
    for text in crawled_texts:
        for sentence in lm_sentences(text, min_words=min_words, dedup=True, seen=seen):
            crawled.append(sentence)
            tokens += len(sentence)
        if tokens >= next_at and len(points) < max_points - 1:
            measure()
            next_at = (tokens // every_tokens + 1) * every_tokens
    if tokens > points[-1]["tokens"]:
        measure()
    return points


def run_texts(run_dir: Path | str, *, boilerplate: bool = True) -> Iterator[str]:
    """The text of each page of a run's corpus, in the order it was written (fetch order).

    With ``boilerplate`` the main text by trafilatura (P2 used boilerpipe), else the
    parser's visible text; a page trafilatura cannot read keeps its visible text.
    """
    for page in iter_archive_pages(Path(run_dir) / "corpus.warc.gz", only_ok=True):
        text = extracted_text(page.html) if boilerplate else None
        yield text or page.text


def split_heldout(texts: Sequence[str], share: float = 0.2) -> tuple[list[str], list[str]]:
    """(training, held-out): every k-th text held out, k = round(1 / share) (deterministic).

    >>> split_heldout(["a", "b", "c", "d", "e"], 0.2)
    (['a', 'b', 'c', 'd'], ['e'])
    """
    k = max(2, round(1 / share)) if share > 0 else 0
    train = [t for i, t in enumerate(texts, 1) if not k or i % k]
    held = [t for i, t in enumerate(texts, 1) if k and not i % k]
    return train, held
