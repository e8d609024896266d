"""Run-directory metrics against hand-computed values, and ``focuscrawl eval`` on a real simulation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.evaluation.run import LabelJudge, compare_runs, evaluate_run, read_run
from focuscrawl.replay.archive import load_labels

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"
WIKI = TESTWEB / "wikispeedia.warc.gz"
WIKI_LABELS = TESTWEB / "wikispeedia.labels.jsonl"

LABELS = {
    "http://a.org/1": {"topic": "t"},
    "http://b.org/x": {"topic": "t"},
    "http://www.c.org/y": {"topic": "u"},
    "http://d.org/z": {"topic": "t"},
}


def _row(url: str, status: int, layer: int, relevance: float | None, relevant: bool | None,
         recrawl: bool = False, lang: str = "en") -> str:  # fmt: skip
    return json.dumps({
        "url": url, "status": status, "layer": layer, "relevance": relevance,
        "relevant": relevant, "recrawl": recrawl, "lang": lang, "error": None,
    })  # fmt: skip


@pytest.fixture
def hand_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"seeds": ["http://a.org/1"], "strategy": "x"}))
    lines = [
        _row("http://a.org/1", 200, 0, 0.9, True),
        _row("http://a.org/2", 404, 0, None, None),
        _row("http://b.org/x", 200, 1, 0.4, False, lang="de"),
        _row("http://www.c.org/y", 200, 1, 0.7, True),
        _row("http://a.org/1", 200, 2, 0.9, True, recrawl=True),
        '{"url": "http://cut.org/',  # a line cut by a kill
    ]
    (run / "pages.jsonl").write_text("\n".join(lines) + "\n")
    return run


def test_evaluate_run_hand_computed(hand_run: Path) -> None:
    run = read_run(hand_run)
    judge = LabelJudge(LABELS, ["topic=t"])
    r = evaluate_run(
        run, judge, targets=["http://b.org/x", "http://d.org/z"], answer=judge.answer_set(),
        checkpoints=[1, 2, 3, 4], web_pages=4, thresholds=[0.3, 0.5],
    )  # fmt: skip
    # 4 budget URLs (the re-crawl and the cut line left out), 3 pages (one 404)
    assert (r["fetched"], r["pages"], r["relevant"], r["recrawls"], r["bad_lines"]) == (4, 3, 2, 1, 1)
    assert r["harvest_rate"] == pytest.approx(2 / 3)
    assert r["harvest_by_layer"] == {"0": 1.0, "1": 0.5}
    assert r["layers_by"] == "layer"
    assert r["pages_by_layer"] == {"0": 1, "1": 2}
    # external = not on a seed's domain (a.org): b.org/x (relevant) and www.c.org/y (not)
    assert r["external"] == {"pages": 2, "share": pytest.approx(2 / 3), "harvest_rate": 0.5}
    assert r["domains"] == 3
    assert r["visited_per_relevant"] == 1.5
    assert r["target_recall"] == 0.5
    assert r["curves"]["target_recall"] == [0.0, 0.0, 0.5, 0.5]
    # labels: a1 relevant, (404), bx relevant, cy not
    assert r["curves"]["harvest_rate"] == pytest.approx([1.0, 1.0, 1.0, 2 / 3])
    # answer set {a1, bx, dz}; the crawler marked a1 and cy relevant: P 1/2, R 1/3, F1 0.4
    a = r["answer"]
    assert (a["tp"], a["fp"], a["fn"], a["size"]) == (1, 1, 2, 3)
    assert (a["precision"], a["recall"], a["f1"]) == pytest.approx((0.5, 1 / 3, 0.4))
    # score >= 0.3: a1, bx, cy -> tp 2, fp 1, fn 1; >= 0.5: a1, cy -> as above
    f1 = {row["threshold"]: row["f1"] for row in r["f1_by_threshold"]}
    assert f1 == pytest.approx({0.3: 2 / 3, 0.5: 0.4})
    # % visited of 4 web pages, % found of 3 answer pages, after each budget URL
    flat = [v for point in r["curves"]["found_vs_visited"] for v in point]
    assert flat == pytest.approx([25.0, 100 / 3, 50.0, 100 / 3, 75.0, 200 / 3, 100.0, 200 / 3])
    assert r["languages"] == pytest.approx({"en": 2 / 3, "de": 1 / 3})


def test_a_line_cut_inside_a_utf8_character_is_one_bad_line(hand_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before (b44): a crawl killed (or still writing) in the middle of a title's "é" made
    # `focuscrawl eval` refuse the whole run: "an input file is not UTF-8 text"
    pages = hand_run / "pages.jsonl"
    whole = pages.read_bytes().replace(b'{"url": "http://cut.org/\n', b"")
    pages.write_bytes(whole + '{"url": "http://d.org/z", "title": "caf\u00e9'.encode()[:-1])
    run = read_run(hand_run)
    assert (len(run.rows), run.bad_lines) == (4, 1)
    labels = hand_run.parent / "l.jsonl"
    labels.write_text("".join(json.dumps({"url": u, **v}) + "\n" for u, v in LABELS.items()))
    assert main(["eval", str(hand_run), "--labels", str(labels), "--relevant", "topic=t", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["harvest_rate"] == pytest.approx(2 / 3)


def test_targets_written_in_another_form_of_the_crawled_url_are_found(hand_run: Path) -> None:
    # before (b44): a target file's "http://B.org:80/x" or "http://a.org" (no path) never
    # matched the crawled "http://b.org/x", "http://a.org/": target recall 0 by spelling
    run = read_run(hand_run)
    judge = LabelJudge(LABELS, ["topic=t"])
    r = evaluate_run(run, judge, targets=["HTTP://B.org:80/x", "http://d.org/z", "http://a.org"])
    # a.org/1 is no target; a.org/ was never crawled; b.org/x was, as the third URL
    assert r["target_recall"] == pytest.approx(1 / 3)
    r = evaluate_run(run, judge, targets=["http://B.ORG/x#top", "http://d.org/z"], checkpoints=[2, 3])
    assert r["curves"]["target_recall"] == [0.0, 0.5]


@pytest.mark.parametrize(
    ("labelled", "relevant"),
    [
        pytest.param("http://b.org./x", 2, id="host-trailing-dot"),
        pytest.param("HTTP://B.ORG:80/x#top", 2, id="host-case-port-fragment"),
        pytest.param("http://b.org/./x", 2, id="dot-segment"),
        pytest.param("http://b.org/y", 1, id="another-page"),
    ],
)
def test_a_label_written_in_another_form_of_the_crawled_url_judges_it(
    hand_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], labelled: str, relevant: int
) -> None:
    # before (b46): labels were matched on the crawled URL by their percent-escapes only,
    # so webkb's "http://www.cs.indiana.edu./classes/..." never judged the crawled
    # "http://www.cs.indiana.edu/classes/...": an unlabelled, irrelevant page
    labels = tmp_path / "l.jsonl"
    rows = {**{u: v for u, v in LABELS.items() if u != "http://b.org/x"}, labelled: {"topic": "t"}}
    labels.write_text("".join(json.dumps({"url": u, **v}) + "\n" for u, v in rows.items()))
    assert main(["eval", str(hand_run), "--labels", str(labels), "--relevant", "topic=t", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["pages"], out["relevant"]) == (3, relevant)  # a.org/1 always, b.org/x if judged


@pytest.mark.parametrize(
    "info",
    [
        pytest.param("[1, 2]", id="a-list"),
        pytest.param('{"seeds": ["http://a.org/1"], "summary": null}', id="summary-null"),
        pytest.param('{"seeds": "http://a.org/1", "summary": {"elapsed": "x"}}', id="wrong-types"),
    ],
)
def test_a_run_json_of_another_shape_leaves_the_pages_readable(hand_run: Path, info: str) -> None:
    # before (b44): AttributeError tracebacks ('list' object has no attribute 'get')
    (hand_run / "run.json").write_text(info)
    r = evaluate_run(read_run(hand_run), LabelJudge(LABELS, ["topic=t"]))
    assert (r["fetched"], r["pages"], r["relevant"]) == (4, 3, 2)


def test_unlabelled_pages_skipped_or_irrelevant(hand_run: Path) -> None:
    run = read_run(hand_run)
    labels = {k: v for k, v in LABELS.items() if k != "http://www.c.org/y"}
    judge = LabelJudge(labels, ["topic=t"])
    assert evaluate_run(run, judge)["harvest_rate"] == pytest.approx(2 / 3)
    skipped = evaluate_run(run, judge, skip_unlabelled=True)
    assert (skipped["pages"], skipped["harvest_rate"], skipped["unlabelled"]) == (2, 1.0, 1)


def test_noindex_pages_are_left_out_of_the_rates(hand_run: Path) -> None:
    # www.c.org/y asked not to be indexed (issue 36): one URL of the budget, not a page
    pages = hand_run / "pages.jsonl"
    pages.write_text(pages.read_text().replace('"url": "http://www.c.org/y"', '"noindex": true, "url": "http://www.c.org/y"'))
    r = evaluate_run(read_run(hand_run), LabelJudge(LABELS, ["topic=t"]))
    assert (r["fetched"], r["pages"], r["relevant"], r["harvest_rate"]) == (4, 2, 2, 1.0)
    # and a sitemap is no page either
    pages.write_text(pages.read_text().replace('"url": "http://b.org/x"', '"sitemap": "urlset", "url": "http://b.org/x"'))
    r = evaluate_run(read_run(hand_run), LabelJudge(LABELS, ["topic=t"]))
    assert (r["fetched"], r["pages"], r["relevant"], r["harvest_rate"]) == (4, 1, 1, 1.0)


def test_overlap_of_two_runs(hand_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "pages.jsonl").write_text(
        _row("http://b.org/x", 200, 0, None, None) + "\n" + _row("http://e.org/", 200, 0, None, None) + "\n"
    )
    o = compare_runs(read_run(hand_run), read_run(other))
    # pages {a1, bx, cy} vs {bx, e}: 1 shared of 4; domains {a,b,c} vs {b,e}: 1 of 4
    assert (o["pages"]["both"], o["pages"]["jaccard"]) == (1, 0.25)
    assert (o["domains"]["both"], o["domains"]["jaccard"]) == (1, 0.25)


def test_eval_cli_errors(hand_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(tmp_path / "nothing"), "--labels", "x", "--relevant", "a=b"]) == 2
    assert "not a run directory" in capsys.readouterr().err
    labels = tmp_path / "l.jsonl"
    labels.write_text("".join(json.dumps({"url": u, **v}) + "\n" for u, v in LABELS.items()))
    assert main(["eval", str(hand_run), "--labels", str(labels), "--relevant", "topic"]) == 2
    assert "bad label filter" in capsys.readouterr().err
    assert main(["eval", str(hand_run)]) == 2
    assert "--labels" in capsys.readouterr().err


@pytest.mark.skipif(not WIKI.exists(), reason="shared test web absent")
def test_eval_cli_on_a_simulated_crawl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    seed = "http://schools-wikipedia.org/wp/c/Cat.htm"
    assert main(["simulate", "--archive", str(WIKI), "--seeds", seed, "--out", str(out),
                 "--strategy", "bfs", "--max-pages", "25", "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    targets = tmp_path / "targets.txt"
    targets.write_text("http://schools-wikipedia.org/wp/d/Dog.htm\nhttp://schools-wikipedia.org/wp/z/Zebra.htm\n")
    assert main(["eval", str(out), "--labels", str(WIKI_LABELS), "--relevant", "categories~=Mammals",
                 "--targets", str(targets), "--json"]) == 0  # fmt: skip
    r = json.loads(capsys.readouterr().out)
    # the same numbers counted here straight from pages.jsonl and the label file
    labels = load_labels(WIKI_LABELS)
    rows = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    hits = sum(any("Mammals" in c for c in labels.get(x["url"], {}).get("categories", [])) for x in rows)
    crawled = {x["url"] for x in rows}
    assert (r["fetched"], r["pages"], r["relevant"]) == (25, 25, hits)
    assert r["harvest_rate"] == pytest.approx(hits / 25)
    assert r["target_recall"] == pytest.approx(
        sum(u in crawled for u in targets.read_text().split()) / 2
    )
    assert main(["eval", str(out), "--labels", str(WIKI_LABELS), "--relevant", "categories~=Mammals"]) == 0
    assert f"{hits} relevant" in capsys.readouterr().out
