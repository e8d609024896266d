"""PDF documents -> :class:`~focuscrawl.types.Page` with pypdf (issue 37 item 2).

A PDF's text (its first ``parse.pdf_max_pages`` pages) is judged by the same models
as an HTML page's, its title is the document's, and its links are its link
annotations' URIs. A document is read within ``parse.pdf_max_seconds`` of wall-clock
time (a timer interrupts the extraction in the main thread; elsewhere the time is
checked between pages) and pypdf's own decompression limits (a stream inflating past
its bounds raises). An encrypted document (no empty password), a broken one, one that
runs out of time or past a limit, is one :class:`PdfError` with a short reason, which
the recorder counts and logs as that URL's failure.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from focuscrawl.parse.html import page_from_fetch
from focuscrawl.settings import ParseSettings
from focuscrawl.types import FetchResult, Link, Page
from focuscrawl.urls import normalize_url

PDF = "application/pdf"
PAGES = "pdf:pages"  # Page.meta's key for the number of PDF pages read
_MAX_ANNOTATIONS = 1000  # link annotations read per PDF page

logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings on odd files are ours to count


class PdfError(Exception):
    """A PDF that gave no page: ``reason`` is ``pdf-encrypted``, ``pdf-timeout``,
    ``pdf-limit`` or ``pdf-broken``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


class _OutOfTime(BaseException):
    """The timer of :func:`_deadline` fired."""


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` of wall-clock time (main thread only;
    elsewhere a no-op: the caller also checks between pages)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _links(page: Any, base: str) -> list[Link]:
    """The URIs of a PDF page's link annotations, normalised against ``base``."""
    from pypdf.generic import DictionaryObject
    out: list[Link] = []
    annots = page.get("/Annots")
    if annots is None:
        return out
    for ref in list(annots.get_object())[:_MAX_ANNOTATIONS]:
        annot = ref.get_object()
        if not isinstance(annot, DictionaryObject) or annot.get("/Subtype") != "/Link":
            continue
        action = annot.get("/A")
        action = action.get_object() if action is not None else None
        if not isinstance(action, DictionaryObject) or action.get("/S") != "/URI":
            continue
        uri = action.get("/URI")
        url = normalize_url(str(uri), base) if uri is not None else None
        if url is not None:
            out.append(Link(url))
    return out


def read_pdf(body: bytes, url: str, *, max_pages: int, max_seconds: float) -> tuple[str, str, list[Link], int]:
    """Title, text, links and the number of pages read of a PDF, or a :class:`PdfError`."""
    # pypdf (and the cryptography it imports) loaded with the first PDF, not at every start
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, LimitReachedError

    started = time.monotonic()
    texts: list[str] = []
    links: dict[str, Link] = {}
    read = 0
    try:
        with _deadline(max_seconds):
            reader = PdfReader(io.BytesIO(body), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise PdfError("pdf-encrypted")
            info = reader.metadata
            title = str(info.get("/Title") or "").strip() if info is not None else ""
            for page in reader.pages:
                if max_pages and read >= max_pages:
                    break
                if max_seconds and time.monotonic() - started > max_seconds:
                    raise _OutOfTime
                texts.append(page.extract_text() or "")
                for link in _links(page, url):
                    links.setdefault(link.url, link)
                read += 1
    except PdfError:
        raise
    except _OutOfTime:
        raise PdfError("pdf-timeout", f"more than {max_seconds:g} s") from None
    except FileNotDecryptedError:
        raise PdfError("pdf-encrypted") from None
    except LimitReachedError as exc:
        raise PdfError("pdf-limit", str(exc)[:200]) from None
    except Exception as exc:  # any malformed file (pypdf's errors, RecursionError, MemoryError...)
        raise PdfError("pdf-broken", f"{type(exc).__name__}: {str(exc)[:200]}") from None
    return title, " ".join(" ".join(texts).split()), list(links.values()), read


def page_from_result(
    result: FetchResult, parse: ParseSettings, *, max_links: int = 0, links_only: bool = False
) -> Page:
    """The page of a fetched answer: a PDF (``parse.pdf``) or HTML (:func:`page_from_fetch`),
    the rendered DOM where a browser rendered it (``fetch.render``)."""
    if result.rendered is not None:  # links and text from the DOM a browser built
        result = dataclasses.replace(result, body=result.rendered, charset="utf-8", utf8_checked=True)
    if not (parse.pdf and result.content_type == PDF):
        return page_from_fetch(
            result, context_words=parse.context_words, max_links=max_links, links_only=links_only
        )
    title, text, links, read = read_pdf(
        result.body, result.final_url, max_pages=parse.pdf_max_pages, max_seconds=parse.pdf_max_seconds
    )
    if max_links:
        links = links[:max_links]
    return Page(
        url=result.final_url, title=title, text=text, links=links, meta={PAGES: str(read)},
        status=result.status, content_type=PDF, headers=result.headers, body=result.body,
    )  # fmt: skip
