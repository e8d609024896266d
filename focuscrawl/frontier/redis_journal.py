"""The run journal of the Redis frontier: its meta, commit and close, and drop.

:class:`RedisJournal` is the :class:`~focuscrawl.frontier.base.RunJournal` role of
:class:`~focuscrawl.frontier.redis_store.RedisFrontier`. Each script is applied when
its call returns, and Redis has no transaction spanning the engine's batch, so the
commit is a no-op (durability: see :mod:`focuscrawl.frontier.redis_store`); the run
state is one hash of the namespace. ``drop`` deletes the whole namespace.
"""

from __future__ import annotations

from focuscrawl.frontier.redis_core import RedisCore
from focuscrawl.frontier.redis_heads import QueueHeads
from focuscrawl.frontier.redis_rows import text

__all__ = ["RedisJournal"]


class RedisJournal:
    """The run journal of a Redis frontier (see the module docstring)."""

    def __init__(self, core: RedisCore) -> None:
        self._core = core

    def get_meta(self, key: str) -> str | None:
        raw = self._core._db.hget(self._core._meta, key)
        return None if raw is None else text(raw)

    def set_meta(self, key: str, value: str) -> None:
        self._core._db.hset(self._core._meta, key, value)

    def commit(self) -> None:
        """Nothing to do: every call's scripts are applied when it returns (see the module)."""

    def close(self) -> None:
        self._core._db.close()

    def drop(self) -> int:
        """Delete the whole namespace (every key under the prefix); returns how many keys."""
        removed = 0
        for key in self._core._db.scan_iter(match=f"{self._core.prefix}:*", count=1000):
            removed += int(self._core._db.delete(key))
        self._core._heads = QueueHeads({})
        return removed
