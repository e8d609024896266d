"""How the Redis frontier's rows and arguments are written: one concept, the codec
shared by the store and its pop (:mod:`focuscrawl.frontier.redis_scripts` is the
Lua side of the same format)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from focuscrawl.exceptions import FrontierError
from focuscrawl.types import QueuedURL

__all__ = [
    "MAX_PARTITIONS",
    "SOCKET_TIMEOUT",
    "Client",
    "RedisLost",
    "Row",
    "ScriptsLost",
    "checked_url",
    "connect",
    "float_arg",
    "partition_host",
    "queued",
    "redis_password",
    "row_of",
    "text",
]

# state, tier, score, depth, layer, seq, host, first parent ("" = none)
Row = tuple[int, int, float, int, int, int, str, str]


MAX_PARTITIONS = 1 << 20
# seconds a reply may take (a CLIENT PAUSE, a slow script) before the client gives up,
# for a client that holds no lease; a worker's follows its leases (WorkerFrontier)
SOCKET_TIMEOUT = 20.0


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


def connect(url: str, *, timeout: float = SOCKET_TIMEOUT) -> Any:
    """A client of the Redis at ``url``: a cluster client if it is a node of a Redis
    Cluster (keys and scripts routed to their slots' nodes), else a plain one. Scripts
    are sent with ``execute_command("EVALSHA", ...)``, which both clients' pipelines
    route by the script's key (a cluster pipeline refuses its ``evalsha`` method).

    The password comes from the environment (:func:`redis_password`), never from the
    URL, which workers' argv, run.json and the published run hold; a Redis on another
    machine needs one (whoever can write the crawl's keys steers its workers).

    ``timeout``: the seconds a reply may take (redis-py's default, 5 s, ended a crawl at
    a 10 s CLIENT PAUSE although its leases last 30 s)."""
    password = redis_password()
    parts = urlsplit(url)
    if parts.password is not None:
        raise FrontierError(
            f"the frontier URL holds a password (it would show in process lists, run.json "
            f"and the published run): give it in {PASSWORD_ENV} or a file named by "
            f"{PASSWORD_FILE_ENV}"
        )
    if password is None and parts.scheme != "unix" and not _loopback(parts.hostname or ""):
        raise FrontierError(
            f"frontier {url}: a Redis on another machine needs a password (requirepass, or "
            f"an ACL user's: redis://USER@HOST...): set {PASSWORD_ENV} or {PASSWORD_FILE_ENV}"
        )
    server = server_url(url)[0]
    # no retry: a command whose reply was lost may have been applied (a pop twice is a
    # batch of URLs in flight for ever); the crawl stops in one line and resumes instead
    client = Client(redis.Redis.from_url(server, password=password, socket_timeout=timeout,
                                         retry=Retry(NoBackoff(), 0)), url)  # fmt: skip
    if not int(client.info("cluster").get("cluster_enabled", 0)):
        return client
    client.close()
    return Client(redis.RedisCluster.from_url(server, password=password, socket_timeout=timeout),
                  url)  # fmt: skip


class RedisLost(FrontierError):
    """The Redis server cannot be reached (gone, restarted, a network cut) or did not
    answer within the client's timeout: the crawl stops, resumable once it is back."""


class ScriptsLost(RedisLost, redis.exceptions.NoScriptError):
    """Redis no longer holds the crawl's scripts (it restarted): one line, and still a
    ``NoScriptError`` for the caller that loads its script again and resends."""


def redis_failure(url: str, exc: redis.RedisError) -> FrontierError:
    """The one line for a Redis error ``exc`` of the server at ``url`` (which holds no
    password: :func:`connect` refuses one): what happened, and what can be done."""
    if isinstance(exc, redis.exceptions.NoScriptError):
        return ScriptsLost(
            f"frontier {url}: Redis lost the crawl's scripts (restarted?): stopped; once it is "
            "back with its data (appendonly, or a dump), resume (crawl --out DIR --resume; a "
            "worker: the same command)"
        )
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return RedisLost(
            f"frontier {url}: Redis does not answer ({exc}): stopped; once it is back with "
            "its data (appendonly, or a dump), resume (crawl --out DIR --resume; a worker: "
            "the same command)"
        )
    return FrontierError(
        f"frontier {url}: Redis refused a command ({exc}): a key under the crawl's prefix "
        "holds what the crawl did not write (set by hand?): restore the crawl's keys, or "
        "start afresh with another --out"
    )


class Client:
    """A redis-py client whose errors are focuscrawl's, translated here once: each is
    one line naming the server (:func:`redis_failure`), never a traceback, whichever
    thread meets it. A script gone from the server's cache is :class:`ScriptsLost`,
    still a ``NoScriptError`` for a caller that loads it again. Everything else is the
    client's own."""

    def __init__(self, client: Any, url: str) -> None:
        self._client, self.url = client, url

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                result = method(*args, **kwargs)
            except redis.RedisError as exc:
                raise redis_failure(self.url, exc) from exc
            if name == "pipeline":
                return _Pipeline(result, self.url)
            if isinstance(result, Iterator):  # (scan_iter and the like: errors come later)
                return _iterated(result, self.url)
            return result

        return call


class _Pipeline:
    """A pipeline of a :class:`Client`: commands queued as redis-py's, sent by
    :meth:`execute`, whose errors are translated as the client's."""

    def __init__(self, pipe: Any, url: str) -> None:
        self._pipe, self.url = pipe, url

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pipe, name)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._pipe.execute(*args, **kwargs)
        except redis.RedisError as exc:
            raise redis_failure(self.url, exc) from exc


def _iterated(items: Iterator[Any], url: str) -> Iterator[Any]:
    try:
        yield from items
    except redis.RedisError as exc:
        raise redis_failure(url, exc) from exc


PASSWORD_ENV = "FOCUSCRAWL_REDIS_PASSWORD"
PASSWORD_FILE_ENV = "FOCUSCRAWL_REDIS_PASSWORD_FILE"


def redis_password() -> str | None:
    """The Redis password: ``FOCUSCRAWL_REDIS_PASSWORD``, or the first line of the file
    named by ``FOCUSCRAWL_REDIS_PASSWORD_FILE`` (None: neither is set). Workers started
    by ``crawl --workers`` inherit the environment: the password is in no argv."""
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    path = os.environ.get(PASSWORD_FILE_ENV)
    if not path:
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise FrontierError(f"{PASSWORD_FILE_ENV}={path}: cannot read it ({exc})") from None
    if not lines or not lines[0]:
        raise FrontierError(f"{PASSWORD_FILE_ENV}={path}: the file's first line is empty")
    return lines[0]


def _loopback(host: str) -> bool:
    """Whether ``host`` is this machine (a name or address of the loopback).

    >>> _loopback("127.0.0.1"), _loopback("::1"), _loopback("localhost"), _loopback("10.0.0.1")
    (True, True, True, False)
    """
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
