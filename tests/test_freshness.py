"""Conditional re-fetching (issue 36, item 3): a re-fetch of a URL whose earlier answer
carried validators sends If-None-Match / If-Modified-Since; a 304 is archived as a
revisit record (server-not-modified) and a pages.jsonl line ``unchanged``, without a body."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.freshness import Validators
from focuscrawl.fetch.transport import Answer, BytesBody
from focuscrawl.output.warc_scan import answers
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.settings import FetchSettings

CATS = {"name": "keyword", "keywords": ["cat", "cats", "kitten", "feline"], "threshold": 0.25}


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text(encoding="utf-8").splitlines()]


def test_otie_recrawls_ask_conditionally_and_a_304_costs_no_body(sample_archive: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    crawl(list(SAMPLE_SEEDS), run, strategy="otie", model=CATS, max_pages=30, archives=[sample_archive],
          strategy_params={"recrawl_every": 1}, fetch_list_size=5)  # fmt: skip
    again = [r for r in _lines(run) if r["recrawl"]]
    assert len(again) == 30 // 5 - 1
    # the replay web does not change: every re-crawl is answered 304, with no body
    assert all((r["status"], r["size"], r["unchanged"]) == (304, 0, True) for r in again)
    archived = list(answers(run / "corpus.warc.gz"))
    revisits = [a for a in archived if a.not_modified]
    assert len(revisits) == len(again)
    firsts = {a.uri: a for a in archived if not a.not_modified}
    assert all(a.uri in firsts and a.digest is None for a in revisits)
    with gzip.open(run / "corpus.warc.gz", "rb") as fh:
        warc = fh.read()
    assert warc.count(b"WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified") == len(again)
    assert warc.count(b"If-None-Match: ") == len(again)  # in the request records


def test_conditional_refetch_off_fetches_whole_pages(sample_archive: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    crawl(list(SAMPLE_SEEDS), run, strategy="otie", model=CATS, max_pages=30, archives=[sample_archive],
          strategy_params={"recrawl_every": 1}, fetch_list_size=5,
          fetch={"conditional_refetch": False})  # fmt: skip
    again = [r for r in _lines(run) if r["recrawl"]]
    assert again
    assert all(r["status"] == 200 and r["size"] > 0 for r in again)


class _Server:
    """A host that answers 304 to every request, conditional or not (a broken cache),
    but 200 when asked a second time without validators."""

    def __init__(self) -> None:
        self.asked: list[dict[str, str]] = []

    async def __aenter__(self) -> _Server:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    @asynccontextmanager
    async def request(self, url: str, headers: Mapping[str, str], **_: Any) -> AsyncIterator[Answer]:
        self.asked.append(dict(headers))
        if url.endswith("robots.txt"):
            yield Answer(404, "Not Found", BytesBody(b""), [], "1.1", dict(headers))
            return
        status = 304 if len(self.asked) == 2 else 200
        body = b"" if status == 304 else b"<html><title>x</title></html>"
        fields = [("Content-Type", "text/html"), ("ETag", '"v1"')] if status == 200 else [("ETag", '"v1"')]
        yield Answer(status, "", BytesBody(body), fields, "1.1", dict(headers))


@pytest.mark.parametrize("kept", [False, True], ids=["nothing-kept", "kept"])
async def test_a_304_without_an_earlier_record_is_fetched_again(kept: bool) -> None:
    server = _Server()
    validators = Validators()
    if kept:
        validators.keep("http://a.test/", {"ETag": '"v0"'}, "http://a.test/", "2024-05-01T10:00:00Z")
    fetcher = HttpFetcher(FetchSettings(delay=0.0, allow_private=("0.0.0.0/0",)), server, validators=validators)
    logger = logging.getLogger("focuscrawl.fetch.fetcher")
    told: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: told.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        async with fetcher:
            result = await fetcher.fetch("http://a.test/")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    if kept:  # a 304 to the conditional request: the earlier record is referred to
        assert (result.status, result.refers_to) == (304, ("http://a.test/", "2024-05-01T10:00:00Z"))
        assert server.asked[1]["If-None-Match"] == '"v0"'
        assert not told
    else:  # asked without validators, answered 304: one log line, asked again, nothing lost
        assert (result.status, result.body, result.refers_to) == (200, b"<html><title>x</title></html>", None)
        assert fetcher.counters["not_modified_unknown"] == 1
        assert told == [
            "http://a.test/: 304 Not Modified with no earlier record kept; fetched again unconditionally"
        ]
        assert all("If-None-Match" not in h for h in server.asked)
        assert validators.conditional("http://a.test/") == {"If-None-Match": '"v1"'}


def test_a_resumed_crawl_reads_the_validators_back_from_its_warc(sample_archive: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    common: dict[str, Any] = {"strategy": "otie", "model": CATS, "archives": [sample_archive]}
    crawl(list(SAMPLE_SEEDS), run, max_pages=15, strategy_params={"recrawl_every": 1}, fetch_list_size=5, **common)
    before = {r["url"] for r in _lines(run)}
    crawl([], run, resume=True, max_pages=30, **common)
    again = [r for r in _lines(run)[len(before):] if r["recrawl"]]
    # re-crawls after the resume of pages fetched before it: asked conditionally all the same
    assert any(r["url"] in before for r in again)
    assert all((r["status"], r["unchanged"]) == (304, True) for r in again)
