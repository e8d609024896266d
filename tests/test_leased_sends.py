"""A shared worker's request goes out only while its leases are its own, checked again
once the transport holds the connection, just before the request is written: a request
that waited for a connection (or whose worker was stopped while it did) is not sent
after the leases were lost."""

from __future__ import annotations

import pytest

from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.transport import SEND_GATE, TransportError
from focuscrawl.settings import FetchSettings
from focuscrawl.workers.handover import LeasedTransport
from tests.sites import respond, serve

SETTINGS = FetchSettings(delay=0, allow_private=("127.0.0.1",), respect_robots=False)


class LostOnSecondLook:
    """Leases that are usable at the first look and lost from the second on (the worker
    stalled between the transport being asked and the connection being in hand)."""

    def __init__(self) -> None:
        self.looks = 0
        self.lost = False

    def usable(self) -> bool:
        self.looks += 1
        if self.looks > 1:
            self.lost = True
        return not self.lost


async def test_a_request_is_not_written_once_the_leases_were_lost_meanwhile() -> None:
    leases = LostOnSecondLook()
    async with (
        serve({"/a.html": respond("<p>a</p>")}) as site,
        LeasedTransport(AiohttpTransport(SETTINGS), leases) as transport,
    ):
        with pytest.raises(TransportError) as caught:
            async with transport.request(site.url("/a.html"), {}):
                pass
    assert caught.value.code == "lease-lost"
    assert site.hits == []  # nothing reached the server
    assert leases.looks == 2


async def test_leases_held_throughout_send_and_leave_no_gate_behind() -> None:
    class Held:
        lost = False

        def usable(self) -> bool:
            return True

    async with (
        serve({"/a.html": respond("<p>a</p>")}) as site,
        LeasedTransport(AiohttpTransport(SETTINGS), Held()) as transport,
    ):
        for _ in range(2):  # the second on a reused connection
            async with transport.request(site.url("/a.html"), {}) as answer:
                assert answer.status == 200
                assert await answer.body.read(1 << 16) == b"<p>a</p>"
        assert SEND_GATE.get() is None
    assert [hit.path for hit in site.hits] == ["/a.html", "/a.html"]
