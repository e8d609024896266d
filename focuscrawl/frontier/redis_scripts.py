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

The frontier's script, :data:`FRONTIER_LUA`, is one Lua program in three parts:
its head here (the partition's key prefix, the guard of a delivered outbox call),
the row library (:mod:`focuscrawl.frontier.redis_lua_rows`: a row's encoding and
the indexes and counts that follow it, the merge rules) and the operations
(:mod:`focuscrawl.frontier.redis_lua_ops`: one branch per op).

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

from focuscrawl.frontier.redis_lua_ops import OPS_LUA
from focuscrawl.frontier.redis_lua_rows import ROWS_LUA

__all__ = ["FRONTIER_LUA"]

# the script's head: the partition's key prefix, a delivered outbox call's guard, the op.
# "#!lua" (Redis 7 script flags, none given): on a Redis Cluster the server refuses a
# script that touches keys of two slots, and one that would write past maxmemory
_HEAD_LUA = r"""#!lua
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
"""

# the frontier's script, in the order its parts are read
FRONTIER_LUA = _HEAD_LUA + ROWS_LUA + OPS_LUA
