"""The run directory's lock: two processes never write one run directory.

A crawl holds an exclusive ``flock`` on ``DIR/run.lock`` from before it reads or
writes anything in ``DIR`` until it has closed its outputs. A second process
(``--resume`` on a running crawl, a second crawl into the same ``--out``) gets a
one-line error naming the process that holds the lock, and touches nothing. The
kernel drops the lock when its holder dies, even by SIGKILL, so a crashed crawl
never leaves a stale lock behind; the file itself stays (removing it would let a
third process lock a new file while a second still holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType

from focuscrawl.exceptions import ConfigError

__all__ = ["LOCK_NAME", "RunDirLocked", "RunLock"]

LOCK_NAME = "run.lock"


class RunDirLocked(ConfigError):
    """The run directory is being written by another process."""


class RunLock:
    """An exclusive lock on a run directory, held until :meth:`release` (or exit).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d, RunLock(Path(d)) as lock:
    ...     lock.held
    True
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock, or raise :class:`RunDirLocked` naming its holder's PID."""
        if self._fd is not None:
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise ConfigError(
                f"{self.path.parent}: cannot lock the run directory ({exc.strerror or exc})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"process {holder}" if holder else "another process"
            raise RunDirLocked(
                f"{self.path.parent} is in use by {who} (a crawl writing it); "
                "wait for it to end or stop it, then try again"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise ConfigError(
                f"{self.path.parent}: cannot lock the run directory ({exc.strerror or exc})"
            ) from None
        # the holder's PID, for the error a second process prints (informative only:
        # the lock is the flock, not the file's content)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
