"""The shared crawl's page budget, handed out in claims, and which workers are alive.

A worker claims pages as it needs them (``claim``), and settles when it has nothing
to do (``settle``: what it did not use goes back, and its claims are marked used).
Recorded pages never exceed the budget: a worker records only within its claims.

A worker that dies keeps its claims until another retires it, once its heartbeat
has expired (its leases expire with it): first the dead worker is **fenced**
(``retire``: from then on its heartbeat and its claims are refused, so were it only
stalled it stops before committing anything more), then its last commit's page
count is read from its journal, and its claims beyond that are **released** back
to the budget (``release``). Exactly once holds: what it recorded after that commit
is cut back (by the worker that retired it, on its machine, or by its own restart),
and a worker restarted with the same name (``rejoin``) starts from that commit with
those claims; its batch, delivered again, is applied once
(:mod:`focuscrawl.workers.outbox`).
"""

from __future__ import annotations

from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.rows import text

__all__ = ["META_LUA", "LeaseLost", "SharedBudget"]


class LeaseLost(FrontierError):
    """A worker's leases may have expired, or another worker retired it: it must not
    commit (it stops; its restart cuts its files back to its last commit and goes on)."""


class CrawlGone(FrontierError):
    """The crawl's shared state is gone from Redis (restarted without its data, or
    flushed) under a running worker: nothing there to go on with or to resume."""


# The crawl's shared counters (KEYS[1]: its meta prefix): the page budget handed out in
# claims ('claims' worker -> pages, 'used' worker -> claims settled), the workers known
# ('workers'), alive (their heartbeats on the server's clock) and retired (fenced, then
# released with the pages they used)
META_LUA = r"""#!lua
local M, op, w = KEYS[1], ARGV[1], ARGV[2]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- a number this script wrote, or an error naming the key (garbage written from outside)
local function number(raw, name)
  local n = tonumber(raw)
  if n == nil then error({err = 'the crawl key ' .. name .. ' is not a number'}) end
  return n
end
local function num(key, field)
  return number(redis.call('HGET', M .. key, field) or '0', M .. key .. ' (field ' .. field .. ')')
end
local retired = redis.call('HGET', M .. 'retired', w)
-- a worker this crawl does not know (its state gone: Redis back empty, or flushed): -2
if (op == 'claim' or op == 'settle' or op == 'alive')
    and redis.call('SISMEMBER', M .. 'workers', w) == 0 then
  return -2
end
if op == 'claim' then
  -- ARGV[3]: pages wanted (negative: given back); returns the worker's claims now, -1 if
  -- it was retired. Kept per worker here, not in its journal: a claim made after a
  -- worker's last commit is not lost with it
  if retired then return -1 end
  local left = number(redis.call('GET', M .. 'budget') or '0', M .. 'budget')
  local n, held = tonumber(ARGV[3]), num('claims', w)
  if n > left then n = left end
  if -n > held then n = -held end
  if n ~= 0 then
    redis.call('DECRBY', M .. 'budget', n)
    held = redis.call('HINCRBY', M .. 'claims', w, n)
  end
  return held
elseif op == 'settle' then
  -- ARGV[3]: pages the worker keeps (used): the rest back; its claims marked used
  if retired then return -1 end
  local held, keep = num('claims', w), tonumber(ARGV[3])
  if held > keep then
    redis.call('INCRBY', M .. 'budget', held - keep)
    redis.call('HSET', M .. 'claims', w, keep)
    held = keep
  end
  redis.call('HSET', M .. 'used', w, held)
  return held
elseif op == 'alive' then
  -- ARGV[3]: ms it is alive for (0: it leaves); returns the workers alive, -1 if retired
  local now = now_ms()
  if ARGV[3] == '0' then
    redis.call('ZREM', M .. 'alive', w)
  elseif retired then
    return -1
  else
    redis.call('ZADD', M .. 'alive', now + tonumber(ARGV[3]), w)
  end
  redis.call('ZREMRANGEBYSCORE', M .. 'alive', '-inf', now)
  return redis.call('ZCARD', M .. 'alive')
elseif op == 'rejoin' then
  -- ARGV[3]: ms: a worker (re)started, from its last commit: known, alive, not retired
  redis.call('HDEL', M .. 'retired', w)
  redis.call('SADD', M .. 'workers', w)
  redis.call('ZADD', M .. 'alive', now_ms() + tonumber(ARGV[3]), w)
  return num('claims', w)
elseif op == 'dead' then
  -- the workers whose heartbeat expired and whose claims were not released yet
  redis.call('ZREMRANGEBYSCORE', M .. 'alive', '-inf', now_ms())
  local out = {}
  for _, x in ipairs(redis.call('SMEMBERS', M .. 'workers')) do
    local r = redis.call('HGET', M .. 'retired', x)
    if not redis.call('ZSCORE', M .. 'alive', x) and (not r or r == 'fenced') then
      out[#out + 1] = x
    end
  end
  return out
elseif op == 'retire' then
  -- fence a worker whose heartbeat expired: 1 (fenced, now or before), 0 (alive)
  local until_ms = redis.call('ZSCORE', M .. 'alive', w)
  if until_ms and tonumber(until_ms) > now_ms() then return 0 end
  if not retired then redis.call('HSET', M .. 'retired', w, 'fenced') end
  return 1
elseif op == 'release' then
  -- ARGV[3]: pages the fenced worker used (its last commit's): its claims beyond them
  -- back in the budget; returns how many, -1 if it came back meanwhile
  if not retired then return -1 end
  local held, used = num('claims', w), tonumber(ARGV[3])
  local back = 0
  if held > used then
    back = held - used
    redis.call('INCRBY', M .. 'budget', back)
    redis.call('HSET', M .. 'claims', w, used)
    held = used
  end
  redis.call('HSET', M .. 'used', w, held)
  redis.call('HSET', M .. 'retired', w, used)
  return back
elseif op == 'holding' then
  -- 1 if a worker other than w, alive or not released yet, holds claims it did not settle
  for _, x in ipairs(redis.call('SMEMBERS', M .. 'workers')) do
    local r = redis.call('HGET', M .. 'retired', x)
    if x ~= w and (not r or r == 'fenced') and num('claims', x) > num('used', x) then
      return 1
    end
  end
  return 0
end
return redis.error_reply('unknown meta op ' .. op)
"""


class SharedBudget:
    """Worker ``worker``'s claims on the page budget, and its heartbeat (META_LUA)."""

    def __init__(self, db: Any, keys: Keys, *, worker: str, lease_ms: int) -> None:
        self._db, self.worker, self.prefix = db, worker, keys.prefix
        self._key = keys.meta
        self._sha = db.script_load(META_LUA)
        # (re)started from its last commit: alive at once, so that nobody retires it
        self.claimed = int(self._meta("rejoin", lease_ms))

    def _meta(self, op: str, *args: Any, worker: str | None = None) -> Any:
        return self._db.evalsha(self._sha, 1, self._key, op, worker or self.worker, *args)

    def _fenced(self, value: Any) -> int:
        if int(value) == -2:
            raise CrawlGone(
                f"frontier {getattr(self._db, 'url', 'Redis')}: the shared crawl {self.prefix} "
                "is gone from Redis (restarted without its data, or flushed): worker "
                f"{self.worker} stops; restore Redis's data (appendonly / a dump) and resume, "
                "or start afresh with another --out"
            )
        if int(value) < 0:
            raise LeaseLost(
                f"worker {self.worker}: retired by another worker (its heartbeat had expired):"
                " it stops without committing; restarted (same --out) it goes on from its"
                " last commit"
            )
        return int(value)

    def alive(self, ms: int) -> int:
        """This worker is alive for ``ms`` more (0: it leaves); returns the workers alive."""
        return self._fenced(self._meta("alive", ms))

    def claim(self, pages: int) -> int:
        """Up to ``pages`` more of the shared page budget for this worker; returns how many."""
        before = self.claimed
        self.claimed = self._fenced(self._meta("claim", max(0, pages)))
        return self.claimed - before

    def settle(self, used: int) -> None:
        """This worker has nothing to do: its claims beyond ``used`` go back."""
        self.claimed = self._fenced(self._meta("settle", max(0, used)))

    def left(self) -> int:
        """Pages of the budget not handed out yet."""
        return int(self._db.get(self._key + "budget") or 0)

    def holding(self) -> bool:
        """Whether another worker (alive, or dead and not retired yet) holds claims it
        has not settled: they may still be used, or come back."""
        return bool(int(self._meta("holding")))

    def dead(self) -> list[str]:
        """The workers whose heartbeat expired and whose claims were not released."""
        return sorted(text(w) for w in self._meta("dead") if text(w) != self.worker)

    def retire(self, worker: str) -> bool:
        """Fence ``worker`` if its heartbeat expired (see the module); whether it is."""
        return bool(int(self._meta("retire", worker=worker)))

    def release(self, worker: str, used: int) -> int:
        """The fenced ``worker``'s claims beyond ``used`` back in the budget; how many."""
        return max(0, int(self._meta("release", used, worker=worker)))
