"""The answers to the scripts and style sheets rendered pages load, kept for the crawl.

The pages of a site load the same bundles: a kept one is answered with no request
(none to wait a host's delay for; robots.txt allowed it when it was fetched).
"""

from __future__ import annotations

import collections

from focuscrawl.types import FetchResult

KEPT_TYPES = frozenset({"Script", "Stylesheet"})  # the DevTools protocol's resource types kept
KEPT_BYTES = 32 * 1024 * 1024  # at most this much kept, the least recently used let go


class KeptAnswers:
    """Answers to a crawl's script and style-sheet requests, by URL, within a byte budget."""

    def __init__(self, budget: int = KEPT_BYTES) -> None:
        self.budget = budget
        self.size = 0
        self._answers: collections.OrderedDict[str, FetchResult] = collections.OrderedDict()

    def get(self, url: str) -> FetchResult | None:
        answer = self._answers.get(url)
        if answer is not None:
            self._answers.move_to_end(url)
        return answer

    def keep(self, url: str, answer: FetchResult) -> None:
        """Keep a complete 200 answer that may be stored (not ``no-store`` / ``no-cache``)."""
        control = next((v for k, v in answer.headers.items() if k.lower() == "cache-control"), "").lower()
        if answer.status != 200 or answer.truncated or "no-store" in control or "no-cache" in control:
            return
        if url in self._answers or len(answer.body) > self.budget // 4:
            return
        self._answers[url] = answer
        self.size += len(answer.body)
        while self.size > self.budget:
            _, old = self._answers.popitem(last=False)
            self.size -= len(old.body)
