"""The crawls a server runs: child processes over run directories of one runs directory.

Each crawl ``NAME`` runs as ``focuscrawl crawl`` (or ``simulate``) in a process of
its own, writing the run directory ``RUNS/NAME``; what the server knows of it lives
beside, in ``RUNS/.service/NAME/``: the request (``spec.json``), the config file the
crawl was started with (``config.toml``), what the user last asked for
(``state.json``: running, paused, stopped) and the crawl's output (``crawl.log``).

Whether a crawl runs is asked of the kernel, not of the server's memory: a crawl
holds an ``flock`` on its ``run.lock`` while it writes (:mod:`focuscrawl.output.lock`),
and ``/proc/locks`` names the holder without taking the lock. So a server started
again finds its crawls running, and :meth:`CrawlManager.recover` starts with
``--resume`` those the user wanted running and that no longer run (killed with the
server): the crawl continues exactly as ``focuscrawl crawl --resume`` does.

Pause is a clean stop (SIGINT, as Ctrl-C) that the server remembers to resume; stop
is the same, remembered as ended; stop ``now`` is a second SIGINT.

An experiment (``focuscrawl experiment``, its file ``experiment.toml`` beside the
others) holds no lock of its run directory (each of its crawls locks its own): the
server notes the PID it started it as, and asks the kernel whether that process
still runs the experiment (``/proc/PID/cmdline``). It has finished when its
``results.json`` is written; resumed, it runs again, reusing the crawls it finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.output.lock import RunLock
from focuscrawl.service.experiments import EXPERIMENT_FILE, experiment_toml
from focuscrawl.service.specs import CrawlSpec, RequestError, check_name, to_toml

SERVICE_DIR = ".service"
TRASH_DIR = ".deleted"  # a deleted crawl's directories, moved here, then removed
WANTS = ("running", "paused", "stopped", "failed")


def lock_holder(run_dir: Path) -> int | None:
    """The PID holding the flock on ``run_dir/run.lock`` (a crawl writing it), read from
    ``/proc/locks`` (the lock itself is not taken: a crawl starting then would fail)."""
    try:
        st = (run_dir / "run.lock").stat()
        locks = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    inode = f":{st.st_ino}"
    for line in locks.splitlines():
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].endswith(inode):
            dev = parts[5].rsplit(":", 1)[0].split(":")
            with contextlib.suppress(ValueError):
                if (int(dev[0], 16), int(dev[1], 16)) == (os.major(st.st_dev), os.minor(st.st_dev)):
                    return int(parts[4])
    return None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def last_line(path: Path, limit: int = 8192) -> str:
    """The last non-empty line of a log (its last ``limit`` bytes read)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - limit))
            lines = [ln for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""


def runs_command(pid: int, needle: str) -> bool:
    """Whether process ``pid`` runs and has ``needle`` among its arguments."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return needle.encode() in argv


class CrawlManager:
    """Starts, watches and stops the crawls of ``runs_dir``."""

    def __init__(self, runs_dir: Path, *, python: str = sys.executable) -> None:
        self.runs_dir = runs_dir.resolve()
        self.meta_root = self.runs_dir / SERVICE_DIR
        self.meta_root.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # what a delete killed half way moved aside
            remove_moved(list((self.runs_dir / TRASH_DIR).iterdir()))
        self.python = python
        self._children: dict[str, subprocess.Popen[bytes]] = {}

    # ------------------------------------------------------------------ paths
    def run_dir(self, name: str) -> Path:
        return self.runs_dir / check_name(name)

    def meta(self, name: str) -> Path:
        return self.meta_root / check_name(name)

    def names(self) -> list[str]:
        return sorted(p.name for p in self.meta_root.iterdir() if (p / "spec.json").is_file())

    def spec(self, name: str) -> dict[str, Any]:
        spec = _read_json(self.meta(name) / "spec.json")
        if not spec:
            raise RequestError(404, f"no crawl {name!r}", "name")
        return spec

    def wants(self, name: str) -> dict[str, Any]:
        return _read_json(self.meta(name) / "state.json")

    def _want(self, name: str, want: str, **more: Any) -> None:
        _write_json(self.meta(name) / "state.json", {**self.wants(name), "want": want, **more})

    # ------------------------------------------------------------------ state
    def pid(self, name: str) -> int | None:
        """The crawl's process if it runs (its own lock holder; a child just started that
        has not locked yet counts too)."""
        child = self._children.get(name)
        if child is not None and child.poll() is None:
            return child.pid
        if self._kind(name) == "experiment":
            pid = self.wants(name).get("pid")
            experiment = str(self.meta(name) / EXPERIMENT_FILE)
            return pid if isinstance(pid, int) and runs_command(pid, experiment) else None
        return lock_holder(self.run_dir(name))

    def _kind(self, name: str) -> str:
        return str(_read_json(self.meta(name) / "spec.json").get("kind", "crawl"))

    def finished(self, name: str) -> bool:
        if self._kind(name) == "experiment":
            return (self.run_dir(name) / "results.json").is_file()
        return bool(_read_json(self.run_dir(name) / "run.json").get("finished"))

    def state(self, name: str) -> str:
        """running, stopping, finished, paused, stopped, failed, or interrupted (no process,
        though wanted running: killed with the server; :meth:`recover` resumes it)."""
        self.reap()
        want = self.wants(name).get("want", "running")
        if self.pid(name) is not None:
            return "running" if want == "running" else "stopping"
        if want == "failed":  # (a crawl that fetched nothing ends its run, and exits 1)
            return "failed"
        if self.finished(name):
            return "finished"
        return want if want in ("paused", "stopped", "failed") else "interrupted"

    def describe(self, name: str) -> dict[str, Any]:
        state = self.state(name)  # first: it notes an exit (code, error) that wants then holds
        spec, wants = self.spec(name), self.wants(name)
        out = {"name": name, "kind": spec.get("kind", "crawl"), "state": state,
               "pid": self.pid(name), "created": wants.get("created"),
               "run_dir": name, "seeds": len(spec.get("seeds") or ())}  # fmt: skip
        if wants.get("exit") is not None:
            out["exit"] = wants["exit"]
        if wants.get("error"):
            out["error"] = wants["error"]
        return out

    # ------------------------------------------------------------------ actions
    def create(self, spec: CrawlSpec) -> dict[str, Any]:
        """Start a new crawl; 409 if the name (its run directory) is taken."""
        meta, run_dir = self.meta(spec.name), self.run_dir(spec.name)
        if run_dir.exists() or meta.exists():
            raise RequestError(409, f"a crawl {spec.name!r} exists already (its run directory "
                                    "is taken); choose another name", "name")  # fmt: skip
        meta.mkdir(parents=True)
        if spec.experiment is not None:
            (meta / EXPERIMENT_FILE).write_text(experiment_toml(spec.experiment), encoding="utf-8")
        else:
            (meta / "config.toml").write_text(to_toml(spec.seeds, spec.settings), encoding="utf-8")
        _write_json(meta / "spec.json", spec.to_json())
        _write_json(meta / "state.json", {"want": "running", "created": time.time()})
        self._start(spec.name, resume=False)
        return self.describe(spec.name)

    def _argv(self, name: str, *, resume: bool) -> list[str]:
        spec = self.spec(name)
        if spec.get("kind") == "experiment":  # (it reuses the crawls it finished: no --resume)
            return [self.python, "-m", "focuscrawl", "experiment", str(self.meta(name) / EXPERIMENT_FILE),
                    "--out", str(self.run_dir(name))]  # fmt: skip
        argv = [self.python, "-m", "focuscrawl", spec.get("kind", "crawl"),
                "--out", str(self.run_dir(name)), "--log-every", "5"]  # fmt: skip
        for archive in spec.get("archives") or ():
            argv += ["--archive", archive]
        if spec.get("workers") and not resume:  # a resume finds the shared crawl in Redis
            argv += ["--workers", str(spec["workers"])]
        if resume:
            return [*argv, "--resume"]
        return [*argv, "--config", str(self.meta(name) / "config.toml")]

    def _start(self, name: str, *, resume: bool) -> None:
        log = open(self.meta(name) / "crawl.log", "ab")  # noqa: SIM115 - the child's
        try:
            log.write(f"--- {'resume' if resume else 'start'} {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
            log.flush()
            # a session of its own: a Ctrl-C meant for the server does not reach its crawls
            self._children[name] = subprocess.Popen(
                self._argv(name, resume=resume), stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True, cwd=self.runs_dir,
            )  # fmt: skip
        finally:
            log.close()
        self._want(name, "running", exit=None, error=None, pid=self._children[name].pid)

    def pause(self, name: str) -> dict[str, Any]:
        state = self.state(name)
        if state != "running":
            raise RequestError(409, f"crawl {name!r} is {state}, not running: nothing to pause")
        self._want(name, "paused")
        self._signal(name, signal.SIGINT)
        return self.describe(name)

    def resume(self, name: str) -> dict[str, Any]:
        state = self.state(name)
        if state not in ("paused", "stopped", "interrupted", "failed"):
            raise RequestError(409, f"crawl {name!r} is {state}: nothing to resume")
        self._start(name, resume=(self.run_dir(name) / "run.json").exists())
        return self.describe(name)

    def stop(self, name: str, *, now: bool = False) -> dict[str, Any]:
        state = self.state(name)
        if state in ("finished", "stopped", "failed"):
            raise RequestError(409, f"crawl {name!r} has ended ({state}): nothing to stop")
        self._want(name, "stopped")
        if state in ("running", "stopping"):
            self._signal(name, signal.SIGINT)
            if now:  # the second Ctrl-C: fetches in flight are not waited for
                self._signal(name, signal.SIGINT)
        return self.describe(name)

    def delete(self, name: str) -> dict[str, Path]:
        """Take an ended crawl away: its run directory ``RUNS/NAME`` and what the server kept
        of it (``RUNS/.service/NAME``: request, config, log, search index) are moved into
        ``RUNS/.deleted/`` (renames within the runs directory, what the server knew first,
        so that a kill half way leaves at worst a run directory no crawl names: never a
        crawl whose files are gone, which ``recover`` would start anew). Returns each
        moved one (relative to the runs directory) -> where it is now, for
        :func:`remove_moved`. 409 while a process runs it (one the server started, or
        ``focuscrawl crawl --resume`` holding its run directory's lock)."""
        state = self.state(name)
        if state in ("running", "stopping"):
            raise RequestError(409, f"crawl {name!r} is {state}: stop it first, then delete it")
        run_dir, meta = self.run_dir(name), self.meta(name)
        (self.runs_dir / TRASH_DIR).mkdir(exist_ok=True)
        moved = self.runs_dir / TRASH_DIR / f"{name}.{os.getpid()}.{time.monotonic_ns()}"
        lock = RunLock(run_dir) if run_dir.is_dir() and not run_dir.is_symlink() else None
        try:
            if lock is not None:
                lock.acquire()
        except ConfigError as exc:
            raise RequestError(409, f"crawl {name!r}: {exc}") from None
        out = {f"{SERVICE_DIR}/{name}": moved.with_name(moved.name + SERVICE_DIR)}
        try:
            os.rename(meta, out[f"{SERVICE_DIR}/{name}"])
            with contextlib.suppress(FileNotFoundError):  # (a crawl that never made it)
                os.rename(run_dir, moved)
                out[name] = moved
        finally:
            if lock is not None:
                lock.release()
        self._children.pop(name, None)
        return out

    def _signal(self, name: str, sig: int) -> None:
        pid = self.pid(name)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def reap(self) -> None:
        """Note the exit of children that ended; a crawl that failed (not a clean stop,
        not Ctrl-C) is remembered as failed, with the last line it wrote."""
        for name, child in list(self._children.items()):
            code = child.poll()
            if code is None:
                continue
            del self._children[name]
            wants = self.wants(name)
            # exit 1 with its run ended: no page could be fetched (a proxy or the network
            # down), which a resume tries again once the cause is fixed
            failed = code not in (0, 130) and wants.get("want") == "running"
            error = last_line(self.meta(name) / "crawl.log") if failed else None
            self._want(name, "failed" if failed else wants.get("want", "running"), exit=code, error=error)

    def recover(self) -> list[str]:
        """Resume the crawls wanted running that no process runs (killed with the server)."""
        resumed = []
        for name in self.names():
            if self.state(name) == "interrupted":
                self._start(name, resume=(self.run_dir(name) / "run.json").exists())
                resumed.append(name)
        return resumed

    def shutdown(self, timeout: float = 30.0) -> None:
        """Stop the children cleanly (SIGINT) and wait for them; what they were wanted to
        do is kept, so a server started again resumes the crawls that were running."""
        for child in self._children.values():
            if child.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.send_signal(signal.SIGINT)
        deadline = time.monotonic() + timeout
        for child in self._children.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(max(0.1, deadline - time.monotonic()))
            if child.poll() is None:
                child.kill()
                child.wait()
        self._children.clear()


def remove_moved(paths: Iterable[Path]) -> tuple[int, int]:
    """Remove the directories :meth:`CrawlManager.delete` moved aside; (files, bytes)
    removed. A link is removed as a link, what it points to untouched (``shutil.rmtree``
    follows none)."""
    files = size = 0
    for path in paths:
        if path.is_symlink() or not path.is_dir():
            with contextlib.suppress(OSError):
                files, size = files + 1, size + path.lstat().st_size
                path.unlink()
            continue
        for root, dirs, names in os.walk(path):  # (a link to a directory: not entered)
            for file in [*names, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
                with contextlib.suppress(OSError):
                    files, size = files + 1, size + os.lstat(os.path.join(root, file)).st_size
        shutil.rmtree(path, ignore_errors=True)
    return files, size
