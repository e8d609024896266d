"""How the Redis frontier's rows and arguments are written: one concept, the codec
shared by the store and its pop (:mod:`focuscrawl.frontier.redis_scripts` is the
Lua side of the same format)."""

from __future__ import annotations

from focuscrawl.exceptions import FrontierError
from focuscrawl.types import QueuedURL

__all__ = ["Row", "checked_url", "float_arg", "partition_host", "queued", "row_of", "text"]

# state, tier, score, depth, layer, seq, host, first parent ("" = none)
Row = tuple[int, int, float, int, int, int, str, str]


def partition_host(host: str) -> str:
    """The host a partition is chosen by: lower case, no port, no IPv6 brackets.

    >>> partition_host("Example.org:8080"), partition_host("[::1]:80")
    ('example.org', '::1')
    """
    host = host.lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.split(":", 1)[0]


def float_arg(value: float) -> str:
    return repr(float(value))


def text(raw: bytes | str) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else raw


def row_of(raw: bytes | str) -> Row:
    f = text(raw).split("\0")
    return (int(f[0]), int(f[1]), float(f[2]), int(f[3]), int(f[4]), int(f[5]), f[6], f[7])


def queued(url: str, row: Row) -> QueuedURL:
    _, tier, score, depth, layer, seq, host, parent = row
    return QueuedURL(url, score, depth, host, parent or None, layer, seq, tier)


def checked_url(url: str) -> str:
    if "\0" in url:
        raise FrontierError(f"URL {url!r} holds a NUL character")
    return url
