"""Comment keywords across sites: site grouping, the indexed learner, site-grouped CV and tuning."""

from __future__ import annotations

import pytest

from focuscrawl.metrics import BinaryScores
from focuscrawl.relevance.comment_learning import LabelledNames, learn_keywords
from focuscrawl.relevance.comment_sites import (
    NameIndex,
    cross_validate,
    learn_transferable,
    site_of,
    split_sites,
    tune_learner,
)


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://www.example.org/a", "example.org"),
        ("https://blog.news.example.com/x?y", "example.com"),
        ("http://shop.example.co.uk/", "example.co.uk"),
        ("http://web.archive.org/web/20190101/https://www.kino.de/film/", "kino.de"),
        ("http://web.archive.org/about", "archive.org"),
        ("http://localhost:8080/", "localhost"),
    ],
)
def test_site_of(url: str, site: str) -> None:
    assert site_of(url) == site


def _p(url: str, classes: set[str], label: bool) -> LabelledNames:
    return LabelledNames(url, frozenset(classes), frozenset(), label)


# "cmtbox" marks comments on 6 sites (one page each) and appears on 1 non-comment page;
# "likebtn" marks all 5 comment pages of one site and nothing else.
PAGES = (
    [_p(f"http://s{i}.example/", {"cmtbox", "post"}, True) for i in range(6)]
    + [_p(f"http://one.example/{i}", {"likebtn", "post"}, True) for i in range(5)]
    + [_p("http://n0.example/", {"cmtbox-empty"}, False)]
    + [_p(f"http://n{i}.example/", {"post", "footer"}, False) for i in range(1, 9)]
)


def test_index_learner_counts_sites() -> None:
    index = NameIndex(PAGES)
    assert index.pos_mask == (1 << 11) - 1
    anywhere = index.learn(min_support=2, min_sites=1, min_gain=2)
    # likebtn: 5 new tp, 0 fp -> gain 5 = cmtbox's 6 - 1; tie broken by fewer fp
    assert [(k.keyword, k.gain, k.tp, k.fp) for k in anywhere] == [
        ("likebtn", 5, 5, 0),
        ("cmtbox", 5, 6, 1),
    ]
    # the same as the plain learner on these pages
    plain = learn_keywords(PAGES, min_support=2, min_gain=2)
    assert [k.keyword for k in plain] == ["likebtn", "cmtbox"]
    # one site only: likebtn is not a candidate with min_sites = 2
    assert [k.keyword for k in index.learn(min_support=2, min_sites=2, min_gain=2)] == ["cmtbox"]
    s = index.evaluate(["cmtbox"], index.all_mask)
    assert (s.tp, s.fp, s.tn, s.fn) == (6, 1, 8, 5)


def test_site_folds_keep_a_site_together() -> None:
    index = NameIndex(PAGES)
    parts = index.site_folds(index.all_mask, 3)
    assert sum(p.bit_count() for p in parts) == len(PAGES)
    union = 0
    for part in parts:
        assert not union & part
        union |= part
    one = [i for i, p in enumerate(PAGES) if site_of(p.url) == "one.example"]
    assert sum(1 for part in parts if any(part >> i & 1 for i in one)) == 1


def test_cross_validation_judges_unseen_sites_only() -> None:
    index = NameIndex(PAGES)
    seen: list[int] = []

    def learner(train: int) -> list[str]:
        seen.append(train)
        return ["cmtbox"]

    scores = cross_validate(index, learner, folds=4)
    assert scores == BinaryScores(6, 1, 8, 5)  # a fixed list: pooled = whole-set counts
    for train in seen:
        test = index.all_mask & ~train
        train_sites = {index.site[i] for i in range(len(PAGES)) if train >> i & 1}
        test_sites = {index.site[i] for i in range(len(PAGES)) if test >> i & 1}
        assert not train_sites & test_sites


def test_tuning_prefers_the_keyword_of_many_sites() -> None:
    pages = [
        *PAGES,
        *[_p(f"http://t{i}.example/", {"cmtbox"}, True) for i in range(6)],
        *[_p(f"http://m{i}.example/", {"menu"}, False) for i in range(20)],
    ]
    index = NameIndex(pages)
    params, cv = tune_learner(index, top_k=5, folds=3)
    words, params2, cv2 = learn_transferable(index, top_k=5, folds=3)
    assert (params2, cv2) == (params, cv)
    assert params["min_sites"] >= 2  # likebtn (one site) never helps on unseen sites
    assert [k.keyword for k in words] == ["cmtbox"]
    assert cv.n == len(pages)


def test_split_sites_is_by_site() -> None:
    urls = [f"https://www.example.org/{i}" for i in range(5)] + ["https://example.org/x"]
    assert len({split_sites(u) for u in urls}) == 1
    assert {split_sites(f"https://s{i}.test/") for i in range(20)} == {"learn", "report"}
