"""The replay web answers conditional requests (issue 36, item 5): ETag and
Last-Modified on every archived page, 304 to a matching If-None-Match or a
not-older If-Modified-Since, over HTTP and in a simulation alike."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from focuscrawl.fetch.archive_transport import ArchiveTransport
from focuscrawl.replay.answer import ArchiveWeb
from focuscrawl.replay.archive import ArchiveIndex, iter_responses
from focuscrawl.replay.sample import build_sample_archive
from focuscrawl.replay.server import ReplayServer


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_archive(tmp_path_factory.mktemp("sample"))


@pytest.fixture
async def server(sample: Path, tmp_path: Path) -> AsyncIterator[ReplayServer]:
    async with ReplayServer([sample], log_path=tmp_path / "log.tsv") as srv:
        yield srv


async def _get(server: ReplayServer, url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cafile=str(server.ca_cert_path))
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, proxy=server.proxy_url, ssl=context, headers=headers) as response,
    ):
        return response.status, {k.lower(): v for k, v in response.headers.items()}, await response.read()


async def test_validators_and_304_over_http(server: ReplayServer, sample: Path) -> None:
    record = next(r for r in iter_responses(sample) if r.status == 200)
    status, headers, body = await _get(server, record.url)
    assert (status, body) == (200, record.body)
    etag, last_modified = headers["etag"], headers["last-modified"]
    assert etag.startswith('"')
    assert last_modified.endswith(" GMT")
    for asked in ({"If-None-Match": etag}, {"If-None-Match": f'"other", W/{etag}'}, {"If-Modified-Since": last_modified}):
        status, headers304, body = await _get(server, record.url, **asked)
        assert (status, body) == (304, b"")
        assert headers304["etag"] == etag
        assert "content-type" not in headers304
    for asked in ({"If-None-Match": '"other"'}, {"If-Modified-Since": "Mon, 01 Jan 1990 00:00:00 GMT"},
                  {"If-None-Match": '"other"', "If-Modified-Since": last_modified}):  # fmt: skip
        status, _, body = await _get(server, record.url, **asked)
        assert (status, body) == (200, record.body)


async def test_304_in_a_simulation(sample: Path) -> None:
    record = next(r for r in iter_responses(sample) if r.status == 200)
    transport = ArchiveTransport(ArchiveWeb(ArchiveIndex.build([sample])))
    async with transport.request(record.url, {"User-Agent": "x"}) as answer:
        etag = answer.header("ETag")
        assert answer.status == 200
    async with transport.request(record.url, {"If-None-Match": etag}) as answer:
        assert answer.status == 304
