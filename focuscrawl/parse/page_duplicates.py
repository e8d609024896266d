"""The crawl's duplicate pages: each parsed page checked against the pages seen
(:mod:`focuscrawl.parse.duplicates`), a duplicate's links dropped unless
``parse.follow_duplicates``, and its URL compared with its original's for session
parameters (:mod:`focuscrawl.urls.session_params`), removed from later links.

What the index learns is kept in a journal (:meth:`PageDuplicates.take_journal`) that
the engine commits into the crawl DB with the rest of a commit; a resume replays it
(:meth:`PageDuplicates.restore`), so a copy fetched after a kill -9 and ``--resume``
is found a duplicate exactly as in a crawl never stopped."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import Protocol

import numpy as np

from focuscrawl.parse.duplicates import DuplicateIndex, Fingerprint, band_keys, fingerprint
from focuscrawl.settings import ParseSettings
from focuscrawl.types import Link, Page
from focuscrawl.urls import host_of
from focuscrawl.urls.session_params import SessionParams

log = logging.getLogger(__name__)

_KEY = "dedup"  # the crawl DB's keys of the index's journal


class MetaJournal(Protocol):
    """The crawl DB's small named values (focuscrawl.frontier.base.RunJournal's)."""

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...


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
        # since the last commit: "A url digest sketch words" (a page indexed) and
        # "D url original" (a duplicate seen: the session parameters' evidence)
        self._journal: list[str] = []

    def take_journal(self) -> str | None:
        """What the index learned since the last call, as one text (None: nothing)."""
        if not self._journal:
            return None
        text = "\n".join(self._journal)
        self._journal = []
        return text

    @staticmethod
    def commit(journal: MetaJournal, chunk: str | None) -> None:
        """Add ``chunk`` (from :meth:`take_journal`) to the crawl DB's ``journal``, in
        the transaction about to be committed: keys ``dedup`` (the count), ``dedup.<n>``."""
        if chunk:
            n = int(journal.get_meta(_KEY) or 0)
            journal.set_meta(f"{_KEY}.{n}", chunk)
            journal.set_meta(_KEY, str(n + 1))

    def restore(self, journal: MetaJournal | None) -> None:
        """Learn again, in order, what was committed into ``journal`` before a resume."""
        for i in range(int(journal.get_meta(_KEY) or 0) if journal is not None else 0):
            for line in (journal.get_meta(f"{_KEY}.{i}") or "").split("\n"):  # type: ignore[union-attr]
                kind, url, *rest = line.split("\t")
                if kind == "A" and self.index is not None:
                    sketch = np.frombuffer(bytes.fromhex(rest[1]), dtype="<u4").astype(np.uint32)
                    fp = Fingerprint(int(rest[0], 16), sketch, int(rest[2]))
                    self.index.add(url, fp, band_keys(sketch))
                elif kind == "D" and self.sessions.after:
                    self.sessions.observe(url, rest[0])

    def check(self, page: Page) -> str | None:
        """The URL of the page ``page`` duplicates, or None. A duplicate's links are
        dropped here (unless followed) and its URL taught to the session parameters."""
        if self.index is None:
            return None
        fp = fingerprint(page.text)
        found, keys = self.index.find(fp)
        if found is None:
            if self.index.add(page.url, fp, keys):
                sketch = fp.sketch.astype("<u4").tobytes().hex()
                self._journal.append(f"A\t{page.url}\t{fp.digest:x}\t{sketch}\t{fp.words}")
            return None
        self._journal.append(f"D\t{page.url}\t{found.of}")
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
