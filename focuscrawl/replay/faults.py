"""Injected latency and faults of the replay web, for testing a crawler's manners.

Specs, as given on the command line::

    --latency HOST=SECONDS          delay before every answer from HOST
    --fault   HOST[PATH]=KIND[:OPTION...]

``HOST`` is a host name or an ``fnmatch`` pattern (``*``, ``*.example.org``),
compared with the lower-cased host name (no port). ``PATH`` is an optional
regular expression starting with ``/``; it must match the start of the
request's path and query (``re.match``). ``KIND`` is one of

- ``timeout``  never answer; hold the connection until the client gives up
- ``500`` ``503`` ``429``  answer with that status (503 and 429 with ``Retry-After``)
- ``reset``    close the socket abruptly (RST) without any answer
- ``slow``     send the answer, trickling the body in small chunks with pauses
- ``truncate`` send the headers and half of the body, then close

Options: a bare number ``0.3`` or ``p=0.3`` = probability (default 1);
``first=N`` = only the first N requests *of each URL* (so retries succeed);
``retry-after=S`` (503, 429); ``chunk=BYTES`` and ``pause=SECONDS`` (slow).
Examples: ``*=503:first=1``, ``www.cs.wisc.edu/~.*=reset:0.25``,
``*/robots\\.txt=timeout``. The first fault that matches and fires wins.

Whether a probabilistic fault fires is a hash of (seed, fault, URL, n-th
request of that URL), so a run is reproducible whatever the order in which
concurrent requests arrive.
"""

from __future__ import annotations

import fnmatch
import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from focuscrawl.exceptions import ConfigError

FaultKind = Literal["timeout", "500", "503", "429", "reset", "slow", "truncate"]
FAULT_KINDS: tuple[FaultKind, ...] = ("timeout", "500", "503", "429", "reset", "slow", "truncate")
_ACTION = re.compile("=(?:" + "|".join(FAULT_KINDS) + ")(?=:|$)")


def _host_pattern(text: str, spec: str) -> str:
    host = text.strip().lower()
    if not host or any(c.isspace() for c in host):
        raise ConfigError(f"bad host in {spec!r}: expected HOST or a pattern such as *.example.org")
    return host


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault rule; see the module docstring for the meaning of each field."""

    host: str
    kind: FaultKind
    path: re.Pattern[str] | None = None
    probability: float = 1.0
    first: int | None = None
    retry_after: float = 1.0
    chunk: int = 256
    pause: float = 0.05

    def matches(self, host: str, path: str) -> bool:
        if not fnmatch.fnmatchcase(host, self.host):
            return False
        return self.path is None or self.path.match(path) is not None

    @classmethod
    def parse(cls, spec: str) -> Fault:
        """``HOST[PATH]=KIND[:OPTION...]``, e.g. ``*=503:first=2``.

        >>> Fault.parse("*.org/a.*=slow:0.5:pause=0.1").pause
        0.1
        """
        # the path pattern and the options may contain '=' too: the action starts at
        # the last '=' that is followed by a fault kind
        splits = list(_ACTION.finditer(spec))
        if not splits or splits[-1].start() == 0:
            raise ConfigError(f"bad fault {spec!r}: expected HOST[PATH]=KIND[:OPTION...]")
        target, action = spec[: splits[-1].start()], spec[splits[-1].start() + 1 :]
        slash = target.find("/")
        host_text, path_text = (target, "") if slash < 0 else (target[:slash], target[slash:])
        host = _host_pattern(host_text, spec)
        path: re.Pattern[str] | None = None
        if path_text:
            try:
                path = re.compile(path_text)
            except re.error as exc:
                raise ConfigError(f"bad path pattern in fault {spec!r}: {exc}") from None
        kind_text, *options = action.split(":")
        if kind_text not in FAULT_KINDS:
            raise ConfigError(
                f"bad fault kind {kind_text!r} in {spec!r}: one of {', '.join(FAULT_KINDS)}"
            )
        values: dict[str, float] = {}
        for option in options:
            name, has_value, value = option.partition("=")
            if not has_value:
                name, value = "p", name
            if name not in ("p", "first", "retry-after", "chunk", "pause"):
                raise ConfigError(f"bad fault option {option!r} in {spec!r}")
            try:
                values[name] = float(value)
            except ValueError:
                raise ConfigError(f"bad number {value!r} in fault {spec!r}") from None
            if not 0 <= values[name] < math.inf or (name == "p" and values[name] > 1):
                raise ConfigError(f"out-of-range {name} {value!r} in fault {spec!r}")
        first = values.get("first")
        return cls(
            host=host,
            kind=kind_text,
            path=path,
            probability=values.get("p", 1.0),
            first=None if first is None else int(first),
            retry_after=values.get("retry-after", 1.0),
            chunk=max(1, int(values.get("chunk", 256))),
            pause=values.get("pause", 0.05),
        )


def parse_latency(spec: str) -> tuple[str, float]:
    """``HOST=SECONDS`` as (host pattern, seconds).

    >>> parse_latency("*.example.org=0.25")
    ('*.example.org', 0.25)
    """
    host_text, eq, seconds_text = spec.rpartition("=")
    if not eq:
        raise ConfigError(f"bad latency {spec!r}: expected HOST=SECONDS")
    try:
        seconds = float(seconds_text)
    except ValueError:
        raise ConfigError(f"bad latency {spec!r}: {seconds_text!r} is not a number") from None
    if not 0 <= seconds < 3600:
        raise ConfigError(f"bad latency {spec!r}: seconds must be in [0, 3600)")
    return _host_pattern(host_text, spec), seconds


@dataclass
class FaultPlan:
    """Latency per host pattern and fault rules; decides the fate of each request."""

    latency: dict[str, float] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    seed: int = 0
    _seen: Counter[tuple[int, str]] = field(default_factory=Counter, init=False, repr=False)

    @classmethod
    def parse(
        cls, latency: Iterable[str] = (), faults: Iterable[str] = (), seed: int = 0
    ) -> FaultPlan:
        """A plan from ``--latency`` and ``--fault`` specs.

        >>> plan = FaultPlan.parse(["*=0.1", "slow.org=2"], ["*=503:first=1"])
        >>> plan.latency_for("slow.org"), plan.latency_for("other.org")
        (2.0, 0.1)
        >>> [getattr(plan.pick("a.org", "/x"), "kind", None) for _ in range(2)]
        ['503', None]
        """
        return cls(
            latency=dict(parse_latency(spec) for spec in latency),
            faults=[Fault.parse(spec) for spec in faults],
            seed=seed,
        )

    def latency_for(self, host: str) -> float:
        """Delay for ``host``: an exact entry first, else the last matching pattern."""
        host = host.lower()
        if host in self.latency:
            return self.latency[host]
        delay = 0.0
        for pattern, seconds in self.latency.items():
            if fnmatch.fnmatchcase(host, pattern):
                delay = seconds
        return delay

    def pick(self, host: str, path: str) -> Fault | None:
        """The fault to inject into this request, if any (counts the request)."""
        host = host.lower()
        chosen: Fault | None = None
        for number, fault in enumerate(self.faults):
            if not fault.matches(host, path):
                continue
            key = (number, f"{host}{path}")
            nth = self._seen[key]
            self._seen[key] = nth + 1
            if chosen is not None:
                continue
            if fault.first is not None and nth >= fault.first:
                continue
            if fault.probability < 1 and self._draw(number, host, path, nth) >= fault.probability:
                continue
            chosen = fault
        return chosen

    def _draw(self, number: int, host: str, path: str, nth: int) -> float:
        digest = hashlib.blake2b(
            f"{self.seed}\t{number}\t{host}{path}\t{nth}".encode(), digest_size=8
        ).digest()
        return int.from_bytes(digest, "big") / 2**64
