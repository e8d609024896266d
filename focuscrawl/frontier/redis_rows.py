"""How the Redis frontier's rows and arguments are written: one concept, the codec
shared by the store and its pop (:mod:`focuscrawl.frontier.redis_scripts` is the
Lua side of the same format)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis

from focuscrawl.exceptions import FrontierError
from focuscrawl.types import QueuedURL

__all__ = [
    "MAX_PARTITIONS",
    "Row",
    "checked_url",
    "connect",
    "float_arg",
    "partition_host",
    "queued",
    "row_of",
    "text",
]

# state, tier, score, depth, layer, seq, host, first parent ("" = none)
Row = tuple[int, int, float, int, int, int, str, str]


MAX_PARTITIONS = 1 << 20


def server_url(url: str) -> tuple[str, int | None]:
    """``url`` without the store's own option, and that option: ``?partitions=N``, the
    partitions of a crawl's namespace when it is made (an existing one keeps its own).
    A DB that is not a number, partitions out of 1..2^20: one line, not a silent default.

    >>> server_url("redis://127.0.0.1:6390/0?partitions=4096")
    ('redis://127.0.0.1:6390/0', 4096)
    >>> server_url("redis://h:1/0?socket_timeout=5")
    ('redis://h:1/0?socket_timeout=5', None)
    >>> server_url("redis://h:1/abc")
    Traceback (most recent call last):
    focuscrawl.exceptions.FrontierError: frontier redis://h:1/abc: the database '/abc' is not a number (redis://HOST:PORT/DB)
    """
    parts = urlsplit(url)
    db = parts.path.strip("/")
    if parts.scheme in ("redis", "rediss") and db and not db.isdigit():
        raise FrontierError(
            f"frontier {url}: the database {parts.path!r} is not a number (redis://HOST:PORT/DB)"
        )
    query = parse_qsl(parts.query, keep_blank_values=True)
    found = [v for k, v in query if k == "partitions"]
    if not found:
        return url, None
    try:
        partitions = int(found[-1])
    except ValueError:
        raise FrontierError(f"frontier {url}: partitions={found[-1]!r} is not a number") from None
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise FrontierError(f"frontier {url}: partitions={partitions}: from 1 to {MAX_PARTITIONS}")
    rest = urlencode([(k, v) for k, v in query if k != "partitions"])
    return urlunsplit(parts._replace(query=rest)), partitions


def connect(url: str) -> Any:
    """A client of the Redis at ``url``: a cluster client if it is a node of a Redis
    Cluster (keys and scripts routed to their slots' nodes), else a plain one. Scripts
    are sent with ``execute_command("EVALSHA", ...)``, which both clients' pipelines
    route by the script's key (a cluster pipeline refuses its ``evalsha`` method)."""
    client = redis.Redis.from_url(server_url(url)[0])
    if not int(client.info("cluster").get("cluster_enabled", 0)):
        return client
    client.close()
    return redis.RedisCluster.from_url(server_url(url)[0])


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
