"""Plain values passed between the parts of the crawler.

This module imports nothing from the package: every other module may import it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Merge(enum.Enum):
    """How a new score for an already known URL combines with the stored one.

    OTIE and OPIC accumulate cash (``ADD``); link-context prediction keeps the
    higher score (``MAX``); breadth-first keeps the first (``KEEP``); sibling and
    administrative updates overwrite (``SET``).
    """

    KEEP = "keep"
    MAX = "max"
    ADD = "add"
    SET = "set"


class URLState(enum.IntEnum):
    """Life cycle of a URL in the crawl DB."""

    QUEUED = 0  # known, waiting to be fetched
    IN_FLIGHT = 1  # handed out in a fetch list, result not yet stored
    FETCHED = 2  # fetched and recorded (any HTTP status)
    FAILED = 3  # gave up (network error after retries, robots, filtered type...)
    DROPPED = 4  # known but will never be fetched (out of budget, discarded by strategy)


@dataclass(frozen=True, slots=True)
class Link:
    """One distinct out-link of a page.

    ``count`` is how many times the page links to ``url`` (t(i, j) in P0);
    ``anchor`` and ``context`` come from the first occurrence; ``context`` is the
    window of T words around the link, anchor text included (P1).
    """

    url: str
    anchor: str = ""
    context: str = ""
    count: int = 1
    nofollow: bool = False
    # a <link rel="alternate">'s: the language of an hreflang version, "feed" for a feed
    hreflang: str = ""


@dataclass(slots=True)
class FetchResult:
    """What the fetcher got for one URL (after redirects).

    ``error`` is ``None`` when an HTTP response was received (of any status);
    otherwise it is a short machine-readable reason such as ``"timeout"``,
    ``"robots"``, ``"dns"``, ``"reset"``, ``"content-type"``, ``"content-encoding"``, ``"too-many-redirects"``,
    ``"blocked-address"``, ``"redirect-out-of-scope"`` (a redirect to where the crawl's
    scope does not let its links go: the redirect's answer, its target not requested).
    ``body`` holds at most the configured maximum size;
    ``truncated`` says it was cut.
    """

    url: str
    final_url: str
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""
    charset: str | None = None
    utf8_checked: bool = False  # the charset's detection found ``body`` valid UTF-8
    error: str | None = None
    redirects: tuple[str, ...] = ()
    truncated: bool = False
    elapsed: float = 0.0
    fetched_at: float = 0.0
    request_headers: dict[str, str] = field(default_factory=dict)
    http_version: str = "1.1"
    reason: str = ""
    rendered: bytes | None = None  # the DOM a browser built from ``body`` (fetch.render)
    sitemaps: tuple[str, ...] = ()  # its host's sitemaps, on the first result that knows them
    # a 304 to a conditional re-fetch: (URI, WARC-Date) of the earlier record it refers to
    refers_to: tuple[str, str] | None = None
    # a sitemap read whole as it arrived, past the body cap (a parse.sitemaps.StreamedSitemap)
    streamed: object | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and 200 <= self.status < 300


@dataclass(slots=True)
class Page:
    """A fetched and parsed HTML page: everything models and strategies may use."""

    url: str
    html: str = ""
    title: str = ""
    text: str = ""
    lang: str = ""  # the <html lang> attribute, lower-cased, as written
    meta: dict[str, str] = field(default_factory=dict)
    class_names: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()
    links: list[Link] = field(default_factory=list)
    status: int = 200
    content_type: str = "text/html"
    charset: str | None = None
    depth: int = 0
    parent: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    relevance: float | None = None  # the crawl model's score, set before strategies see the page
    relevant: bool | None = None  # and its binary judgement (1_i of P0)
    canonical: str = ""  # <link rel="canonical">, normalised ("": none)
    main_text: str | None = None  # trafilatura's main text, where a model extracted it
    markup_cut: bool = False  # parsed to its first parse.guard.MAX_TAGS tags only (the rest unread)


@dataclass(frozen=True, slots=True)
class QueuedURL:
    """A URL handed out by the frontier in a fetch list."""

    url: str
    score: float
    depth: int
    host: str
    parent: str | None = None
    layer: int = 0
    seq: int = 0  # discovery order
    tier: int = 0  # priority tier: a higher tier is always served first (P2 buckets)


@dataclass(frozen=True, slots=True)
class ScoreUpdate:
    """A change a strategy asks for on the score (or another column) of a known URL.

    ``column`` names a per-URL value the strategy declared (``Strategy.columns``),
    or ``"score"``, the priority itself. ``reason`` is the provenance: a short
    text naming the equation term, written to ``decisions.jsonl``.
    """

    url: str
    score: float
    merge: Merge = Merge.MAX
    column: str = "score"
    reason: str = ""


@dataclass(slots=True)
class LinkScore:
    """An out-link together with the score the strategy gives it.

    ``merge`` overrides the strategy's merge rule for this link (None: the
    strategy's); ``tier`` is its priority tier (None: 0); ``reason`` says why it
    got its score (which equation term), for ``focuscrawl why``.
    """

    link: Link
    score: float
    merge: Merge | None = None
    tier: int | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ColumnOp:
    """A whole-column update, for every known URL at once:
    ``dst = (dst if add else 0) + Σ factor · src`` over ``terms`` (``"score"`` is a column).

    P0's layer end hands each page the cash its relevant parents gave it plus its
    share of the redistributed cash this way, in one pass over the frontier.
    """

    dst: str
    terms: tuple[tuple[str, float], ...] = ()
    add: bool = True


@dataclass(slots=True)
class Decision:
    """What a strategy returns after seeing a page: scores, never queue operations.

    * ``links``: out-links to add (new URLs) or to merge into known queued URLs,
      with the strategy's merge rule.
    * ``updates``: score changes for other URLs (e.g. OPIC cash, re-crawl).
    * ``raise_siblings``: raise the queued siblings of this page (the other
      children of its parent) to at least this score (P3, FCrawl).
    * ``recrawl``: fetched URLs to fetch again (OTIE redistributes cash this way).
    * ``host_updates``: ``(host, score, merge)``: rescore every queued URL of a host
      (Tamura's server-based policy).
    * ``tiers``: ``(url, tier)``: move known URLs to another priority tier.
    * ``column_ops``: whole-column updates (see :class:`ColumnOp`), applied last.
    * ``reason``: provenance of the sibling raise and host updates.
    """

    links: list[LinkScore] = field(default_factory=list)
    updates: list[ScoreUpdate] = field(default_factory=list)
    raise_siblings: float | None = None
    recrawl: list[str] = field(default_factory=list)
    host_updates: list[tuple[str, float, Merge]] = field(default_factory=list)
    tiers: list[tuple[str, int]] = field(default_factory=list)
    column_ops: list[ColumnOp] = field(default_factory=list)
    reason: str = ""

    def is_empty(self) -> bool:
        return not (
            self.links or self.updates or self.recrawl or self.host_updates or self.tiers
            or self.column_ops
        ) and self.raise_siblings is None


@dataclass(slots=True)
class PageRecord:
    """One line of ``pages.jsonl``."""

    url: str
    status: int
    depth: int
    parent: str | None
    score: float | None
    relevance: float | None
    fetched_at: float
    content_type: str
    size: int
    out_links: int
    error: str | None = None
    final_url: str | None = None
    layer: int = 0
    relevant: bool | None = None
    lang: str | None = None
    title: str | None = None
    truncated: bool = False
    recrawl: bool = False  # a page fetched again (not counted against the page budget)
    extra: dict[str, Any] = field(default_factory=dict)
