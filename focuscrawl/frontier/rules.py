"""The merge rules and input checks every store shares (see :mod:`focuscrawl.frontier.memory`).

Kept apart so that the durable stores apply exactly the reference arithmetic: the
same IEEE doubles, the same tier comparisons, the same refusals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from focuscrawl.exceptions import FrontierError
from focuscrawl.types import Merge, URLState

SCORE = "score"  # the column name that means the score itself
INT32 = (-(2**31), 2**31 - 1)  # tiers, layers: int32 in the indexed store
INT64 = (-(2**63), 2**63 - 1)  # link counts: SQLite integers
_COLUMN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def host_of(url: str) -> str:
    """Host of a URL as stored for a parent that was never added.

    >>> host_of("http://Example.org:8080/a")
    'example.org'
    >>> host_of("not a url")
    ''
    """
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def checked_score(url: str, score: float) -> float:
    """``score`` as a float; NaN is refused (SQLite would store it as NULL).

    >>> checked_score("http://a/", 2)
    2.0
    """
    value = float(score)
    if math.isnan(value):
        raise FrontierError(f"score of {url!r} is NaN")
    return value


def checked_int(what: str, value: int, bounds: tuple[int, int] = INT32) -> int:
    """``value`` as an int within ``bounds``, else FrontierError naming ``what``.

    >>> checked_int("tier of 'http://a/'", 3)
    3
    """
    number = int(value)
    if not bounds[0] <= number <= bounds[1]:
        raise FrontierError(f"{what} is {number}: out of range")
    return number


def checked_item(
    url: str, score: float, parent: str | None, count: int, tier: int
) -> tuple[float, str | None, int, int]:
    """The fields of an added item as every store takes them: ``(score, parent, count,
    tier)``, the score a float that is not NaN, the tier an int32, the link count (of
    an edge) an int64, a parent that is the URL itself none (one function for the stores' adds).

    >>> checked_item("http://a/", 1, "http://a/", 2, 0)
    (1.0, None, 2, 0)
    """
    value = checked_score(url, score)
    if not INT32[0] <= tier <= INT32[1]:
        checked_int(f"tier of {url!r}", tier)
    if parent == url:
        parent = None
    if parent is not None and not INT64[0] <= count <= INT64[1]:  # (no parent: no edge)
        checked_int(f"link count of {url!r}", count, INT64)
    return value, parent, int(count), int(tier)


def checked_column(name: str) -> str:
    """A storable extra column name (an identifier, <= 63 characters), else FrontierError.

    >>> checked_column("opic_history")
    'opic_history'
    """
    if not isinstance(name, str) or not _COLUMN_NAME.fullmatch(name):
        raise FrontierError(f"bad column name {name!r} (letters, digits, _; at most 63)")
    return name


def merged(stored: float, new: float, merge: Merge) -> float:
    """The stored score after merging ``new`` into it.

    >>> [merged(2.0, 3.0, m) for m in (Merge.KEEP, Merge.MAX, Merge.ADD, Merge.SET)]
    [2.0, 3.0, 5.0, 3.0]
    """
    if merge is Merge.KEEP:
        return stored
    if merge is Merge.MAX:
        return max(stored, new)
    if merge is Merge.ADD:
        return stored + new
    return new


def merged_pair(
    tier: int, score: float, new_tier: int, new_score: float, merge: Merge
) -> tuple[int, float]:
    """``(tier, score)`` after merging a new pair: KEEP both, SET both, MAX the
    lexicographic max, ADD the sum of scores with the higher tier.

    >>> merged_pair(1, 5.0, 2, 0.5, Merge.MAX), merged_pair(1, 5.0, 0, 0.5, Merge.ADD)
    ((2, 0.5), (1, 5.5))
    """
    if merge is Merge.KEEP:
        return tier, score
    if merge is Merge.MAX:
        return max((tier, score), (new_tier, new_score))
    if merge is Merge.ADD:
        return max(tier, new_tier), score + new_score
    return new_tier, new_score


def aggregated(updates: Iterable[tuple[str, float]], merge: Merge) -> dict[str, float]:
    """One score per URL of a batch, combined with ``merge`` (all checked first).

    >>> aggregated([("u", 1.0), ("v", 2.0), ("u", 3.0)], Merge.ADD)
    {'u': 4.0, 'v': 2.0}
    """
    combined: dict[str, float] = {}
    for url, score in updates:
        value = checked_score(url, score)
        old = combined.get(url)
        combined[url] = value if old is None else merged(old, value, merge)
    return combined


def written(old: float, new: float, merge: Merge) -> bool:
    """Whether merging ``new`` into ``old`` counts as a write (``update_scores`` rules).

    >>> written(2.0, 1.0, Merge.MAX), written(2.0, 1.0, Merge.ADD), written(2.0, 9.0, Merge.KEEP)
    (False, True, False)
    """
    if merge is Merge.KEEP:
        return False
    return merge is not Merge.MAX or old < new


def known_states(
    state: Callable[[str], URLState | None], urls: Iterable[str]
) -> dict[str, URLState]:
    """``FrontierStore.known`` of an embedded store: ``state`` of each URL, the unknown
    ones left out (a store with round trips batches them instead)."""
    found = {}
    for url in urls:
        now = state(url)
        if now is not None:
            found[url] = now
    return found
