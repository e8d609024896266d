"""The page budget of a crawl: ``crawl.max_pages``, or, for a worker of a shared crawl,
the pages it has claimed of the shared budget so far."""

from __future__ import annotations

from typing import Protocol


class Claims(Protocol):
    """A shared budget (:class:`focuscrawl.workers.Coordination`): this process's part."""

    def budget(self, fetched: int, in_flight: int) -> int:
        """This process's page budget now (it may claim more when it runs low)."""
        ...


class Budget:
    """How many pages this process may record in all (``limit``; 0: no limit).

    Local, it is ``crawl.max_pages``; shared, it grows by claims on the shared budget
    (:meth:`claim`, called as pages are recorded)."""

    def __init__(self, limit: int, claims: Claims | None = None) -> None:
        self.limit = limit
        self._claims = claims

    @property
    def shared(self) -> bool:
        return self._claims is not None

    def claim(self, fetched: int, in_flight: int) -> None:
        """A worker of a shared crawl: its limit is what it has claimed (claiming more
        when it runs low); local, nothing changes."""
        if self._claims is not None:
            self.limit = self._claims.budget(fetched, in_flight)
