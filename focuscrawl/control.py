"""The control channel: change a running crawl's strategy parameters.

A request is a small JSON file in the run directory, ``control.json``:
``{"id": 3, "strategy": {"high": 80.0}}``, written atomically (``write_request``,
or ``focuscrawl control RUN_DIR high=80``:
:mod:`focuscrawl.commands.control`). The engine looks for a new ``id``
a few times a second, applies the change through the strategy's ``set_params``
(validated like the initial parameters) and answers in ``control.ack.json``
``{"id": 3, "ok": true}`` or ``{"id": 3, "ok": false, "error": "..."}``. Every
applied change is listed in ``run.json`` and in ``decisions.jsonl``.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision

REQUEST_NAME = "control.json"
ACK_NAME = "control.ack.json"


def _write_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_request(run_dir: Path, strategy: Mapping[str, Any], *, wait: float = 0.0) -> int:
    """Ask the crawl in ``run_dir`` to change strategy parameters; returns the request id.
    ``wait``: seconds to wait for a crawl still starting (building its model, reading its
    archives) to write its run.json; the crawl applies the request once it runs."""
    run_dir = Path(run_dir)
    deadline = time.monotonic() + wait
    while not (run_dir / "run.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not (run_dir / "run.json").exists():
        waited = f" after {wait:g} s" if wait > 0 else ""
        raise ConfigError(f"control: {run_dir} is not a run directory (no run.json{waited}: "
                          "no crawl started there)")  # fmt: skip
    if (_read(run_dir / "run.json") or {}).get("finished"):
        # a request nobody answers now would be applied by a later --resume, unasked
        raise ConfigError(f"control: the crawl in {run_dir} has finished; nothing runs to change "
                          "(give parameters to its --resume instead: --strategy-param KEY=VALUE)")  # fmt: skip
    # after the last request and the last answer (a withdrawn request leaves only the answer)
    seen = [(_read(run_dir / name) or {}).get("id", 0) for name in (REQUEST_NAME, ACK_NAME)]
    request_id = max(int(i) if isinstance(i, int) else 0 for i in seen) + 1
    _write_atomic(run_dir / REQUEST_NAME, {"id": request_id, "strategy": dict(strategy)})
    return request_id


def withdraw_request(run_dir: Path, request_id: int) -> bool:
    """Take back request ``request_id`` if no crawl has answered it (True), so that a
    crawl resumed later does not apply a change its user gave up on."""
    path = Path(run_dir) / REQUEST_NAME
    ack = _read(Path(run_dir) / ACK_NAME)
    if (ack is not None and ack.get("id") == request_id) or (_read(path) or {}).get("id") != request_id:
        return False
    path.unlink(missing_ok=True)
    return True


def wait_for_ack(run_dir: Path, request_id: int, timeout: float = 10.0) -> dict[str, Any] | None:
    """The engine's answer to ``request_id``, or None if none came within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ack = _read(Path(run_dir) / ACK_NAME)
        if ack is not None and ack.get("id") == request_id:
            return ack
        time.sleep(0.05)
    return None


class ControlChannel:
    """The engine's side: polls ``control.json`` and answers in ``control.ack.json``."""

    def __init__(self, run_dir: Path, last_id: int = 0, *, every: float = 0.2) -> None:
        self.path = Path(run_dir) / REQUEST_NAME
        self.ack_path = Path(run_dir) / ACK_NAME
        self.last_id = last_id
        self.every = every
        self._next_check = 0.0
        self._mtime = 0.0

    def poll(self) -> dict[str, Any] | None:
        """A new request, or None (cheap: one stat every ``every`` seconds)."""
        now = time.monotonic()
        if now < self._next_check:
            return None
        self._next_check = now + self.every
        try:
            mtime = self.path.stat().st_mtime
        except OSError:
            return None
        if mtime == self._mtime:
            return None
        self._mtime = mtime
        request = _read(self.path)
        if request is None or not isinstance(request.get("id"), int) or request["id"] <= self.last_id:
            return None
        self.last_id = request["id"]
        return request

    def answer(self, request_id: int, error: str | None) -> None:
        ack: dict[str, Any] = {"id": request_id, "ok": error is None}
        if error is not None:
            ack["error"] = error
        _write_atomic(self.ack_path, ack)


class StrategyControl:
    """A running crawl's control: requests to change its strategy's parameters, applied
    between two results, and the list of those applied (run.json, the resume state)."""

    def __init__(
        self, run_dir: Path, last_id: int = 0, applied: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self.channel = ControlChannel(run_dir, last_id)
        self.applied: list[dict[str, Any]] = [dict(c) for c in applied]

    def poll(
        self, strategy: Strategy, decide: Callable[[str, Decision], None], at: int, counters: Counter[str]
    ) -> bool:
        """A new request applied (its decision to ``decide``) or refused, and answered:
        True (the crawl commits it), or False when there was none. ``at``: results so far."""
        request = self.channel.poll()
        if request is None:
            return False
        changes = request.get("strategy") or {}
        error: str | None = None
        try:
            if not isinstance(changes, dict):
                raise ConfigError("control: 'strategy' must be a table of parameters")
            decision = strategy.set_params(changes)
        except ConfigError as exc:
            error = str(exc)
        else:
            decide("control", decision)
            self.applied.append({"id": request["id"], "strategy": changes, "at": at})
            counters["control_changes"] += 1
        self.channel.answer(int(request["id"]), error)
        return True
