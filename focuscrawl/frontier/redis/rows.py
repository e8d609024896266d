"""A row of the Redis frontier, on both sides: how the client writes its arguments
and reads a URL's row (Python), and the row library of the frontier's script (Lua,
:data:`ROWS_LUA`), which keeps the indexes that follow a row.

The Lua library is what an operation of the script (:mod:`~focuscrawl.frontier.redis.script`)
changes a URL through, on the keys of one partition (``P``, the layout in
:mod:`~focuscrawl.frontier.redis.keys`):

* a row's encoding: ``okey`` (the 20-byte pop order: tier desc, score desc, seq asc),
  ``getrow`` / ``putrow`` (``state\\0tier\\0score\\0...``);
* the indexes a row is in, moved with it: its host's queue and the layer's best hosts
  (``enqueue`` / ``unqueue``, ``heads`` reporting the new bests), the counts per
  state (``count``, the deltas returned to the client), the in-flight set and the
  FETCHED URLs by score (``set_state``, ``rescore``);
* the merge rules of :mod:`focuscrawl.frontier.rules` (``merged_pair``, ``merged``,
  ``written``) and the extra columns (``colget`` / ``colset``).

It is Lua source, a part of :data:`~focuscrawl.frontier.redis.script.FRONTIER_LUA`
(after the script's head, before the operations), not a script of its own.
"""

from __future__ import annotations

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis.decode import garbage
from focuscrawl.types import QueuedURL

__all__ = ["ROWS_LUA", "Row", "checked_url", "float_arg", "queued", "row_of", "text"]

# state, tier, score, depth, layer, seq, host, first parent ("" = none)
Row = tuple[int, int, float, int, int, int, str, str]


def float_arg(value: float) -> str:
    return repr(float(value))


def text(raw: bytes | str) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else raw


def row_of(raw: bytes | str, key: str = "a URL row") -> Row:
    """A row as the frontier script wrote it; anything else a one-line error naming
    ``key`` (:mod:`~focuscrawl.frontier.redis.decode`)."""
    try:
        f = text(raw).split("\0")
        return (int(f[0]), int(f[1]), float(f[2]), int(f[3]), int(f[4]), int(f[5]), f[6], f[7])
    except (ValueError, IndexError, TypeError, UnicodeDecodeError):
        raise garbage(key, raw, "a URL row (state, tier, score, depth, layer, seq, host, parent)") from None


def queued(url: str, row: Row) -> QueuedURL:
    _, tier, score, depth, layer, seq, host, parent = row
    return QueuedURL(url, score, depth, host, parent or None, layer, seq, tier)


def checked_url(url: str) -> str:
    if "\0" in url:
        raise FrontierError(f"URL {url!r} holds a NUL character")
    return url


ROWS_LUA = r"""local QUEUED, IN_FLIGHT, FETCHED = 0, 1, 2
-- layer -> host -> {old = its r:<layer> member before, cur = now, stale = cur unknown}:
-- a host's best is read once a call, and read again only if its best URL left
local best = {}

local function int(x) return string.format('%.0f', x) end
local function num(x) return string.format('%.17g', x) end

local function okey(tier, score, seq)
  -- bytewise ascending = tier desc, score desc, seq asc (0 and -0 tie, as in Python)
  local v = -score
  if v == 0 then v = 0 end
  local d = struct.pack('>d', v)
  local b1 = string.byte(d, 1)
  if b1 >= 128 then
    local t = {string.byte(d, 1, 8)}
    for i = 1, 8 do t[i] = 255 - t[i] end
    d = string.char(unpack(t))
  else
    d = string.char(b1 + 128) .. string.sub(d, 2)
  end
  return struct.pack('>I4', 2147483647 - tier) .. d .. struct.pack('>I8', seq)
end

local function split(s)
  local out, i = {}, 1
  while true do
    local j = string.find(s, '\0', i, true)
    if not j then out[#out + 1] = string.sub(s, i) break end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
  return out
end

local function getrow(url)
  local s = redis.call('HGET', P .. 'u', url)
  if not s then return nil end
  local f = split(s)
  return {state = tonumber(f[1]), tier = tonumber(f[2]), score = tonumber(f[3]),
          depth = tonumber(f[4]), layer = tonumber(f[5]), seq = tonumber(f[6]),
          host = f[7], parent = f[8]}
end

local function putrow(url, r)
  local s = table.concat({int(r.state), int(r.tier), num(r.score), int(r.depth),
    int(r.layer), int(r.seq), r.host, r.parent}, '\0')
  redis.call('HSET', P .. 'u', url, s)
  return s
end

local function hostbest(r)
  local l = best[r.layer]
  if not l then l = {} best[r.layer] = l end
  local b = l[r.host]
  if not b then
    local m = redis.call('HGET', P .. 'hb:' .. int(r.layer), r.host)
    b = {old = m, cur = m, stale = false}
    l[r.host] = b
  end
  return b
end

local function qkey(r) return P .. 'q:' .. int(r.layer) .. ':' .. r.host end

local function unqueue(url, r)
  local key = okey(r.tier, r.score, r.seq)
  redis.call('ZREM', qkey(r), key .. url)
  local b = hostbest(r)
  if b.cur and string.sub(b.cur, 1, 20) == key then b.stale = true end
end

local function enqueue(url, r)
  local key = okey(r.tier, r.score, r.seq)
  redis.call('ZADD', qkey(r), 0, key .. url)
  local b = hostbest(r)
  if not b.stale and (not b.cur or key < string.sub(b.cur, 1, 20)) then b.cur = key .. r.host end
end

local deltas = {} -- state -> change of the partition's count, returned to the client

local function count(r, state, delta)
  redis.call('HINCRBY', P .. 'n', int(state), delta)
  deltas[state] = (deltas[state] or 0) + delta
  redis.call('HINCRBY', P .. 'hc:' .. r.host, int(state), delta)
end

-- the FETCHED URLs by score (desc, then discovery order): OTIE's "fetched page with
-- the most cash" without a scan
local function unfetched(url, r) redis.call('ZREM', P .. 'fs', okey(0, r.score, r.seq) .. url) end
local function fetched(url, r) redis.call('ZADD', P .. 'fs', 0, okey(0, r.score, r.seq) .. url) end

local function set_state(url, r, state)
  if r.state == state then return end
  if r.state == QUEUED then unqueue(url, r) end
  if r.state == IN_FLIGHT then redis.call('SREM', P .. 'if', url) end
  if r.state == FETCHED then unfetched(url, r) end
  count(r, r.state, -1)
  r.state = state
  count(r, state, 1)
  if state == QUEUED then enqueue(url, r) end
  if state == IN_FLIGHT then redis.call('SADD', P .. 'if', url) end
  if state == FETCHED then fetched(url, r) end
end

-- a new (tier, score) for a row: its queue (or fetched) entry moves with it
local function rescore(url, r, tier, score)
  if r.state == QUEUED then unqueue(url, r) end
  if r.state == FETCHED and score ~= r.score then unfetched(url, r) end
  local old = r.score
  r.tier, r.score = tier, score
  if r.state == QUEUED then enqueue(url, r) end
  if r.state == FETCHED and score ~= old then fetched(url, r) end
end

local function heads()
  local touched = {} -- layers whose ready set changed: their best is reported
  for layer, hosts in pairs(best) do
    local rk, hb = P .. 'r:' .. int(layer), P .. 'hb:' .. int(layer)
    for host, b in pairs(hosts) do
      if b.stale then
        local first = redis.call('ZRANGE', P .. 'q:' .. int(layer) .. ':' .. host, 0, 0)[1]
        b.cur = first and (string.sub(first, 1, 20) .. host) or false
      end
      if b.old ~= b.cur then
        if b.old then redis.call('ZREM', rk, b.old) end
        if b.cur then
          redis.call('ZADD', rk, 0, b.cur)
          redis.call('HSET', hb, host, b.cur)
        else
          redis.call('HDEL', hb, host)
        end
        touched[layer] = true
      end
    end
  end
  local out = {}
  for state, delta in pairs(deltas) do
    if delta ~= 0 then
      out[#out + 1] = 's' .. int(state)
      out[#out + 1] = int(delta)
    end
  end
  for layer, _ in pairs(touched) do
    local best = redis.call('ZRANGE', P .. 'r:' .. int(layer), 0, 0)[1]
    out[#out + 1] = int(layer)
    out[#out + 1] = best or ''
  end
  return out
end

-- merged_pair of rules.py: KEEP both, SET both, MAX the larger pair, ADD the sum with the larger tier
local function merged_pair(t, s, nt, ns, merge)
  if merge == 'keep' then return t, s end
  if merge == 'max' then
    if nt > t or (nt == t and ns > s) then return nt, ns end
    return t, s
  end
  if merge == 'add' then return math.max(t, nt), s + ns end
  return nt, ns
end

local function merged(old, new, merge)
  if merge == 'keep' then return old end
  if merge == 'max' then if new > old then return new end return old end
  if merge == 'add' then return old + new end
  return new
end

local function written(old, new, merge)
  if merge == 'keep' then return false end
  return merge ~= 'max' or old < new
end

local function colget(url, r, column)
  if column == 'score' then return r.score end
  local v = redis.call('HGET', P .. 'c:' .. column, url)
  if v then return tonumber(v) end
  return 0.0
end

local function colset(url, r, column, value)
  if column == 'score' then
    rescore(url, r, r.tier, value)
    putrow(url, r)
  else
    redis.call('HSET', P .. 'c:' .. column, url, num(value))
  end
end

"""
