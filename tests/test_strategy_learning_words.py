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


def _by_hand(link: Link, mark: str | None, shared: bool) -> list[int]:
    plain = link_tokens(link.url, link.anchor, link.context, 0.1, 1, 0)
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
