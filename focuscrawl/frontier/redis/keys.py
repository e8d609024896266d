"""The key layout of a crawl's namespace in Redis: the one place that spells it.

A crawl's keys start with its prefix (``fc:1a2b3c4d5e6f``, :func:`new_prefix`) and carry a hash tag, so that the keys one script touches share a slot of a Redis
Cluster:

* ``PREFIX:{PREFIX:<p>}:`` the keys of partition ``p`` (:meth:`Keys.partition`, the
  frontier script's ``KEYS[1]``, called ``P`` below);
* ``PREFIX:{PREFIX:m}:`` the crawl's own keys (:meth:`Keys.meta`);
* ``PREFIX:{PREFIX:w:<worker>}:j`` a worker's journal (:meth:`Keys.journal`).

Keys of partition ``P`` (written by the scripts of :mod:`~focuscrawl.frontier.redis.script`
and of the workers' leases, :mod:`focuscrawl.workers.leases`):

* ``P u``              hash url -> row ``state\\0tier\\0score\\0depth\\0layer\\0seq\\0host\\0parent``
* ``P c:<column>``     hash url -> value of an extra column (absent: 0.0)
* ``P q:<layer>:<host>`` zset of the host's QUEUED URLs of a layer; all scores 0,
  members ``key .. url`` ordered bytewise, ``key`` the 20-byte pop order
  (tier desc, score desc, seq asc; ``okey`` of :mod:`~focuscrawl.frontier.redis.rows`)
* ``P r:<layer>``      zset of the hosts with queued URLs: ``best key .. host``
* ``P hb:<layer>``     hash host -> its member in ``r:<layer>``
* ``P n``              hash state -> URLs of the partition in that state
* ``P hc:<host>``      hash state -> URLs of the host in that state
* ``P if``             set of IN_FLIGHT URLs (requeue after a crash in O(k))
* ``P fs``             zset of FETCHED URLs, members ``key .. url`` (tier 0): ``top``
* ``P pk``             set of the URLs picked for a layered crawl's current layer
* ``P ap``             hash worker -> the number of its last outbox call applied here
* ``P lease``          the partition's owner (a worker id) while its lease lasts
* ``P owner``          the partition's last owner (whose outbox a new owner delivers first)
* ``P freed``          the last owner, when it gave the partition back (not expired)
* ``P nt``             hash host -> its next allowed time and interval, for the next owner
* ``P par:<url>``      set of parents of url (when edges are kept)
* ``P ch:<url>``       hash child -> t(url, child) (when edges are kept)

The crawl's own keys (``M``): ``M conf`` (partitions, parents kept), ``M meta`` (the
run's state; a shared crawl's published run and protocol), ``M seq`` (the discovery
counter), ``M cols`` (the extra columns), ``M layers``; a shared crawl's ``M budget``,
``M claims``, ``M used``, ``M workers``, ``M alive``, ``M retired`` (the claims'
script, :mod:`focuscrawl.workers.claims`), ``M pending`` (workers with a batch
journaled, not delivered), ``M seeded``, ``M seeds-in``, ``M round``, ``M lead:<what>``
(:mod:`focuscrawl.workers.progress`).
"""

from __future__ import annotations

import secrets
import zlib

__all__ = ["PUBLISHED", "Keys", "crawl_of", "new_prefix", "partition_host", "partition_of"]

# every shared crawl's meta hash (the prefixes new_prefix makes)
PUBLISHED = "fc:*:{fc:*:m}:meta"


def new_prefix() -> str:
    """The key prefix of a new crawl: ``fc:`` and 12 random hex digits."""
    return f"fc:{secrets.token_hex(6)}"


class Keys:
    """The keys of the crawl namespace ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.meta = f"{prefix}:{{{prefix}:m}}:"  # the prefix of the crawl's own keys

    def partition(self, p: int) -> str:
        """The prefix of partition ``p``'s keys (its hash tag)."""
        return f"{self.prefix}:{{{self.prefix}:{p}}}:"

    def journal(self, worker: str) -> str:
        """The key of ``worker``'s journal (its own hash tag; ``*``: a match pattern)."""
        return f"{self.prefix}:{{{self.prefix}:w:{worker}}}:j"

    def every(self) -> str:
        """The match pattern of every key of the namespace."""
        return f"{self.prefix}:*"


def crawl_of(meta_key: bytes | str) -> str:
    """The prefix of the crawl whose meta hash is ``meta_key``.

    >>> crawl_of(Keys("fc:ab").meta + "meta")
    'fc:ab'
    """
    key = meta_key.decode("utf-8") if isinstance(meta_key, bytes) else meta_key
    return key.split(":{", 1)[0]


def partition_host(host: str) -> str:
    """The host a partition is chosen by: lower case, no port, no IPv6 brackets.

    >>> partition_host("Example.org:8080"), partition_host("[::1]:80")
    ('example.org', '::1')
    """
    host = host.lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.split(":", 1)[0]


def partition_of(host: str, partitions: int) -> int:
    """The partition of ``host``'s URLs among ``partitions`` (every URL of a host in one)."""
    return zlib.crc32(partition_host(host).encode("utf-8")) % partitions
