"""The run directory's lock: two processes never write one run directory.

A crawl holds an exclusive ``flock`` on ``DIR/run.lock`` from before it reads or
writes anything in ``DIR`` until it has closed its outputs. A second process
(``--resume`` on a running crawl, a second crawl into the same ``--out``) gets a
one-line error naming the process that holds the lock, and touches nothing. The
kernel drops the lock when its holder dies, even by SIGKILL, so a crashed crawl
never leaves a stale lock behind.

A new crawl that fails before recording anything takes back what it wrote
(:meth:`RunLock.take_back`), while it still holds the lock, so that the next attempt
is not told to resume a crawl that never ran: only the crawl's files that were not
there when it took the lock (no other process writes them while it holds it), and
the directory with its lock file if this process made the directory and nothing
else is left in it. A process that did not get the lock removes nothing. Removing
the lock file is safe because a process that locked a file which is no longer the
directory's ``run.lock`` (removed between its open and its lock) tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType

from focuscrawl.exceptions import ConfigError

__all__ = ["LOCK_NAME", "RUN_FILES", "RunDirLocked", "RunLock"]

LOCK_NAME = "run.lock"

# what a run directory holds (the crawl's own files); anything else is the user's
RUN_FILES = frozenset({
    "run.json", "run.json.tmp", "crawl.db", "crawl.db.tmp", "crawl.db-wal", "crawl.db-shm",
    "crawl.db-journal", "pages.jsonl", "corpus.warc.gz", "decisions.jsonl", "control.json",
    "control.json.tmp", "control.ack.json", "control.ack.json.tmp", LOCK_NAME, "workers",
})  # fmt: skip

# a lock file replaced this often in a row between open and lock: give up
_ATTEMPTS = 8


class RunDirLocked(ConfigError):
    """The run directory is being written by another process."""


class RunLock:
    """An exclusive lock on a run directory, held until :meth:`release` (or exit).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d, RunLock(Path(d)) as lock:
    ...     lock.held
    True
    """

    def __init__(self, run_dir: Path, *, made_dir: bool = False) -> None:
        """``made_dir``: this process made ``run_dir`` (:meth:`take_back` may remove it)."""
        self.path = Path(run_dir) / LOCK_NAME
        self.made_dir = made_dir
        self._fd: int | None = None
        self._found: frozenset[str] = frozenset()  # the names in run_dir when locked

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock, or raise :class:`RunDirLocked` naming its holder's PID."""
        if self._fd is not None:
            return self
        for _ in range(_ATTEMPTS):
            fd = self._lock_file()
            if fd is not None:
                break
        else:
            raise ConfigError(f"{self.path.parent}: cannot lock the run directory (its "
                              f"{LOCK_NAME} is being removed and made again, over and over)")  # fmt: skip
        # the holder's PID, for the error a second process prints (informative only:
        # the lock is the flock, not the file's content)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        self._found = frozenset(_names(self.path.parent))
        return self

    def _lock_file(self) -> int | None:
        """The locked descriptor of the run directory's lock file, or None if that file
        was removed (a failed start taking back its directory) before it was locked."""
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
        if _same_file(fd, self.path):
            return fd
        os.close(fd)
        return None

    def take_back(self) -> None:
        """Remove, while holding the lock, what a new crawl that failed before recording
        anything wrote: the crawl's files (:data:`RUN_FILES`) that were not in the run
        directory when this process locked it; then, if this process made the directory
        and nothing else is in it, the lock file and the directory. Nothing if pages
        were recorded (a crawl to resume) or the lock is not held."""
        if self._fd is None:
            return
        run_dir = self.path.parent
        made = (_names(run_dir) - self._found) & RUN_FILES
        pages = run_dir / "pages.jsonl"
        if "workers" in made or ("pages.jsonl" in made and _size(pages) > 0):
            return  # a crawl that recorded (or started workers): one to resume
        for name in made - {LOCK_NAME, "workers"}:
            with contextlib.suppress(OSError):
                (run_dir / name).unlink()
        if self.made_dir and _names(run_dir) == {LOCK_NAME}:
            with contextlib.suppress(OSError):
                self.path.unlink()
                run_dir.rmdir()

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


def _names(path: Path) -> set[str]:
    try:
        return {p.name for p in path.iterdir()}
    except OSError:
        return set()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is the file at ``path`` (not one removed since it was opened)."""
    try:
        st = path.stat()
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
