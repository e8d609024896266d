"""Numbers read back from Redis, checked: what a crawl's keys hold is data, not trust.

Anything with access to the Redis can write under a crawl's prefix (a script, a typo in
``redis-cli``, another program). A value the crawler cannot read as the number it wrote
becomes a :class:`~focuscrawl.exceptions.FrontierError` naming the key, so the worker
stops with one line (its files are cut back to the last commit, as after any stop)
instead of a traceback from deep inside the loop.
"""

from __future__ import annotations

import json
from typing import Any

from focuscrawl.exceptions import FrontierError

__all__ = ["decoded", "decoded_float", "decoded_json", "garbage"]


def garbage(key: str, value: object, what: str = "a number") -> FrontierError:
    """The one-line error for ``value`` found at ``key`` where ``what`` was written."""
    shown = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return FrontierError(
        f"the shared crawl's key {key} holds {shown!r}, not {what}: it was changed from "
        "outside focuscrawl; restore it or start a new crawl (this worker's files keep "
        "their last commit)"
    )


def decoded(key: str, value: Any) -> int:
    """``int(value)``, or :func:`garbage` naming ``key`` when it is no integer."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise garbage(key, value) from None


def decoded_float(key: str, value: Any) -> float:
    """``float(value)``, or :func:`garbage` naming ``key`` when it is no number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise garbage(key, value) from None


def decoded_json(key: str, value: Any) -> dict[str, Any]:
    """The JSON object ``value``, or :func:`garbage` naming ``key`` when it is none."""
    try:
        found = json.loads(value)
    except (TypeError, ValueError):
        found = None
    if not isinstance(found, dict):
        raise garbage(key, value, "a JSON object")
    return found
