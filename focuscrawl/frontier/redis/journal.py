"""The run journal of the Redis frontier: its meta, commit and close, and drop.

:class:`RedisJournal` is the :class:`~focuscrawl.frontier.base.RunJournal` role of
:class:`~focuscrawl.frontier.redis.store.RedisFrontier`. Each script is applied when
its call returns, and Redis has no transaction spanning the engine's batch, so the
commit is a no-op (durability: see :mod:`focuscrawl.frontier.redis.store`); the run
state is one hash of the namespace. ``drop`` deletes the whole namespace.
"""

from __future__ import annotations

from focuscrawl.frontier.redis.namespace import Namespace
from focuscrawl.frontier.redis.rows import text

__all__ = ["RedisJournal"]


class RedisJournal:
    """The run journal of a Redis frontier (see the module docstring)."""

    def __init__(self, core: Namespace) -> None:
        self._core = core
        self._meta = core.keys.meta + "meta"

    def get_meta(self, key: str) -> str | None:
        raw = self._core.db.hget(self._meta, key)
        return None if raw is None else text(raw)

    def set_meta(self, key: str, value: str) -> None:
        self._core.db.hset(self._meta, key, value)

    def commit(self) -> None:
        """Nothing to do: every call's scripts are applied when it returns (see the module)."""

    def close(self) -> None:
        self._core.db.close()

    def drop(self) -> int:
        """Delete the whole namespace (every key under the prefix); returns how many keys."""
        return self._core.drop()
