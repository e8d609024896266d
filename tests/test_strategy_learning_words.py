"""The learning strategy's ``cross_words`` (issue 38 item 9): a link's tokens crossed
with the bucket of the page model's score of its own words (anchor and URL file name),
checked on a hand-built page against the tokens and buckets computed here by hand."""

from __future__ import annotations

import random

import pytest

from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.relevance.online_link import OnlineLinkModel, link_tokens
from focuscrawl.strategies.learning import LearningStrategy
from focuscrawl.strategies.link_words import OwnWordScores
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Link, Page, QueuedURL

SEED = "http://s.org/wp/index.htm"
BIRDS = "http://s.org/wp/subject/Science.Biology.Birds.htm"  # own words: "Birds Science Biology Birds"
ART = "http://s.org/wp/subject/Art.htm"  # own words: "Art Art"
EAGLE = "http://s.org/wp/b/Bald_Eagle.htm"  # own words: "eagle Bald Eagle"
# the page model: the keyword model of "birds" and "eagle" (a text's score is the share
# of the keywords it holds, so "birds" alone 0.5, both 1, neither 0)
MODEL = KeywordModel(["birds", "eagle"])
LINKS = [Link(BIRDS, "Birds", "Birds"), Link(ART, "Art", "Art"), Link(EAGLE, "eagle", "eagle")]


def _examples(**params: object) -> list[list[int]]:
    """The seed (relevance 0.1) judged, then its three links' pages: each page makes its
    own link an example; their columns, as the learner keeps them."""
    strategy = LearningStrategy(MODEL, update_every=1000, **params)
    strategy.attach(FrontierView(MemoryFrontier()), random.Random(0))
    strategy.on_page(Page(SEED, links=list(LINKS)), 0.1, QueuedURL(SEED, 1.0, 0, "s.org", None))
    for link in LINKS:
        strategy.on_page(Page(link.url), 0.0, QueuedURL(link.url, 0.5, 1, "s.org", SEED))
    return [sorted(e.columns.tolist()) for e in strategy.pending]


def _by_hand(link: Link, mark: str | None, shared: bool, depth: int = 1) -> list[int]:
    plain = link_tokens(link.url, link.anchor, link.context, 0.1, depth, 0)
    tokens = [f"{t}|{mark}" for t in plain] if mark else []
    if shared or mark is None:
        tokens = plain + tokens
    return sorted(OnlineLinkModel.columns(tokens).tolist())


def test_the_page_model_scores_the_own_words_as_expected() -> None:
    """The buckets below rest on these scores (the keyword model's share of its words)."""
    texts = ["Birds Science Biology Birds", "Art Art", "eagle Bald Eagle"]
    assert [MODEL.score_text(t) for t in texts] == pytest.approx([0.5, 0.0, 0.5])


@pytest.mark.parametrize(("params", "marks", "shared"), [
    # B = 4: b = min(3, floor(4 * s)): Birds 0.5 -> 2, Art 0 -> 0, eagle 0.5 -> 2
    ({"cross_words": 4}, ["w2", "w0", "w2"], False),
    # B = 2: 0.5 -> min(1, 1) = 1, 0 -> 0
    ({"cross_words": 2}, ["w1", "w0", "w1"], False),
    # B = 3: floor(1.5) = 1; the plain tokens kept beside the crossed ones
    ({"cross_words": 3, "cross_shared": True}, ["w1", "w0", "w1"], True),
    ({}, [None, None, None], False),  # off: the plain tokens (issue 28)
], ids=["B4", "B2", "B3-shared", "off"])  # fmt: skip
def test_a_links_tokens_are_crossed_with_its_own_words_bucket(
    params: dict[str, object], marks: list[str | None], shared: bool
) -> None:
    expected = [_by_hand(link, mark, shared) for link, mark in zip(LINKS, marks, strict=True)]
    assert _examples(**params) == expected


def test_the_topics_index_shares_no_column_with_an_index_that_does_not_match() -> None:
    """Crossed (not shared), the Birds index and the Art index have no token in common,
    though both are ``u:subject`` links found on the same page at the same depth."""
    birds, art, _ = _examples(cross_words=2)
    assert not set(birds) & set(art)
    plain_birds, plain_art, _ = _examples()
    assert set(plain_birds) & set(plain_art)


def test_cross_words_is_checked() -> None:
    with pytest.raises(ConfigError, match="cross_words must be >= 0"):
        LearningStrategy(MODEL, cross_words=-1)


class _Recording(KeywordModel):
    """The keyword model of "birds" and "eagle", recording every text it scores."""

    def __init__(self) -> None:
        super().__init__(["birds", "eagle"])
        self.asked: list[str] = []

    def score_text(self, text: str) -> float:
        self.asked.append(text)
        return super().score_text(text)


def test_each_distinct_own_words_string_is_scored_once_per_crawl() -> None:
    """Two pages linking to the same three pages (the Birds index twice on the second):
    the page model reads each link's own words once, the first time, and the crossed
    examples are those computed by hand above (B = 2: Birds w1, Art w0, eagle w1), from
    the second page's links (depth 2), which score as high as the first's and so are
    the ones kept."""
    model = _Recording()
    strategy = LearningStrategy(model, update_every=1000, cross_words=2)
    strategy.attach(FrontierView(MemoryFrontier()), random.Random(0))
    second = "http://s.org/wp/second.htm"
    strategy.on_page(Page(SEED, links=list(LINKS)), 0.1, QueuedURL(SEED, 1.0, 0, "s.org", None))
    own = [t for t in model.asked if t not in ("", "Birds", "Art", "eagle")]
    assert own == ["Birds Science Biology Birds", "Art Art", "eagle Bald Eagle"]
    model.asked.clear()
    links = [*LINKS, LINKS[0]]
    strategy.on_page(Page(second, links=links), 0.1, QueuedURL(second, 0.5, 1, "s.org", SEED))
    assert not [t for t in model.asked if t not in ("", "Birds", "Art", "eagle")]
    for link in LINKS:
        strategy.on_page(Page(link.url), 0.0, QueuedURL(link.url, 0.5, 1, "s.org", SEED))
    marks = ["w1", "w0", "w1"]
    expected = [_by_hand(link, m, False, depth=2) for link, m in zip(LINKS, marks, strict=True)]
    assert [sorted(e.columns.tolist()) for e in strategy.pending] == expected


def test_the_own_words_cache_is_bounded_and_keeps_the_marks() -> None:
    """At most ``size`` strings kept, the oldest dropped first: with size 2, after the
    three links the Birds string (the oldest) is scored again, and the marks are still
    the hand-computed ones (B = 2: 0.5 -> w1, 0 -> w0)."""
    model = _Recording()
    scores = OwnWordScores(model, size=2)
    page = Page(SEED, links=list(LINKS))
    assert scores.marks(page, 2) == ["w1", "w0", "w1"]
    assert len(model.asked) == 3
    model.asked.clear()
    assert scores.marks(Page(SEED, links=[LINKS[0], LINKS[2]]), 2) == ["w1", "w1"]
    assert model.asked == ["Birds Science Biology Birds"]
