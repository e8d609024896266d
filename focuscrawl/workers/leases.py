"""A worker's leases on the partitions of a shared crawl: one owner per host.

A worker pops only from the partitions it holds a lease on (a key per partition,
``lease``, with an expiry, renewed every few seconds), and every URL of a host is
in one partition: politeness needs no coordination within the owner (its fetcher's
per-host delay). At a handover the host's next allowed time goes with the partition
(:mod:`focuscrawl.workers.politeness`): the records of its hosts are written
by the same script that frees or renews the lease, and read by the one that takes it.

A worker commits only while its leases are surely its own: its last renewal plus the
lease time, less a margin, on its own monotonic clock, which the server's expiry
cannot precede (:attr:`PartitionLeases.deadline`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.rows import text

__all__ = ["LEASE_LUA", "MARGIN", "PartitionLeases", "Taken"]

MARGIN = 0.25  # of the lease time: a worker stops committing this long before it expires
_PIPELINE = 256  # partitions asked for in one pipeline

# A partition's lease (KEYS[1]: its key prefix; ARGV: op, worker, milliseconds, then
# records of its hosts: host, ms until its next allowed request, its interval in ms)
LEASE_LUA = r"""#!lua
local P, op, w, ms = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local holder = redis.call('GET', P .. 'lease')
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- P nt: host -> "next interval": the server time (ms) before which the host must not be
-- asked again, and its interval (max(delay, Crawl-delay), Retry-After), as its owner knew them
local function record()
  if #ARGV < 4 then return end
  local now = now_ms()
  for i = 4, #ARGV, 3 do
    local next = string.format('%.0f', now + tonumber(ARGV[i + 1]))
    redis.call('HSET', P .. 'nt', ARGV[i], next .. ' ' .. ARGV[i + 2])
  end
end
if op == 'take' then
  -- {1, last owner ('' none), whom it was given back by ('' expired), server ms, P nt} if
  -- taken or held already (by this worker's name: a process before this one, whose last
  -- requests are not known here), {0, holder} if another holds it
  if holder == w then
    redis.call('PEXPIRE', P .. 'lease', ms)
    return {1, w, '', now_ms(), redis.call('HGETALL', P .. 'nt')}
  end
  if holder then return {0, holder} end
  redis.call('SET', P .. 'lease', w, 'PX', ms)
  local last = redis.call('GET', P .. 'owner') or ''
  redis.call('SET', P .. 'owner', w)
  local freed = redis.call('GET', P .. 'freed') or ''
  redis.call('DEL', P .. 'freed')
  return {1, last, freed, now_ms(), redis.call('HGETALL', P .. 'nt')}
elseif op == 'renew' then
  if holder == w then
    redis.call('PEXPIRE', P .. 'lease', ms)
    record()
    return 1
  end
  -- expired and nobody took it since (this worker is still its last owner): held again
  -- (the worker committed nothing meanwhile: its commits stop at its own deadline)
  if not holder and redis.call('GET', P .. 'owner') == w then
    redis.call('SET', P .. 'lease', w, 'PX', ms)
    record()
    return 1
  end
  return 0
elseif op == 'free' then
  -- given back, its hosts' next allowed times with it; nobody takes it for ms
  if holder == w or (not holder and redis.call('GET', P .. 'owner') == w) then
    record()
    redis.call('SET', P .. 'freed', w)
    redis.call('SET', P .. 'lease', '~' .. w, 'PX', ms)
  end
  return 1
end
return redis.error_reply('unknown lease op ' .. op)
"""


@dataclass(frozen=True)
class Taken:
    """A partition just taken: its last owner, whether that one gave it back (else its
    lease expired: it died, or stalled), and its hosts' records as the server had them."""

    partition: int
    last: str
    given_back: bool
    server_ms: int
    records: dict[str, str]
    key: str = ""  # the partition's key prefix (named when a record is garbage)


class PartitionLeases:
    """The leases of worker ``worker`` (LEASE_LUA) on the partitions of the namespace
    ``keys``."""

    def __init__(self, db: Any, keys: Keys, *, worker: str, partitions: int, lease_ms: int) -> None:
        self._db, self._key = db, keys.partition
        self.worker, self.partitions, self.lease_ms = worker, partitions, lease_ms
        self._sha = db.script_load(LEASE_LUA)
        self.deadline = 0.0  # monotonic: commits stop here (the leases' expiry, less a margin)
        self.lost = False  # another worker took a partition, or retired this one: it stops

    def order(self) -> list[int]:
        """The partitions in this worker's order of preference (rendezvous hashing:
        workers prefer different partitions, so few ask for the same one)."""

        def rank(p: int) -> bytes:
            return hashlib.blake2b(f"{self.worker}:{p}".encode(), digest_size=8).digest()

        return sorted(range(self.partitions), key=rank)

    def _script(self, pipe: Any, p: int, op: str, ms: int, records: Sequence[Any] = ()) -> None:
        pipe.execute_command("EVALSHA", self._sha, 1, self._key(p), op, self.worker, ms, *records)

    def take(self, wanted: Sequence[int], want: int) -> list[Taken]:
        """Up to ``want`` of the partitions ``wanted`` that are free, in their order."""
        taken: list[Taken] = []
        for start in range(0, len(wanted), _PIPELINE):
            if len(taken) >= want:
                break
            chunk = wanted[start : start + _PIPELINE]
            pipe = self._db.pipeline(transaction=False)
            for p in chunk:
                self._script(pipe, p, "take", self.lease_ms)
            for p, reply in zip(chunk, pipe.execute(), strict=True):
                if not int(reply[0]):
                    continue
                if len(taken) >= want:  # taken beyond the want (a pipeline's tail): given back
                    self._db.evalsha(self._sha, 1, self._key(p), "free", self.worker, 1)
                    continue
                last, flat = text(reply[1]), reply[4]
                records = {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}
                taken.append(Taken(p, last, text(reply[2]) == last, int(reply[3]), records, self._key(p)))
        return taken

    def renew(self, owned: Sequence[int], records: Callable[[int], Sequence[Any]]) -> list[int]:
        """Renew the leases of ``owned`` (with ``records(p)`` of their hosts); returns
        those that another worker took. The deadline moves on if none was lost."""
        started = time.monotonic()
        pipe = self._db.pipeline(transaction=False)
        for p in owned:
            self._script(pipe, p, "renew", self.lease_ms, records(p))
        lost = [p for p, ok in zip(owned, pipe.execute(), strict=True) if not int(ok)]
        if not lost:
            self.deadline = started + self.lease_ms / 1000 * (1 - MARGIN)
        return lost

    def free(self, parts: Sequence[int], ms: int, records: Callable[[int], Sequence[Any]]) -> None:
        """Give ``parts`` back with their hosts' records; nobody takes them for ``ms``."""
        pipe = self._db.pipeline(transaction=False)
        for p in parts:
            self._script(pipe, p, "free", ms, records(p))
        pipe.execute()

    def usable(self) -> bool:
        """Whether the leases are surely still this worker's (commits, pops and
        requests may go on; else they wait for a renewal, or stop if :attr:`lost`)."""
        return time.monotonic() < self.deadline

    def lose(self) -> None:
        self.deadline = 0.0
        self.lost = True
