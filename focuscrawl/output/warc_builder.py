"""WARC records built in a child process, on a core the crawl loop does not use.

The crawl loop is one thread, and building a page's two WARC records (two SHA-1
digests, the heads, two deflates) was about a sixth of its CPU per page. The
records are only needed on disk by the next commit (every 50 results), so they
can be made elsewhere without the loop ever waiting on a page: a
:class:`RecordBuilder` sends the fetch results to a child process in batches,
and the writer takes the records back, in order, whenever it writes or syncs.
The child runs :func:`focuscrawl.output.warc_records.exchange`, the very
function the writer runs itself, with the same level and the same WARC-Date (the
time the writer was handed the result), so the archive holds the same records
whichever side built them (record IDs are random either way).

Nothing is lost if the child dies: the writer keeps every result it has not
got the records of, and builds them itself, in order. The child ignores SIGINT
(the crawl decides when to stop) and exits when its input closes, so a crawl
killed with SIGKILL leaves none behind; records not yet written were not
committed either, and a resumed crawl fetches their URLs again as it always did.

Protocol: frames of a 4-byte little-endian length and a pickle. The child says
``READY`` once, then answers each ``(level, [(FetchResult, when), ...])`` batch
with the list of their records.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import BinaryIO

from focuscrawl.output import warc_records
from focuscrawl.types import FetchResult

_READY = b"READY"
BATCH = 8  # results per frame to the child: one wake-up of it per 8 pages
_PIPE_SIZE = 1 << 20  # bytes a pipe may hold (Linux), so a batch rarely waits for room
_ANSWER_WAIT = 30.0  # seconds without an answer before the child is taken for dead
_F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ (Linux; named in fcntl from Python 3.10 on Linux only)


def _frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=5)
    return len(data).to_bytes(4, "little") + data


def _read_frame(inp: BinaryIO) -> bytes | None:
    head = inp.read(4)
    if len(head) < 4:
        return None
    size = int.from_bytes(head, "little")
    data = inp.read(size)
    return data if len(data) == size else None


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    """The child's loop: a batch of results in, their records out, until the input ends."""
    out.write(_frame(_READY))
    out.flush()
    while (frame := _read_frame(inp)) is not None:
        level, batch = pickle.loads(frame)
        out.write(_frame([warc_records.exchange(r, level=level, when=w) for r, w in batch]))
        out.flush()


def main() -> None:
    """The child process (``python -c "from focuscrawl.output.warc_builder import main; main()"``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the crawl stops us by closing the pipe
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):  # the crawl went away
        serve(sys.stdin.buffer, sys.stdout.buffer)
    # Every answer was flushed as it was written, and nothing else is open: end now,
    # not after the interpreter's teardown (about 10 ms that the crawl's end waits for).
    os._exit(0)


def _grow_pipe(fd: int) -> None:
    with contextlib.suppress(OSError, ImportError):
        import fcntl

        fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)


class RecordBuilder:
    """One child that builds ``exchange`` records for one writer, in submission order.

    :meth:`submit` never waits; :meth:`take` returns the records that are back
    (all of them with ``wait``). After a failure (:attr:`failed`) nothing more is
    taken: :meth:`orphans` hands back the results whose records never came.
    """

    def __init__(self, level: int = warc_records.GZIP_LEVEL) -> None:
        self.level = level
        self.failed: str | None = None
        self.ready = False
        self.sent = 0  # results handed to the child (for counters)
        self._waiting: deque[tuple[FetchResult, float]] = deque()  # sent, no record yet
        self._batch: list[tuple[FetchResult, float]] = []
        self._outbox = bytearray()
        self._inbox = bytearray()
        root = str(Path(__file__).resolve().parents[2])  # the package this crawl runs from
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from focuscrawl.output.warc_builder import main; main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0,
        )  # fmt: skip
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._wfd = self._proc.stdin.fileno()
        self._rfd = self._proc.stdout.fileno()
        for fd in (self._wfd, self._rfd):
            _grow_pipe(fd)
            os.set_blocking(fd, False)

    @property
    def batched(self) -> int:
        """Results submitted and not sent yet (they go with the next batch)."""
        return len(self._batch)

    @property
    def pending(self) -> int:
        """Results whose records have not been taken yet."""
        return len(self._waiting)

    def submit(self, result: FetchResult, when: float) -> None:
        """Queue one result (its records dated ``when``); sent with its batch."""
        item = (result, when)
        self._waiting.append(item)
        self._batch.append(item)
        if len(self._batch) >= BATCH:
            self._send_batch()
        elif self._outbox:
            self._push()

    def take(self, *, wait: bool) -> list[bytes]:
        """The records that are back, in order; with ``wait``, until all are."""
        if self.failed is not None:
            return []
        if wait and self._batch:
            self._send_batch()
        records: list[bytes] = []
        deadline = time.monotonic() + _ANSWER_WAIT
        while True:
            self._push()
            self._pull(records)
            if self.failed is not None or not wait or len(records) == len(self._waiting):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail("no answer")
                break
            # poll, not select: a crawl may hold more than FD_SETSIZE (1,024) descriptors
            poller = select.poll()
            poller.register(self._rfd, select.POLLIN)
            if self._outbox:
                poller.register(self._wfd, select.POLLOUT)
            poller.poll(left * 1000)
        for _ in records:
            self._waiting.popleft()
        return records

    def orphans(self) -> list[tuple[FetchResult, float]]:
        """After a failure: the results submitted but never answered, in order."""
        items = list(self._waiting)
        self._waiting.clear()
        self._batch.clear()
        return items

    def close(self) -> None:
        """End the child (its input closes; killed if it does not go)."""
        for pipe in (self._proc.stdin, self._proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self._proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    # ------------------------------------------------------------------ pipes
    def _send_batch(self) -> None:
        if self.failed is None:
            self._outbox += _frame((self.level, self._batch))
            self.sent += len(self._batch)
        self._batch = []
        self._push()

    def _push(self) -> None:
        while self._outbox and self.failed is None:
            try:
                sent = os.write(self._wfd, self._outbox)
            except BlockingIOError:
                return
            except OSError as exc:  # the child is gone
                self._fail(exc.strerror or type(exc).__name__)
                return
            del self._outbox[:sent]

    def _pull(self, records: list[bytes]) -> None:
        """Read what the child wrote; complete answers are added to ``records``."""
        while self.failed is None:
            try:
                chunk = os.read(self._rfd, 1 << 18)
            except BlockingIOError:
                break
            except OSError as exc:
                self._fail(exc.strerror or type(exc).__name__)
                break
            if not chunk:
                self._fail("exited" if self._proc.poll() is not None else "closed its output")
                break
            self._inbox += chunk
        inbox, pos = self._inbox, 0
        while len(inbox) - pos >= 4:
            size = int.from_bytes(inbox[pos : pos + 4], "little")
            if len(inbox) - pos - 4 < size:
                break
            answer = pickle.loads(inbox[pos + 4 : pos + 4 + size])
            pos += 4 + size
            if answer == _READY:
                self.ready = True
            else:
                records.extend(answer)
        del inbox[:pos]

    def _fail(self, why: str) -> None:
        if self.failed is None:
            self.failed = why
            with contextlib.suppress(OSError):
                self._proc.kill()
