"""What a resume may change (issue 41 item 3): the budget, the delay, the concurrency...
but not what makes the crawl the crawl it was: its strategy, its model, its schedule and
whether it is live or simulated. A resume that would change one of them is refused with
one line naming what differs; with ``force`` it goes on, and run.json records the crawl
as segments, each with its own identity and the URL count it started at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.settings import CrawlSettings, Settings, ordered_schedule

# what a resume keeps, in the order the refusal names them
IDENTITY = ("strategy", "model", "schedule", "live/simulated")


def identity(settings: Settings, *, simulated: bool) -> dict[str, Any]:
    """What makes a crawl the crawl it is, for settings about to be used."""
    return {
        "strategy": settings.crawl.strategy,
        "model": dict(settings.model) or None,
        "schedule": "ordered" if ordered_schedule(settings.crawl, simulated) else "as-completed",
        "live/simulated": "simulated" if simulated else "live",
    }


def saved_identity(run: Mapping[str, Any]) -> dict[str, Any]:
    """The same, as a run.json saved it (a run.json written before the engine's first
    one has no ``schedule``: it is the one its settings give)."""
    saved = run.get("settings") or {}
    crawl = saved.get("crawl") or {}
    simulated = bool(run.get("simulated_from"))
    schedule = run.get("schedule")
    if schedule is None:
        own = CrawlSettings(schedule=str(crawl.get("schedule", "auto")))
        schedule = "ordered" if ordered_schedule(own, simulated) else "as-completed"
    return {
        "strategy": crawl.get("strategy", CrawlSettings.strategy),
        "model": dict(saved.get("model") or {}) or None,
        "schedule": schedule,
        "live/simulated": "simulated" if simulated else "live",
    }


def _shown(key: str, value: Any) -> str:
    """A value of the identity in a few words (a model: its name or its directory).

    >>> _shown("model", {"name": "keyword", "keywords": ["a"]}), _shown("model", None)
    ('keyword', 'none')
    >>> _shown("model", {"path": "/m/course", "threshold": 0.3})
    '/m/course (threshold=0.3)'
    """
    if key != "model":
        return str(value)
    if not value:
        return "none"
    head = str(value.get("path") or value.get("name") or "?")
    rest = ", ".join(f"{k}={v}" for k, v in sorted(value.items()) if k in ("threshold", "target"))
    return f"{head} ({rest})" if rest and "path" in value else head


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def differences(run: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``key (saved -> new)`` for each part of the identity a resume would change."""
    saved = saved_identity(run)
    out = []
    for key in IDENTITY:
        if _same(saved[key], now[key]):
            continue
        was, new = _shown(key, saved[key]), _shown(key, now[key])
        if was == new:  # (a model's other parameters)
            was, new = (json.dumps(v, sort_keys=True, default=str) for v in (saved[key], now[key]))
        out.append(f"{key} ({was} -> {new})")
    return out


def resume_segments(
    run: Mapping[str, Any], settings: Settings, *, simulated: bool, force: bool, where: str
) -> list[dict[str, Any]]:
    """The segments run.json records for a resume with ``settings``: the saved ones
    unchanged when the crawl stays what it was; a change refused (ConfigError, one
    line) unless ``force``, which adds a segment starting at the URLs fetched so far."""
    segments: list[dict[str, Any]] = [dict(s) for s in run.get("segments") or ()]
    now = identity(settings, simulated=simulated)
    changed = differences(run, now)
    if not changed:
        return segments
    if not force:
        raise ConfigError(
            f"{where}: --resume would change the crawl's {', '.join(changed)}; a resume keeps "
            "them (the budget, delay and concurrency may change), or --force (force=True in "
            "Python) goes on with the new ones as a second segment, recorded in run.json"
        )
    fetched = int((run.get("summary") or {}).get("fetched") or 0)
    if not segments:
        segments.append({"from_urls": 0, **saved_identity(run)})
    segments.append({"from_urls": fetched, **now, "forced": changed})
    return segments


def check_shared_resume(run: Mapping[str, Any], settings: Settings, *, where: str) -> None:
    """A shared crawl resumes with the settings it published in Redis (its workers read
    them there): another strategy, model or schedule is refused in one line, not ignored."""
    changed = differences(run, identity(settings, simulated=False))
    if changed:
        raise ConfigError(f"{where}: --resume would change the shared crawl's {', '.join(changed)}; "
                          "its workers go on with the settings it published (the budget may change)")  # fmt: skip
