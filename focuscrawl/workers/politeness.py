"""Per-host politeness across a partition's handover: the next owner of a host waits
for what the last one's requests left.

Within a worker the fetcher keeps each host's delay (``max(delay, Crawl-delay)``, a
``Retry-After``). When a partition changes hands, the new owner's fetcher knows none
of it: its first request (robots.txt) would go at once, closer to the last owner's
last request than the host asked for. So each worker records, for every host of its
partitions it fetched, the host's next allowed time (its fetcher's, on the server's
clock) and its interval, in the partition's ``nt`` hash, written by the lease script
itself (:mod:`focuscrawl.workers.leases`): at every renewal for the hosts
fetched since, and at the give-back also for those that must still wait. The worker
that takes the partition waits before its first request to each host:

* **given back** (the last owner freed it: a worker joined, or it stopped): until the
  host's next allowed time as written at the give-back, which knew every request the
  last owner made (it frees only partitions with nothing in flight);
* **expired** (the last owner died or stalled): at least the host's interval from the
  take (its last request was before), and its recorded next time. A host the dead
  owner first fetched after its last renewal has no record: the lease time (the
  owner's death is at least 5/6 of it before the take) is what it waits.

The interval recorded is what the owner's fetcher left to wait right after a fetch
(a lower bound of the host's interval by the fetch's own transfer time, which the
lease time after a death covers many times over).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from focuscrawl.frontier.redis.decode import garbage
from focuscrawl.workers.leases import Taken

__all__ = ["HostHandover"]


class HostHandover:
    """The hosts' next allowed times, handed over with their partitions.

    ``partition_of(host)``: the partition of a host. :attr:`ready_at` is the fetcher's
    ``host_ready_at`` (set by the worker once its fetcher is built)."""

    def __init__(self, partition_of: Callable[[str], int]) -> None:
        self._partition_of = partition_of
        self.ready_at: Callable[[str], float] = lambda host: 0.0
        self._lock = threading.Lock()  # the fetches (event loop) and the leases' thread
        self._intervals: dict[int, dict[str, float]] = {}  # partition -> host -> seconds
        self._dirty: dict[int, set[str]] = {}  # partition -> hosts fetched since recorded
        self._not_before: dict[str, float] = {}  # host -> monotonic, from a handover

    # ------------------------------------------------------------ the owner's side
    def fetched(self, host: str) -> None:
        """A fetch of ``host`` ended (its requests made): what is left to wait now, at
        least, is the host's interval."""
        left = max(0.0, self.ready_at(host) - time.monotonic())
        p = self._partition_of(host)
        with self._lock:
            hosts = self._intervals.setdefault(p, {})
            hosts[host] = max(hosts.get(host, 0.0), left)
            self._dirty.setdefault(p, set()).add(host)

    def records(self, partition: int, *, every: bool = False) -> list[str]:
        """The lease script's records of ``partition``'s hosts (host, ms until its next
        allowed request, its interval in ms): those fetched since their last record (a
        renewal), and at a give-back also those that must still wait (the others'
        records in Redis are still true)."""
        with self._lock:
            dirty = self._dirty.pop(partition, set())
            hosts = self._intervals.get(partition, {})
            wanted = {h: hosts[h] for h in (hosts if every else dirty)}
        now = time.monotonic()
        out: list[str] = []
        for host, interval in sorted(wanted.items()):
            left = max(0.0, self.ready_at(host) - now, self._not_before.get(host, 0.0) - now)
            if left > 0 or host in dirty:
                out += [host, str(math.ceil(left * 1000)), str(math.ceil(interval * 1000))]
        return out

    def given_back(self, partition: int) -> None:
        """The partition is another's now: its hosts are no longer recorded here."""
        with self._lock:
            self._intervals.pop(partition, None)
            self._dirty.pop(partition, None)

    # ------------------------------------------------------------ the new owner's side
    def taken(self, taken: Taken, *, at: float) -> int:
        """Wait for ``taken``'s hosts as its records say (``at``: the monotonic time,
        read after the take's reply); returns the hosts that must wait."""
        waiting = 0
        with self._lock:
            hosts = self._intervals.setdefault(taken.partition, {})
            for host, record in taken.records.items():
                try:
                    next_ms, interval_ms = (int(x) for x in record.split())
                except ValueError:  # not two numbers: written from outside focuscrawl
                    raise garbage(f"{taken.key}nt (field {host})", record,
                                  "two numbers (next time, interval)") from None  # fmt: skip
                until = at + (next_ms - taken.server_ms) / 1000
                if not taken.given_back:  # its last owner's last request: any time before now
                    until = max(until, at + interval_ms / 1000)
                if until > at and until > self._not_before.get(host, 0.0):
                    self._not_before[host] = until
                    # (given back before its wait is over, the host's record goes on with it)
                    hosts[host] = max(hosts.get(host, 0.0), interval_ms / 1000)
                    waiting += 1
        return waiting

    def wait(self, host: str) -> float:
        """Seconds a request to ``host`` must still wait for its last owner's (0: none)."""
        until = self._not_before.get(host)
        if until is None:
            return 0.0
        left = until - time.monotonic()
        if left <= 0:
            with self._lock:
                if self._not_before.get(host) == until:
                    del self._not_before[host]
            return 0.0
        return left
