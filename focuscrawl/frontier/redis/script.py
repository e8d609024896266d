"""The Lua script of the Redis frontier: every change is one script on one partition.

All keys a script touches share the partition's hash tag (``KEYS[1]`` is the
partition's key prefix, e.g. ``fc:1a2b:{fc:1a2b:17}:``; the layout in
:mod:`~focuscrawl.frontier.redis.keys`), so a script runs on one slot of a Redis
Cluster and no script crosses slots. The merge rules of
:mod:`focuscrawl.frontier.rules` are applied here, where the row lives, so that a
link's score when new and when known is decided atomically, never by a read
followed by a write from the client (two workers' ADDs commute). The workers' own
scripts live with their concepts: a partition's lease and its hosts' records in
:mod:`focuscrawl.workers.leases`, the page budget's claims and the workers'
heartbeats in :mod:`focuscrawl.workers.claims`.

The frontier's script, :data:`FRONTIER_LUA`, is one Lua program in three parts:
its head (the partition's key prefix, the guard of a delivered outbox call), the
row library (:data:`~focuscrawl.frontier.redis.rows.ROWS_LUA`: a row's encoding and
the indexes and counts that follow it, the merge rules) and the operations
(:data:`OPS_LUA`: one branch per ``op``, ``ARGV[1]``).

The operations: ``add`` (new URLs and their parents' edges, merged in), ``values``
(a column's values merged), ``raise`` (the sibling raise), ``tier``, ``host`` (a
host's URLs, a scan of the partition), ``mark``, ``requeue`` (the in-flight set back
to QUEUED), ``combine`` (a linear combination of columns, a scan); and the two that
select: ``top`` (the best row of a state by a column, a scan) and ``pop`` (the best
eligible URLs of one partition and layer, below a bound: the partition's part of
the merged pop of :mod:`~focuscrawl.frontier.redis.order`).

A mutating script returns ``{result, changes}``: ``changes`` a flat list of
``"s<state>", delta`` (the change of the partition's count of URLs in that state,
which the client adds to its counts) and ``layer, best`` (the new best host of
every layer whose best hosts it changed: its best key and its name, "" if the
layer is now empty in this partition; the client keeps them to merge pops across
partitions without reading every partition).
"""

from __future__ import annotations

from focuscrawl.frontier.redis.rows import ROWS_LUA

__all__ = ["FRONTIER_LUA", "OPS_LUA"]

# the script's head: the partition's key prefix, a delivered outbox call's guard, the op.
# "#!lua" (Redis 7 script flags, none given): on a Redis Cluster the server refuses a
# script that touches keys of two slots, and one that would write past maxmemory
_HEAD_LUA = r"""#!lua
local P = KEYS[1]
if ARGV[1] == 'g' then
  -- a worker's outbox delivered (focuscrawl.workers.outbox): 'g', worker, n, then
  -- the call. n grows with every call a worker sends; a call whose n is not above the
  -- last one applied here for that worker was applied already (a batch delivered again
  -- after a crash, or by the worker that took a dead one's partitions): skipped
  local last = tonumber(redis.call('HGET', P .. 'ap', ARGV[2]) or '-1')
  if tonumber(ARGV[3]) <= last then return {0, {}} end
  redis.call('HSET', P .. 'ap', ARGV[2], ARGV[3])
  for _ = 1, 3 do table.remove(ARGV, 1) end
elseif ARGV[1] == 'l' then
  -- a worker's pop, or a re-crawl taken into flight: 'l', worker, then the call, applied
  -- only in a partition it holds the lease of. A worker stopped past its leases after
  -- its own look at them takes nothing from a partition another worker has taken since
  -- (it would stay in flight for ever: the taker queued the partition's URLs in flight)
  if redis.call('GET', P .. 'lease') ~= ARGV[2] then
    if ARGV[3] == 'pop' then return {{{}, ''}, {}} end
    return {-1, {}}
  end
  for _ = 1, 2 do table.remove(ARGV, 1) end
end
local op = ARGV[1]
"""

OPS_LUA = r"""local result = 0

if op == 'add' then
  -- ARGV: merge, edges(0/1), then groups of 10:
  -- kind ('a' add / 't' touch parent), url, score, tier, depth, layer, seq, host, parent, count
  local merge, edges = ARGV[2], ARGV[3] == '1'
  for i = 4, #ARGV, 10 do
    local kind, url = ARGV[i], ARGV[i + 1]
    local depth, layer, seq = tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6])
    local host, parent = ARGV[i + 7], ARGV[i + 8]
    local r = getrow(url)
    if kind == 't' then
      -- a parent seen only as a referrer: known, DROPPED, score 0, tier 0
      if not r then
        r = {state = 4, tier = 0, score = 0.0, depth = math.max(depth - 1, 0), layer = layer,
             seq = seq, host = host, parent = ''}
        count(r, 4, 1)
        putrow(url, r)
      end
      if edges and parent ~= '' then redis.call('HSET', P .. 'ch:' .. url, parent, ARGV[i + 9]) end
    else
      local score, tier = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
      if not r then
        r = {state = QUEUED, tier = tier, score = score, depth = depth, layer = layer, seq = seq,
             host = host, parent = parent}
        count(r, QUEUED, 1)
        enqueue(url, r)
        result = result + 1
      else
        local nt, ns = merged_pair(r.tier, r.score, tier, score, merge)
        if nt ~= r.tier or ns ~= r.score then rescore(url, r, nt, ns) end
        if r.parent == '' then r.parent = parent end
      end
      putrow(url, r)
      if edges and parent ~= '' then redis.call('SADD', P .. 'par:' .. url, parent) end
    end
  end
elseif op == 'values' then
  -- ARGV: column, merge, then url, value pairs (already combined per URL)
  local column, merge = ARGV[2], ARGV[3]
  for i = 4, #ARGV, 2 do
    local url, value = ARGV[i], tonumber(ARGV[i + 1])
    local r = getrow(url)
    if r then
      local old = colget(url, r, column)
      if written(old, value, merge) then
        colset(url, r, column, merged(old, value, merge))
        result = result + 1
      end
    end
  end
elseif op == 'raise' then
  -- ARGV: score, exclude, children...
  local score, exclude = tonumber(ARGV[2]), ARGV[3]
  for i = 4, #ARGV do
    local url = ARGV[i]
    local r = getrow(url)
    if r and url ~= exclude and r.state == QUEUED and r.score < score then
      rescore(url, r, r.tier, score)
      putrow(url, r)
      result = result + 1
    end
  end
elseif op == 'tier' then
  for i = 2, #ARGV, 2 do
    local url = ARGV[i]
    local r = getrow(url)
    if r then
      rescore(url, r, tonumber(ARGV[i + 1]), r.score)
      putrow(url, r)
      result = result + 1
    end
  end
elseif op == 'host' then
  -- ARGV: host, score, merge, states... (a scan of the partition's rows: O(n / partitions))
  local host, value, merge = ARGV[2], tonumber(ARGV[3]), ARGV[4]
  local wanted = {}
  for i = 5, #ARGV do wanted[tonumber(ARGV[i])] = true end
  local rows = redis.call('HGETALL', P .. 'u')
  for i = 1, #rows, 2 do
    local f = split(rows[i + 1])
    if f[7] == host and wanted[tonumber(f[1])] and written(tonumber(f[3]), value, merge) then
      local url = rows[i]
      local r = getrow(url)
      rescore(url, r, r.tier, merged(r.score, value, merge))
      putrow(url, r)
      result = result + 1
    end
  end
elseif op == 'mark' then
  -- ARGV: url, state, score ('' = keep)
  local url = ARGV[2]
  local r = getrow(url)
  if not r then return {-1, {}} end
  set_state(url, r, tonumber(ARGV[3]))
  if ARGV[4] ~= '' then rescore(url, r, r.tier, tonumber(ARGV[4])) end
  putrow(url, r)
elseif op == 'requeue' then
  local urls = redis.call('SMEMBERS', P .. 'if')
  for _, url in ipairs(urls) do
    local r = getrow(url)
    set_state(url, r, QUEUED)
    putrow(url, r)
    result = result + 1
  end
elseif op == 'combine' then
  -- ARGV: dst, add (0/1), then src, factor pairs: dst = (dst if add else 0) + sum f * src
  local dst, add = ARGV[2], ARGV[3] == '1'
  local rows = redis.call('HGETALL', P .. 'u')
  for i = 1, #rows, 2 do
    local url = rows[i]
    local r = getrow(url)
    local total = 0.0
    if add then total = colget(url, r, dst) end
    for j = 4, #ARGV, 2 do
      total = total + tonumber(ARGV[j + 1]) * colget(url, r, ARGV[j])
    end
    colset(url, r, dst, total)
  end
elseif op == 'top' then
  -- ARGV: column, state: the best (value desc, seq asc) row of that state, O(n / partitions)
  local column, state = ARGV[2], tonumber(ARGV[3])
  local rows = redis.call('HGETALL', P .. 'u')
  local best, bseq, burl = nil, nil, nil
  for i = 1, #rows, 2 do
    local f = split(rows[i + 1])
    if tonumber(f[1]) == state then
      local seq = tonumber(f[6])
      local v
      if column == 'score' then v = tonumber(f[3]) else
        v = tonumber(redis.call('HGET', P .. 'c:' .. column, rows[i]) or '0')
      end
      if best == nil or v > best or (v == best and seq < bseq) then
        best, bseq, burl = v, seq, rows[i]
      end
    end
  end
  if best == nil then return {0, {}} end
  return {{burl, num(best), int(bseq)}, {}}
elseif op == 'pop' then
  -- ARGV: layer, top tier, n, bound key ('' = none), max_per_host, #excluded, excluded...,
  -- then host, taken pairs (this pop's URLs per host so far). Takes, in pop order, the
  -- eligible URLs of this partition and layer with key < bound; returns them and the
  -- lowest key it did not take ('' = nothing eligible left).
  local layer, n, bound, cap = tonumber(ARGV[2]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
  local peek = n == 0 -- n = 0: take nothing, say the first eligible key
  if peek then n = 1 end
  local tierb = struct.pack('>I4', 2147483647 - tonumber(ARGV[3]))
  local nex = tonumber(ARGV[7])
  local excluded, taken = {}, {}
  for i = 8, 7 + nex do excluded[ARGV[i]] = true end
  for i = 8 + nex, #ARGV, 2 do taken[ARGV[i]] = tonumber(ARGV[i + 1]) end
  local rk = P .. 'r:' .. int(layer)
  local cand = {}   -- {key, url, host}
  local nextkey = '' -- key of the first host not examined
  local pos, done = 0, false
  while not done do
    local hosts = redis.call('ZRANGE', rk, pos, pos + 63)
    if #hosts == 0 then break end
    for _, m in ipairs(hosts) do
      local hk, host = string.sub(m, 1, 20), string.sub(m, 21)
      if string.sub(hk, 1, 4) ~= tierb then done = true break end
      local threshold = bound
      if #cand >= n then
        table.sort(cand, function(a, b) return a[1] < b[1] end)
        local nth = cand[n][1]
        if threshold == '' or nth < threshold then threshold = nth end
      end
      if threshold ~= '' and hk >= threshold then nextkey = hk done = true break end
      local room = n
      if cap > 0 then room = math.min(n, cap - (taken[host] or 0)) end
      if not excluded[host] and room > 0 then
        local urls = redis.call('ZRANGE', P .. 'q:' .. int(layer) .. ':' .. host, 0, room - 1)
        for _, u in ipairs(urls) do
          if string.sub(u, 1, 4) ~= tierb then break end
          cand[#cand + 1] = {string.sub(u, 1, 20), string.sub(u, 21), host}
        end
      end
    end
    pos = pos + 64
  end
  table.sort(cand, function(a, b) return a[1] < b[1] end)
  local out, rest, took = {}, '', 0
  for i, c in ipairs(cand) do
    if not peek and took < n and (bound == '' or c[1] < bound) then
      took = took + 1
      local r = getrow(c[2])
      set_state(c[2], r, IN_FLIGHT)
      out[#out + 1] = c[2]
      out[#out + 1] = putrow(c[2], r)
    else
      rest = c[1]
      break
    end
  end
  if nextkey ~= '' and (rest == '' or nextkey < rest) then rest = nextkey end
  return {{out, rest}, heads()}
end

return {result, heads()}
"""

# the frontier's script, in the order its parts are read
FRONTIER_LUA = _HEAD_LUA + ROWS_LUA + OPS_LUA
