"""The learned comment detector: each feature by hand, the logistic regression by hand,
the shipped detector in the comments model and in a crawl, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from focuscrawl.api import crawl
from focuscrawl.exceptions import ModelError
from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.base import build_model, judge, load_model, save_model
from focuscrawl.relevance.comment_detector import SHIPPED, LearnedDetector
from focuscrawl.relevance.comment_features import FEATURES, comment_features
from focuscrawl.relevance.comments import CommentModel
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.types import Page

L1, L2, L3 = math.log(2), math.log(3), math.log(4)  # log(1 + n) for n = 1, 2, 3


def features(html: str, keywords: tuple[str, ...] = ("commentlist",)) -> dict[str, float]:
    page = parse_html("https://blog.test/post", html)
    return dict(zip(FEATURES, comment_features(page, keywords), strict=True))


@pytest.mark.parametrize(
    ("html", "feature", "expected"),
    [
        ('<ol class="comment-list"><li>x</li></ol>', "keywords", 1.0),
        ('<ol class="Comment_List"><li>x</li></ol>', "keywords", 1.0),  # folded like P0's rule
        ('<div class="comment-form">x</div>', "keywords", 0.0),
        # distinct names holding a word for "comment", classes and ids, any language
        ('<div class="comment-form kommentare" id="comentarios"><p class="nav">x</p></div>', "names", L3),
        ('<li id="comment-9257">a</li><li id="comment-9258">b</li><li id="comment-1">c</li>', "numbered", L2),
        ('<li id="kommentar_id_4711">a</li><li class="comment-4712">b</li>', "numbered", L1),  # ids only
        ("<p><time>1 May</time> <TIME>2 May</TIME></p>", "time", L2),
        ('<a href="#r">Reply</a> <button> Antworten </button> <span>reply to all</span>', "reply", L2),
        ('<img src="/u/gravatar.png"><img class="Avatar" src="a.png"><img src="b.png">', "avatar", L2),
        ("<p>Anna said: hi. Ben schrieb: ja. said no more</p>", "said", L2),
        ("<p>on 12.03.2019, on 3/12/19 and 2019-03-12; not 12.03.</p>", "date", L3),
        ("<p>at 14:05 and 9:30, not 25:99</p>", "clock", L2),
        ("<p>3 days ago, vor 2 Stunden, an hour ago</p>", "ago", L3),
        ("<p>12 comments, 0 comments, 1 Kommentar</p>", "count", L2),
        ("<p>Keine Kommentare</p>", "zero", 1.0),
        ("<p>12 comments</p>", "zero", 0.0),
        ('<form><textarea name="comment"></textarea></form>', "form", 1.0),
        ('<form><textarea name="search"></textarea></form>', "form", 0.0),
        ('<div itemscope itemtype="https://schema.org/Comment">x</div>', "microdata", 1.0),
        ('<div itemprop="comment">x</div>', "microdata", 1.0),
        ('<script type="application/ld+json">{"commentCount": "0"}</script>', "microdata", 0.0),
        ('<script type="application/ld+json">{"commentCount": 5}</script>', "microdata", 1.0),
        ('<script type="application/ld+json">{"@type": "Comment"}</script>', "microdata", 1.0),
        ('<section id="comments">x</section>', "section", 1.0),
        ('<section id="comments-closed">x</section>', "section", 1.0),  # \b: "-" ends a word
        ('<section id="commentsclosed">x</section>', "section", 0.0),
        ('<div id="disqus_thread"></div>', "system", 1.0),
        ('<div class="fb-comments" data-href="x"></div>', "system", 1.0),
        ('<script src="https://x.disqus.com/embed.js"></script>', "system", 0.0),  # names only
    ],
    ids=[
        "keywords", "keywords-folded", "keywords-form", "names", "numbered", "numbered-ids-only",
        "time", "reply", "avatar", "said", "date", "clock", "ago", "count", "zero", "zero-no",
        "form", "form-search", "microdata-itemtype", "microdata-itemprop", "microdata-count-0",
        "microdata-count-5", "microdata-ld-json", "section", "section-dash", "section-no", "disqus", "facebook", "system-script",
    ],
)  # fmt: skip
def test_each_feature_by_hand(html: str, feature: str, expected: float) -> None:
    assert features(html)[feature] == pytest.approx(expected)


def test_features_of_a_page_without_comments_are_zero() -> None:
    assert features("<html><body><p>Nothing here.</p></body></html>") == dict.fromkeys(FEATURES, 0.0)


@pytest.mark.parametrize(
    "html",
    ["", "<div class='comment-list'><li id=comment-12><a>Reply</a", "<<<>>>\x00<time", "<p>" * 5000],
    ids=["empty", "unclosed", "garbage", "deep"],
)
def test_bad_input_scores_in_range(html: str) -> None:
    model = CommentModel(detector="learned")
    page = parse_html("https://blog.test/post", html)
    values = comment_features(page, model.folded_keywords)
    assert len(values) == len(FEATURES)
    assert all(math.isfinite(v) and v >= 0 for v in values)
    assert 0.0 <= model.score(page) <= 1.0
    assert 0.0 <= model.score(Page("https://blog.test/empty")) <= 1.0  # no HTML at all


def tiny(threshold: float = 0.5) -> LearnedDetector:
    """Weight 2 on "numbered" (mean 0.5, scale 2), -1 on "zero"; intercept -1."""
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("numbered")] = 2.0
    weights[FEATURES.index("zero")] = -1.0
    mean = [0.0] * len(FEATURES)
    mean[FEATURES.index("numbered")] = 0.5
    scale = [1.0] * len(FEATURES)
    scale[FEATURES.index("numbered")] = 2.0
    return LearnedDetector(tuple(weights), -1.0, tuple(mean), tuple(scale), threshold)


def test_logistic_regression_by_hand() -> None:
    detector = tiny()
    values = [0.0] * len(FEATURES)
    values[FEATURES.index("numbered")] = 2.5  # z = -1 + 2 * (2.5 - 0.5) / 2 = 1
    assert detector.probability(values) == pytest.approx(1 / (1 + math.exp(-1)))
    values[FEATURES.index("zero")] = 1.0  # z = 1 - 1 = 0
    assert detector.probability(values) == pytest.approx(0.5)
    values = [0.0] * len(FEATURES)
    values[FEATURES.index("numbered")] = -1e6  # z far below -700: exp would overflow
    assert detector.probability(values) == 0.0
    values[FEATURES.index("numbered")] = 1e6
    assert detector.probability(values) == 1.0
    page = parse_html("https://b.test/", '<li id="comment-11"></li><li id="comment-12"></li>')
    # numbered = log 3: z = -1 + 2 * (log 3 - 0.5) / 2 = log 3 - 1.5
    assert detector.score(page, ["x"]) == pytest.approx(1 / (1 + math.exp(1.5 - math.log(3))))


def test_detector_file_round_trip_and_refusals(tmp_path: Path) -> None:
    detector = tiny(0.3)
    detector.save(tmp_path / "d.json")
    assert LearnedDetector.load(tmp_path / "d.json") == detector
    data = json.loads((tmp_path / "d.json").read_text())
    data["features"] = data["features"][:-1]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ModelError, match="learn it again"):
        LearnedDetector.load(tmp_path / "bad.json")
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(ModelError, match="not a comment detector"):
        LearnedDetector.load(tmp_path / "junk.json")
    with pytest.raises(ModelError, match="scale"):
        LearnedDetector(detector.weights, 0.0, detector.mean, (0.0,) * len(FEATURES))


def test_shipped_detector_in_the_comments_model(tmp_path: Path) -> None:
    shipped = LearnedDetector.load(SHIPPED)
    assert "learn half" in shipped.trained_on  # never the report half
    model = build_model({"name": "comments", "detector": "learned"})
    assert isinstance(model, CommentModel)
    assert model.learned == shipped
    thread = parse_html("https://blog.test/p", "".join(
        f'<li id="comment-{i}" class="comment"><img class="avatar" src="a.png">'
        f"<p>Anna said: 12.03.2019 at 14:0{i}</p><a>Reply</a></li>" for i in range(10, 16)
    ) + '<section id="comments"><p>6 comments</p></section>')  # fmt: skip
    plain = parse_html("https://blog.test/q", "<p>An article about trees.</p>")
    score, relevant = judge(model, thread)
    assert relevant
    assert score >= shipped.threshold
    score, relevant = judge(model, plain)
    assert not relevant
    assert score < shipped.threshold
    assert 0.0 < score < 1.0  # a probability, not P0's 0/1
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, CommentModel)
    assert loaded.detector == "learned"
    assert loaded.learned == shipped
    # P0's rule stays the default (the paper's experiment and the recorded outputs)
    assert CommentModel().learned is None
    assert judge(CommentModel(), plain) == (0.0, False)
    with pytest.raises(ModelError, match="detector='svm'"):
        build_model({"name": "comments", "detector": "svm"})


def test_strategy_crawls_with_the_learned_detector(sample_archive: Path, tmp_path: Path) -> None:
    model = {"name": "comments", "detector": "learned"}
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="commd", model=model, max_pages=20,
          top_n=8, depth=3, archives=[sample_archive])  # fmt: skip
    lines = (tmp_path / "run" / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    judged = [r for r in map(json.loads, lines) if r["relevance"] is not None]
    assert judged
    threshold = LearnedDetector.load(SHIPPED).threshold
    # the learned detector's probabilities, not P0's 0/1, judged by its threshold
    assert any(0.0 < r["relevance"] < 1.0 for r in judged)
    assert all(r["relevant"] == (r["relevance"] >= threshold) for r in judged)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["model"]["detector"] == "learned"


def test_a_detector_file_of_ones_own(tmp_path: Path) -> None:
    tiny(0.3).save(tmp_path / "mine.json")
    model = build_model({"name": "comments", "detector": str(tmp_path / "mine.json")})
    assert isinstance(model, CommentModel)
    assert model.learned == tiny(0.3)
    save_model(model, tmp_path / "m")
    (tmp_path / "mine.json").unlink()  # the saved model keeps its own copy
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, CommentModel)
    assert loaded.learned == tiny(0.3)
    with pytest.raises(ModelError, match="not a comment detector"):
        CommentModel(detector=str(tmp_path / "missing.json"))
