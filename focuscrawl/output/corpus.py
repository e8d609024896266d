"""A run as a corpus people load: one row per fetched page, with its main text.

``pages.jsonl`` says what was fetched and why (status, depth, parent, the strategy's
score, the model's relevance) but holds no text; ``corpus.warc.gz`` holds the bytes.
:func:`corpus_rows` joins the two: the WARC files are scanned once for the offset of
every response record (no bodies kept), alongside the pages read in fetch order, and
each page's record is read at its offset and reduced to its main text the way the
models read it (:func:`main_text`: trafilatura, else the parser's visible text).
Rows are made by a pool of processes, a bounded window of batches at a time, so
memory stays flat whatever the crawl's size; :func:`write_parquet` and
:func:`write_jsonl` stream them out.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import orjson
from selectolax.lexbor import LexborHTMLParser
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.exceptions import ArchiveError, ConfigError
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.output.committed import committed_offsets
from focuscrawl.output.layout import run_files
from focuscrawl.output.warc_scan import page_offsets, read_payload
from focuscrawl.output.writers import TEXTS_NAME, text_offset
from focuscrawl.parse.guard import guard_html
from focuscrawl.parse.html import parse_html
from focuscrawl.parse.maintext import extracted_text
from focuscrawl.parse.pdf import PdfError, read_pdf
from focuscrawl.replay.archive import read_response_at
from focuscrawl.settings import ParseSettings
from focuscrawl.types import Page

PAGES_NAME = "pages.jsonl"
WARC_NAME = "corpus.warc.gz"
#: the columns of a row, in order (the Parquet schema and the JSONL keys)
COLUMNS = (
    "url", "final_url", "status", "fetched_at", "title", "text", "language", "relevance",
    "score", "depth", "parent", "content_type", "warc_file", "warc_offset",
)  # fmt: skip
_BATCH = 32  # rows per task handed to a process
#: what :func:`visible_text` leaves out: what is never shown, and the HTML5 elements of
#: a page's frame (its menus, banner, footer, side bar); not <form> (old pages wrap their
#: whole body in one)
_NOT_TEXT = [
    "head", "script", "style", "noscript", "template", "svg", "iframe", "select", "button",
    "nav", "header", "footer", "aside",
]  # fmt: skip


def main_text(page: Page) -> str:
    """The main text of a page as the language models read it: trafilatura's (boilerplate
    removed), else the parser's visible text (a page trafilatura cannot read)."""
    return extracted_text(page.html) or page.text


# where a page is in the run's WARC files: (file relative to the run directory, offset of
# its response record, offset of its rendered DOM's conversion record or None)
Where = tuple[str, int, int | None]


class RecordOffsets:
    """Target URL -> (WARC file relative to ``run_dir``, offset) of its response records,
    taken in file order (a URL fetched twice has two), read from the WARC files only as
    far as the pages asked for so far need: pages and records come in nearly the same
    order, so the scan runs alongside the export instead of before it (a 50,000-page
    WARC takes 4 s to scan) and holds only the records not yet asked for. WARC headers
    only are read (:mod:`.warc_scan`); a page with no record is looked for to the end, once."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._found: dict[str, list[Where]] = {}  # lists: a deque costs 600 bytes
        self._records = self._scan()

    def _scan(self) -> Iterator[tuple[str, str, int, int | None]]:
        for path in run_files(self.run_dir, WARC_NAME):
            name = str(path.relative_to(self.run_dir))
            committed = committed_offsets(path.parent)  # past it: what a resume cuts
            try:
                for url, offset, dom in page_offsets(path, 0, committed[1] if committed else None):
                    yield url, name, offset, dom
            except OSError as exc:
                raise ArchiveError(f"{path}: cannot read ({exc.strerror or exc})") from None

    def take(self, url: str) -> Where | None:
        """The first record of ``url`` not taken yet: (WARC file, offset of the response,
        offset of the DOM a browser built from it or None); None: no more in the WARC."""
        queue = self._found.get(url)
        while not queue:
            found = next(self._records, None)
            if found is None:
                return None
            self._found.setdefault(found[0], []).append(found[1:])
            queue = self._found.get(url)
        where = queue.pop(0)
        if not queue:
            del self._found[url]
        return where


def _iso(when: Any) -> str | None:
    if not isinstance(when, int | float):
        return None
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z")


class PendingRow(NamedTuple):
    """A row of the corpus whose text :func:`with_text` is still to read, and where the
    DOM a browser built of its page is (the offset of that conversion record in the
    row's WARC file; None: not rendered): the page is read from its DOM, as the crawl
    judged it, and the DOM's offset is no column of the row."""

    row: dict[str, Any]
    dom: int | None


def pending_row(page: dict[str, Any], where: Where | None, text: str | None = None) -> PendingRow:
    """:func:`page_row` and its rendered DOM's offset, for :func:`with_text`."""
    return PendingRow(page_row(page, where, text), where[2] if where is not None else None)


def page_row(page: dict[str, Any], where: Where | None, text: str | None = None) -> dict[str, Any]:
    """A row of the corpus (its :data:`COLUMNS`) from a pages.jsonl record and its WARC
    record (the main text if the crawl kept it, else not yet)."""
    return {
        "url": page.get("url"),
        "final_url": page.get("final_url") or page.get("url"),
        "status": page.get("status"),
        "fetched_at": _iso(page.get("fetched_at")),
        "title": page.get("title"),
        "text": text,
        "language": page.get("lang"),
        "relevance": page.get("relevance"),
        "score": page.get("score"),
        "depth": page.get("depth"),
        "parent": page.get("parent"),
        "content_type": page.get("content_type"),
        "warc_file": where[0] if where else None,
        "warc_offset": where[1] if where else None,
    }


def _payload(files: dict[Path, BinaryIO], path: Path, offset: int) -> tuple[str, bytes] | None:
    """(Content-Type, body) of the response record at ``offset`` (None: unreadable); the
    WARC files opened once per batch (``files``: path -> open file)."""
    try:
        fh = files.get(path)
        if fh is None:
            fh = files[path] = open(path, "rb")  # noqa: SIM115 (closed by the caller)
        found = read_payload(fh, offset)
        if found is None:  # not a record as the crawl writes them: warcio's
            record = read_response_at(path, offset)
            found = record.content_type, record.body
    except (OSError, ArchiveError, ArchiveLoadFailed):
        return None
    return found


def _pdf_text(row: dict[str, Any], body: bytes) -> None:
    """Fill in a PDF row's text and title as the crawl's model read them (the first
    ``parse.pdf_max_pages`` pages at the defaults); an unreadable document keeps none."""
    defaults = ParseSettings()
    try:
        title, text, _, _ = read_pdf(body, row["final_url"] or row["url"], max_pages=defaults.pdf_max_pages,
                                     max_seconds=defaults.pdf_max_seconds)  # fmt: skip
    except PdfError:
        return
    row["text"] = text if row["text"] is None else row["text"]
    row["title"] = row["title"] or title or None


def _html_of(run_dir: str, rows: list[PendingRow]) -> Iterator[tuple[dict[str, Any], str]]:
    """The rows still without their text or title whose page is an HTML record, each
    with its decoded HTML (its rendered DOM's, if a browser built one: what the crawl
    read); a PDF record's row gets its text and title here (the document's, as the
    crawl read it); each WARC file opened once."""
    files: dict[Path, BinaryIO] = {}
    try:
        for row, dom in rows:
            if row["warc_file"] is None or (row["text"] is not None and row["title"]):
                continue  # no record, or the text the crawl kept (texts.jsonl)
            ctype = (row["content_type"] or "").lower()
            pdf = ctype.startswith("application/pdf")
            if ctype and "html" not in ctype and not pdf:
                continue
            path = Path(run_dir) / row["warc_file"]
            found = _payload(files, path, dom) if dom is not None and not pdf else None
            if found is None:
                found = _payload(files, path, row["warc_offset"])
            if found is None:
                continue
            content_type, body = found
            if pdf:
                _pdf_text(row, body)
            else:
                yield row, decode_html(body, detect_charset(content_type or "text/html", body))
    finally:
        for fh in files.values():
            fh.close()


def with_text(run_dir: str, rows: list[PendingRow]) -> list[dict[str, Any]]:
    """The rows, the main text of those whose page is an HTML record filled in (in a
    pool process)."""
    for row, decoded in _html_of(run_dir, rows):
        # main_text(page_from_bytes(...)), the page parsed only where the text or the
        # title needs it (the parse costs an index or an export a sixth of its CPU)
        text = extracted_text(guard_html(decoded).html)  # (the parser's page.html)
        if text is None or not row["title"]:
            page = parse_html(row["final_url"] or row["url"], decoded)
            text = text or page.text
            row["title"] = row["title"] or page.title or None
        row["text"] = text
    return [pending.row for pending in rows]


def visible_text(html: str) -> tuple[str, str]:
    """(title, text) of decoded HTML, the text what a reader sees of the page without
    its frame (:data:`_NOT_TEXT` removed): the search index's text of a page the crawl's
    model did not read, at a twentieth of trafilatura's CPU (0.15 against 3.7 ms a WebKB
    page); its words hold 99.98 % of trafilatura's (and the menus' and the boilerplate's
    beside them)."""
    tree = LexborHTMLParser(guard_html(html).html)  # (the nesting guard as the parser's)
    node = tree.css_first("title")
    title = " ".join(node.text().split()) if node is not None else ""
    tree.strip_tags(_NOT_TEXT)
    root = tree.body or tree.root
    text = " ".join(root.text(separator=" ").split()) if root is not None else ""
    return title, text


def with_visible_text(run_dir: str, rows: list[PendingRow]) -> list[dict[str, Any]]:
    """:func:`with_text` with :func:`visible_text` for the pages the crawl kept no text of
    (the search index's: trafilatura costs a crawl of a model that reads no main text
    half its CPU again); the export's text column stays :func:`with_text`'s."""
    for row, decoded in _html_of(run_dir, rows):
        title, text = visible_text(decoded)
        row["title"] = row["title"] or title or None
        if row["text"] is None:
            row["text"] = text
    return [pending.row for pending in rows]


def run_pages(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The records of the run's pages.jsonl files, a line that is not a JSON object skipped."""
    for page, _ in _pages_texts(run_dir):
        yield page


def _pages_texts(run_dir: Path, *, texts: bool = False) -> Iterator[tuple[dict[str, Any], str | None]]:
    """The records of the run's pages.jsonl files, each with the main text the crawl kept
    for it in texts.jsonl beside it (with ``texts``; else None): those its crawl DB's
    last commit accounts for, as a resume keeps them (a killed or running crawl's
    later lines are not read; a directory with no crawl DB is read whole)."""
    paths = run_files(run_dir, PAGES_NAME)
    if not paths:
        raise ConfigError(f"export: {run_dir}: no {PAGES_NAME} (not a run directory?)")
    for path in paths:
        kept = _kept_texts(path.with_name(TEXTS_NAME)) if texts else iter(())
        next_at, next_text = next(kept, (None, None))
        committed = committed_offsets(path.parent)
        at = 0
        with open(path, "rb") as fh:
            for line in fh:
                start, at = at, at + len(line)
                if committed is not None and start >= committed[0]:
                    break  # past the crawl's last commit: a resume cuts it and fetches again
                text = None
                while next_at is not None and next_at <= start:
                    if next_at == start:
                        text = next_text
                    next_at, next_text = next(kept, (None, None))
                data = page_record(line)
                if data is None:
                    continue  # a torn last line of a crawl killed mid-write
                yield data, text


def page_record(line: bytes) -> dict[str, Any] | None:
    """A pages.jsonl line's record; None: not a JSON object with a URL (a torn line).
    orjson reads it (a fifth of the json module's CPU), the json module what orjson
    refuses and the crawl may have written (NaN, an int beyond 64 bits, a lone surrogate)."""
    try:
        data = orjson.loads(line)
    except ValueError:
        try:
            data = json.loads(line)
        except ValueError:
            return None
    return data if isinstance(data, dict) and "url" in data else None


def _kept_texts(path: Path) -> Iterator[tuple[int, str]]:
    """(offset in pages.jsonl, text) of a texts.jsonl, in order (none: no file)."""
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            at = text_offset(line)
            if at is None:
                return
            yield at, json.loads(line)["text"]


def in_corpus(page: dict[str, Any]) -> bool:
    """Whether a pages.jsonl record is one of the corpus's pages: a page that asked not to
    be indexed (``noindex``: archived, marked, counted nowhere) and the sitemaps and feeds
    read for their links are not (issue 36); they stay in the WARC and its index."""
    return not (page.get("noindex") or page.get("sitemap") or page.get("feed"))


def _batches(run_dir: Path) -> Iterator[list[PendingRow]]:
    offsets = RecordOffsets(run_dir)
    batch: list[PendingRow] = []
    for page, text in _pages_texts(run_dir, texts=True):
        # taken in order even when the page is left out
        where = offsets.take(page.get("final_url") or page["url"]) if page.get("status") else None
        if not in_corpus(page):
            continue
        batch.append(pending_row(page, where, text))
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def corpus_rows(run_dir: Path | str, *, jobs: int | None = None) -> Iterator[list[dict[str, Any]]]:
    """The corpus of a run as batches of rows (see :data:`COLUMNS`), in fetch order.

    ``jobs`` processes extract the text (default: the machine's cores; 1: here, no pool).
    At most ``2 * jobs`` batches are in flight, so memory does not grow with the run.
    """
    run_dir = Path(run_dir)
    jobs = max(1, jobs or os.cpu_count() or 1)
    if jobs == 1:
        for batch in _batches(run_dir):
            yield with_text(str(run_dir), batch)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: deque[Future[list[dict[str, Any]]]] = deque()
        for batch in _batches(run_dir):
            pending.append(pool.submit(with_text, str(run_dir), batch))
            if len(pending) >= 2 * jobs:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

