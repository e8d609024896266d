"""PDF documents (issue 37 item 2): read with pypdf, judged by the crawl's model,
their link annotations followed; hostile ones are one failure each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import crawl_async
from focuscrawl.parse.pdf import PdfError, read_pdf
from focuscrawl.replay import pdf_build
from tests.sites import html, respond, serve

REPORT = pdf_build.pdf_document(
    ["annual report on kittens and their care " * 20, "second page: kitten food"],
    title="Kitten report",
    links=[["/from-pdf.html", "http://elsewhere.invalid/x"], []],
)


def test_read_pdf_text_title_links_and_pages() -> None:
    title, text, links, read = read_pdf(REPORT, "http://h.org/docs/r.pdf", max_pages=50, max_seconds=10)
    assert title == "Kitten report"
    assert text.startswith("annual report on kittens and their care")
    assert text.endswith("second page: kitten food")
    assert [link.url for link in links] == ["http://h.org/from-pdf.html", "http://elsewhere.invalid/x"]
    assert read == 2


def test_read_pdf_page_cap() -> None:
    _, text, _, read = read_pdf(pdf_build.many_pages(300), "http://h.org/l.pdf", max_pages=10, max_seconds=10)
    assert read == 10
    assert "page 9 of" in text
    assert "page 10 of" not in text


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        pytest.param(lambda: pdf_build.encrypted(REPORT), "pdf-encrypted", id="encrypted"),
        pytest.param(lambda: pdf_build.broken(REPORT), "pdf-broken", id="broken"),
        pytest.param(lambda: b"%PDF-1.4\n", "pdf-broken", id="empty"),
        pytest.param(lambda: pdf_build.bomb(200), "pdf-limit", id="inflation-bomb"),
        pytest.param(lambda: pdf_build.deeply_nested(), "pdf-broken", id="deep-nesting"),
    ],
)
def test_hostile_pdfs_are_one_error(document: object, reason: str) -> None:
    with pytest.raises(PdfError) as err:
        read_pdf(document(), "http://h.org/x.pdf", max_pages=50, max_seconds=30)  # type: ignore[operator]
    assert err.value.reason == reason


def test_time_cap_per_document() -> None:
    # 3,000 pages take seconds to read; a millisecond's cap stops the reader
    with pytest.raises(PdfError) as err:
        read_pdf(pdf_build.many_pages(3000), "http://h.org/l.pdf", max_pages=0, max_seconds=0.001)
    assert err.value.reason == "pdf-timeout"


def _routes() -> dict[str, object]:
    pdf = "application/pdf"
    links = " ".join(
        f'<a href="/{name}.pdf">{name}</a>' for name in ("report", "secret", "broken", "bomb", "nested")
    )
    return {
        "/": html(f"{links} <a href='/after.html'>after</a>"),
        "/report.pdf": respond(REPORT, content_type=pdf),
        "/secret.pdf": respond(pdf_build.encrypted(REPORT), content_type=pdf),
        "/broken.pdf": respond(pdf_build.broken(REPORT), content_type=pdf),
        "/bomb.pdf": respond(pdf_build.bomb(200), content_type=pdf),
        "/nested.pdf": respond(pdf_build.deeply_nested(), content_type=pdf),
        "/from-pdf.html": html("<p>kitten page linked from a PDF only</p>"),
        "/after.html": html("<p>the crawl goes on</p>"),
    }


async def _crawl(tmp_path: Path, parse: dict[str, object]) -> tuple[dict[str, dict[str, object]], list[str], dict[str, int]]:
    async with serve(_routes()) as site:  # type: ignore[arg-type]
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={
                "crawl": {"max_pages": 50},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), "max_body_size": 1 << 20},
                "parse": parse,
            },
            model={"name": "keyword", "keywords": ["kitten", "kittens"]},
        )  # fmt: skip
        paths = site.paths()
    rows = {
        json.loads(line)["url"].rsplit("/", 1)[1]: json.loads(line)
        for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    }
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    return rows, paths, counters


async def test_crawl_reads_pdfs_and_follows_their_links(tmp_path: Path) -> None:
    rows, paths, counters = await _crawl(tmp_path, {})
    report = rows["report.pdf"]
    assert report["content_type"] == "application/pdf"
    assert report["pdf_pages"] == 2
    assert report["relevant"] is True
    assert report["title"] == "Kitten report"
    assert report["out_links"] == 2
    assert "/from-pdf.html" in paths  # its link annotation followed
    assert rows["from-pdf.html"]["relevant"] is True
    # each hostile document is one failure of its URL; the crawl went on
    assert rows["secret.pdf"]["error"] == "pdf-encrypted"
    assert rows["broken.pdf"]["error"] == "pdf-broken"
    assert rows["nested.pdf"]["error"] == "pdf-broken"
    assert rows["bomb.pdf"]["error"] in ("pdf-limit", "pdf-broken")  # cut at max_body_size: broken
    assert counters["pdf_encrypted"] == 1
    assert "/after.html" in paths


async def test_pdfs_left_alone_when_off(tmp_path: Path) -> None:
    _rows, paths, counters = await _crawl(tmp_path, {"pdf": False})
    assert not any(p.endswith(".pdf") for p in paths)  # .pdf links refused by extension
    assert counters["link_rejected_extension"] == 5
    assert "/after.html" in paths
