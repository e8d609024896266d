"""The crawl's duplicate pages: each parsed page checked against the pages seen
(:mod:`focuscrawl.parse.duplicates`), a duplicate's links dropped unless
``parse.follow_duplicates``, and its URL compared with its original's for session
parameters (:mod:`focuscrawl.urls.session_params`), removed from later links."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace

from focuscrawl.parse.duplicates import DuplicateIndex
from focuscrawl.settings import ParseSettings
from focuscrawl.types import Link, Page
from focuscrawl.urls import host_of
from focuscrawl.urls.session_params import SessionParams

log = logging.getLogger(__name__)


class PageDuplicates:
    """The recorder's one object for duplicates: the index, the learned parameters, counts."""

    def __init__(self, parse: ParseSettings, counters: Counter[str], *, has_text: bool) -> None:
        self.counters = counters
        self.follow = parse.follow_duplicates
        # the text is parsed only for a reader of more than links: without it, no judgement
        self.index = (
            DuplicateIndex(similarity=parse.dedup_similarity, min_words=parse.dedup_min_words,
                           max_pages=parse.dedup_max_pages)
            if parse.dedup and has_text else None
        )  # fmt: skip
        self.sessions = SessionParams(parse.session_params_after)

    def check(self, page: Page) -> str | None:
        """The URL of the page ``page`` duplicates, or None. A duplicate's links are
        dropped here (unless followed) and its URL taught to the session parameters."""
        if self.index is None:
            return None
        found = self.index.check(page.url, page.text)
        if found is None:
            return None
        self.counters["duplicates_exact" if found.exact else "duplicates_near"] += 1
        if not self.follow:
            page.links = []
        if self.sessions.after:
            for name in self.sessions.observe(page.url, found.of):
                self.counters["session_params_learned"] += 1
                log.info("session parameter learned: %s on %s", name, host_of(page.url))
        return found.of

    def clean_links(self, links: list[Link], url: str) -> list[Link]:
        """``links`` with their hosts' learned session parameters removed, merged by URL
        (and the page's own URL left out); as they are while nothing is learned."""
        if not self.sessions.learned:
            return links
        out: dict[str, Link] = {}
        for link in links:
            clean = self.sessions.clean(link.url)
            if clean != link.url:
                self.counters["session_params_removed"] += 1
                link = replace(link, url=clean)
            if clean != url:
                out.setdefault(clean, link)
        return list(out.values())
