"""The connection to the Redis of a shared store: the server's URL and its options,
the password (never in the URL), a cluster or a plain client, and every Redis error
translated once, here, into one line naming the server (:class:`Connection`)."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.client import Pipeline
from redis.cluster import ClusterPipeline
from redis.retry import Retry

from focuscrawl.exceptions import FrontierError

__all__ = [
    "MAX_PARTITIONS",
    "PASSWORD_ENV",
    "PASSWORD_FILE_ENV",
    "TIMEOUT",
    "Connection",
    "connect",
    "lost_script",
    "redis_password",
    "server_url",
]


#: seconds a command may wait for its answer (redis-py's default is 5 s): a worker's is
#: four fifths of its lease (:class:`~focuscrawl.workers.frontier.WorkerFrontier`), so a
#: Redis that stalls (``CLIENT PAUSE``, a slow fork for a snapshot) for less than a lease
#: stops no crawl, and a worker that waited longer has lost its partitions anyway;
#: ``?socket_timeout=S`` in the frontier URL sets it by hand
TIMEOUT = 24.0


class Connection:
    """The client of the Redis at ``url`` (:func:`connect`), its errors one line
    naming the server: a :class:`~focuscrawl.exceptions.FrontierError` whose cause is
    the client's error (the CLI prints it and exits, no traceback). Every command of
    the client is a command of the connection; a pipeline it makes is a connection
    too (its ``execute`` translated), and so is a scan's iterator."""

    def __init__(self, url: str, client: Any = None, *, timeout: float = TIMEOUT) -> None:
        self.url = url
        if client is None:
            try:
                client = connect(url, timeout=timeout)
            except (redis.RedisError, ValueError) as exc:
                raise (refused(url, exc) or FrontierError(f"frontier {url}: {exc}")) from exc
        self.client = client

    def __getattr__(self, name: str) -> Any:
        if name == "client":  # (not set yet: no client to hand the name on to)
            raise AttributeError(name)
        attr = getattr(self.client, name)
        if not callable(attr):
            return attr
        command = self._translated(attr)
        setattr(self, name, command)  # (looked up once: the next call finds it here)
        return command

    def _translated(self, command: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                out = command(*args, **kwargs)
            except redis.RedisError as exc:
                raise self.error(exc) from exc
            if out is self.client:  # (a pipeline's queued command)
                return self
            if isinstance(out, Pipeline | ClusterPipeline):
                return Connection(self.url, out)
            if isinstance(out, Iterator):  # (scan_iter: its commands run as it is read)
                return self._iterated(out)
            return out

        return call

    def _iterated(self, items: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from items
        except redis.RedisError as exc:
            raise self.error(exc) from exc

    def error(self, exc: BaseException) -> FrontierError:
        """The one line of a Redis error; a frontier script's failure on data it did not
        write (a number spoiled, a key of another type) names the keys and says so."""
        text = str(exc)
        auth = refused(self.url, exc)
        if auth is not None:
            return auth
        if "used memory > 'maxmemory'" in text:  # (a pipeline's error quotes its command)
            return FrontierError(
                f"frontier {self.url}: Redis is full (its used memory past maxmemory) and "
                "refuses writes: raise its maxmemory (CONFIG SET maxmemory) or give it more "
                "memory, then resume (the crawl's files keep their last commit)"
            )
        failed = SCRIPT_FAILED.search(text.split("caused error: ", 1)[-1])
        if failed is None and "WRONGTYPE" not in text:
            return FrontierError(f"frontier {self.url}: {exc}")
        keys = SCRIPT_KEYS.search(text)
        where = f" under {keys.group(1)}" if keys else ""
        why = failed.group(1).strip() if failed else "WRONGTYPE: a key holds another type"
        return FrontierError(
            f"frontier {self.url}: the shared crawl's keys{where} hold what focuscrawl did "
            f"not write ({why}): they were changed from outside focuscrawl; restore them or "
            "start a new crawl (this worker's files keep their last commit)"
        )


def refused(url: str, exc: BaseException) -> FrontierError | None:
    """The one line for a Redis that refused this client's password, or wants one
    (None: another error). Redis words the latter as a protocol matter ("HELLO must be
    called with the client already authenticated..."), naming neither the password
    nor where focuscrawl takes it from."""
    text = str(exc)
    if not isinstance(exc, redis.AuthenticationError) and not text.startswith("NOAUTH"):
        return None
    if redis_password() is None:
        return FrontierError(f"frontier {url}: this Redis needs a password: set {PASSWORD_ENV}, "
                             f"or {PASSWORD_FILE_ENV} to a file holding it")  # fmt: skip
    given = PASSWORD_ENV if os.environ.get(PASSWORD_ENV) else PASSWORD_FILE_ENV
    return FrontierError(f"frontier {url}: the password from {given} was refused ({text})")


# a Lua script's error as Redis words it, and the key a pipelined EVALSHA was given
SCRIPT_FAILED = re.compile(r"^(?:user_script:\d+: )?(.*?)\s+script: [0-9a-f]{40}")
SCRIPT_KEYS = re.compile(r"EVALSHA [0-9a-f]{40} 1 (\S+?):? ")


def lost_script(exc: BaseException) -> bool:
    """Whether ``exc`` says the server lost its script cache (NOSCRIPT: restarted)."""
    return isinstance(exc.__cause__, redis.exceptions.NoScriptError)


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


def connect(url: str, *, timeout: float = TIMEOUT) -> Any:
    """A client of the Redis at ``url``: a cluster client if it is a node of a Redis
    Cluster (keys and scripts routed to their slots' nodes), else a plain one. Scripts
    are sent with ``execute_command("EVALSHA", ...)``, which both clients' pipelines
    route by the script's key (a cluster pipeline refuses its ``evalsha`` method).

    The password comes from the environment (:func:`redis_password`), never from the
    URL, which workers' argv, run.json and the published run hold; a Redis on another
    machine needs one (whoever can write the crawl's keys steers its workers)."""
    password = redis_password()
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):  # (before the password's check,
        # which told 'http://HOST' that a Redis on another machine needs one)
        raise FrontierError(f"frontier {url}: not a Redis URL (redis://, rediss:// or unix://)")
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
    # no command sent again after a lost answer (redis-py retries 10 times): it may have
    # been applied, and a pop sent twice leaves a batch of URLs in flight for ever; the
    # crawl stops in one line and resumes exactly instead
    client = redis.Redis.from_url(server, password=password, socket_timeout=timeout,
                                  retry=Retry(NoBackoff(), 0))  # fmt: skip
    check_no_eviction(url, client.info("memory"))
    if not int(client.info("cluster").get("cluster_enabled", 0)):
        return client
    client.close()
    return redis.RedisCluster.from_url(server, password=password, socket_timeout=timeout)


def check_no_eviction(url: str, memory: dict[str, Any]) -> None:
    """One line for a Redis that evicts keys when full (a cache's ``maxmemory-policy``):
    it would drop a crawl's URLs and queues without a word, and with volatile-* its
    leases (the only keys with a time to live), giving a host two owners. With
    ``noeviction`` a full Redis refuses writes: the crawl stops in one line, resumable.

    >>> check_no_eviction("redis://h:1/0", {"maxmemory": 0, "maxmemory_policy": "allkeys-lru"})
    >>> check_no_eviction("redis://h:1/0", {"maxmemory": 9, "maxmemory_policy": "allkeys-lru"})
    Traceback (most recent call last):
    focuscrawl.exceptions.FrontierError: frontier redis://h:1/0: this Redis evicts keys when full (maxmemory 9 bytes, maxmemory-policy allkeys-lru): a crawl's URLs and leases would be lost without a word; set maxmemory-policy noeviction (a full Redis then stops the crawl in one line, resumable), or maxmemory 0
    """
    policy = str(memory.get("maxmemory_policy", "noeviction"))
    limit = int(memory.get("maxmemory", 0) or 0)
    if limit > 0 and policy != "noeviction":
        raise FrontierError(
            f"frontier {url}: this Redis evicts keys when full (maxmemory {limit} bytes, "
            f"maxmemory-policy {policy}): a crawl's URLs and leases would be lost without a "
            "word; set maxmemory-policy noeviction (a full Redis then stops the crawl in one "
            "line, resumable), or maxmemory 0"
        )


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
