"""The Lua side of the Redis frontier: every change is one script on one partition.

All keys a script touches share the partition's hash tag (``KEYS[1]`` is the
partition's key prefix, e.g. ``fc:1a2b:{fc:1a2b:17}:``), so a script runs on one
slot of a Redis Cluster and no script crosses slots. The merge rules of
:mod:`focuscrawl.frontier.rules` are applied here, where the row lives, so that a
link's score when new and when known is decided atomically, never by a read
followed by a write from the client (two workers' ADDs commute). The workers' own
scripts live with their concepts: a partition's lease and its hosts' records in
:mod:`focuscrawl.frontier.redis_leases`, the page budget's claims and the workers'
heartbeats in :mod:`focuscrawl.frontier.redis_claims`.

Keys of partition ``P`` (a prefix ending in ``:``):

* ``P u``              hash url -> row ``state\\0tier\\0score\\0depth\\0layer\\0seq\\0host\\0parent``
* ``P c:<column>``     hash url -> value of an extra column (absent: 0.0)
* ``P q:<layer>:<host>`` zset of the host's QUEUED URLs of a layer; all scores 0,
  members ``key .. url`` ordered bytewise, ``key`` the 20-byte pop order
  (tier desc, score desc, seq asc; :func:`okey`)
* ``P r:<layer>``      zset of the hosts with queued URLs: ``best key .. host``
* ``P hb:<layer>``     hash host -> its member in ``r:<layer>``
* ``P n``              hash state -> URLs of the partition in that state
* ``P hc:<host>``      hash state -> URLs of the host in that state
* ``P if``             set of IN_FLIGHT URLs (requeue after a crash in O(k))
* ``P fs``             zset of FETCHED URLs, members ``key .. url`` (tier 0): ``top``
* ``P ap``             hash worker -> the number of its last outbox call applied here
* ``P lease``          the partition's owner (a worker id) while its lease lasts
* ``P owner``          the partition's last owner (whose outbox a new owner delivers first)
* ``P freed``          the last owner, when it gave the partition back (not expired)
* ``P nt``             hash host -> its next allowed time and interval, for the next owner
* ``P par:<url>``      set of parents of url (when edges are kept)
* ``P ch:<url>``       hash child -> t(url, child) (when edges are kept)

A mutating script returns ``{result, changes}``: ``changes`` a flat list of
``"s<state>", delta`` (the change of the partition's count of URLs in that state,
which the client adds to its counts) and ``layer, best`` (the new best host of
every layer whose best hosts it changed: its best key and its name, "" if the
layer is now empty in this partition; the client keeps them to merge pops across partitions without reading
every partition).
"""

from __future__ import annotations

# "#!lua" (Redis 7 script flags, none given): on a Redis Cluster the server refuses a
# script that touches keys of two slots, and one that would write past maxmemory
FRONTIER_LUA = r"""#!lua
local P = KEYS[1]
if ARGV[1] == 'g' then
  -- a worker's outbox delivered (focuscrawl.frontier.redis_outbox): 'g', worker, n, then
  -- the call. n grows with every call a worker sends; a call whose n is not above the
  -- last one applied here for that worker was applied already (a batch delivered again
  -- after a crash, or by the worker that took a dead one's partitions): skipped
  local last = tonumber(redis.call('HGET', P .. 'ap', ARGV[2]) or '-1')
  if tonumber(ARGV[3]) <= last then return {0, {}} end
  redis.call('HSET', P .. 'ap', ARGV[2], ARGV[3])
  for _ = 1, 3 do table.remove(ARGV, 1) end
end
local op = ARGV[1]
local QUEUED, IN_FLIGHT, FETCHED = 0, 1, 2
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

local result = 0

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
