"""CPU per page of the crawler's per-page stages, on real pages of the test web, no network.

    python benchmarks/bench_pipeline.py [--archive ../shared/testweb/wikispeedia.warc.gz] [--pages 600]

Each stage runs over the same pages several times; the best round is printed as
CPU ms per page (process time, so a busy machine inflates the numbers less than
wall time would; say the load average with them). Stages: the full parse and the
links-only parse (bfs, OPIC), the WARC pair as written now and as warcio wrote
it before (level 9), and the pages.jsonl line.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.parse.html import parse_html
from focuscrawl.replay.archive import iter_responses
from focuscrawl.types import FetchResult, PageRecord

_UA = "focuscrawl/0.1 (+https://github.com/focuscrawl/focuscrawl; research crawler)"


def load(archive: Path, n: int) -> list[tuple[FetchResult, str]]:
    """Up to ``n`` HTML 200 answers of ``archive`` as fetch results, with their decoded text."""
    out: list[tuple[FetchResult, str]] = []
    for rec in iter_responses(archive):
        if rec.status != 200 or "html" not in rec.content_type.lower():
            continue
        charset = detect_charset(rec.content_type, rec.body)
        result = FetchResult(
            rec.url, rec.url, 200, dict(rec.headers), rec.body, "text/html", charset, reason="OK",
            request_headers={"Host": rec.url.split("/")[2], "User-Agent": _UA, "Accept": "text/html"},
        )  # fmt: skip
        out.append((result, decode_html(rec.body, charset)))
        if len(out) >= n:
            break
    return out


def best_ms(run: Callable[[], None], pages: int, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best * 1e3 / pages


def warcio_pairs(results: list[FetchResult], path: Path) -> None:
    """The WARC pairs as the writer before issue 11 built them (warcio, gzip level 9)."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for result in results:
            head = [(k, v) for k, v in result.headers.items() if k.lower() != "content-length"]
            http = StatusAndHeaders("200 OK", [*head, ("Content-Length", str(len(result.body)))],
                                    protocol="HTTP/1.1")  # fmt: skip
            request = StatusAndHeaders("GET / HTTP/1.1", list(result.request_headers.items()), is_http_request=True)
            response = writer.create_warc_record(
                result.url, "response", payload=io.BytesIO(result.body), length=len(result.body), http_headers=http
            )
            req = writer.create_warc_record(result.url, "request", payload=io.BytesIO(b""), length=0, http_headers=request)
            writer.write_request_response_pair(req, response)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "testweb" / "wikispeedia.warc.gz")
    parser.add_argument("--pages", type=int, default=600)
    args = parser.parse_args()
    pages = load(args.archive, args.pages)
    n = len(pages)
    results = [r for r, _ in pages]
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))

    def warc_now() -> None:
        out = WarcOutput(tmp / "now.warc.gz")
        for i, result in enumerate(results):
            out.write(result)
            if i % 50 == 49:
                out.sync()  # a commit every 50 pages, as the engine does
        out.close()
        (tmp / "now.warc.gz").unlink()

    def jsonl() -> None:
        out = JsonlOutput(tmp / "pages.jsonl")
        for r in results:
            out.write(PageRecord(r.url, 200, 3, r.url, 0.5, None, time.time(), "text/html", len(r.body), 30, title="t"))
        out.close()
        (tmp / "pages.jsonl").unlink()

    def parse_full() -> None:
        for result, html in pages:
            parse_html(result.url, html)

    def parse_links() -> None:
        for result, html in pages:
            parse_html(result.url, html, links_only=True)

    stages: list[tuple[str, Callable[[], None]]] = [
        ("parse, full (text, contexts, classes)", parse_full),
        ("parse, links only (bfs, OPIC)", parse_links),
        ("WARC pair, focuscrawl writer", warc_now),
        ("WARC pair, warcio at level 9 (before)", lambda: warcio_pairs(results, tmp / "old.warc.gz")),
        ("pages.jsonl line", jsonl),
    ]
    print(f"{n} pages of {args.archive.name}, load average {os.getloadavg()[0]:.2f}")
    for name, run in stages:
        print(f"  {name:40s} {best_ms(run, n):7.3f} ms CPU per page")


if __name__ == "__main__":
    main()
