"""Peak RSS and time of reading a sitemap at the sitemaps.org limits (50,000 URLs,
50 MB uncompressed, gzip) in 64 KB pieces as they would arrive, against parsing
it whole with lxml; and of the crawler's fetcher reading the same sitemap as plain
XML (50 MB, ten times the 5 MB body cap) from a transport that hands it over in 64 KB
pieces (``fetched``: the body kept is the capped 5 MB, the URLs all 50,000); each in
a child process of its own.

    python benchmarks/bench_sitemaps.py
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import gzip, resource, sys, time
from lxml import etree
from focuscrawl.parse.sitemaps import SitemapReader
path, mode = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
if mode == "fetched":
    import asyncio
    from contextlib import asynccontextmanager
    from focuscrawl.fetch.fetcher import HttpFetcher
    from focuscrawl.fetch.transport import Answer
    from focuscrawl.settings import FetchSettings
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # (after the fetcher's imports)

    class FileBody:
        def __init__(self, fh): self.fh = fh
        async def read(self, size): return self.fh.read(size)
        def abandon(self): pass

    class FileTransport:
        async def __aenter__(self): return self
        async def __aexit__(self, *exc): return None
        @asynccontextmanager
        async def request(self, url, headers, **_):
            if url.endswith("robots.txt"):
                yield Answer(404, "", FileBody(open("/dev/null", "rb")), [], "1.1", {})
                return
            with gzip.open(path, "rb") as fh:
                yield Answer(200, "OK", FileBody(fh), [("Content-Type", "application/xml")], "1.1", {})

    async def fetch():
        fetcher = HttpFetcher(FetchSettings(delay=0.0, allow_private=("0.0.0.0/0",)), FileTransport())
        async with fetcher:
            return await fetcher.fetch("http://a.org/sitemap.xml")
    result = asyncio.run(fetch())
    n = len(result.streamed.entries)
    print(f"fetched: body kept {len(result.body) / 1e6:.1f} MB (truncated {result.truncated}), "
          f"{result.streamed.reader.size / 1e6:.1f} MB read, the 50,000 URLs kept "
          f"({sum(len(e.loc) for e in result.streamed.entries) / 1e6:.0f} MB of text)", end="; ")
elif mode == "streamed":
    reader, n = SitemapReader(), 0
    with open(path, "rb") as fh:
        while piece := fh.read(65536):
            n += len(reader.feed(piece))
    n += len(reader.close())
else:
    root = etree.fromstring(gzip.decompress(open(path, "rb").read()), etree.XMLParser(huge_tree=True))
    n = len(root)
cpu = time.process_time() - start
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{mode}: {n} URLs, {cpu:.2f} s CPU, peak RSS {before // 1024} MB before, {after // 1024} MB after")
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sitemap.xml.gz"
        pad = "x" * 880
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write('<?xml version="1.0" encoding="UTF-8"?>\n')
            fh.write('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
            for i in range(50_000):
                fh.write(f"<url><loc>http://a.org/{pad}/{i}.html</loc><lastmod>2024-05-01</lastmod>"
                         "<changefreq>daily</changefreq><priority>0.5</priority></url>\n")  # fmt: skip
            fh.write("</urlset>\n")
        with gzip.open(path, "rb") as fh:
            size = sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))
        print(f"sitemap: {size / 1e6:.1f} MB uncompressed, {path.stat().st_size / 1e6:.2f} MB gzip")
        for mode in ("streamed", "fetched", "whole"):
            subprocess.run([sys.executable, "-c", CHILD, str(path), mode], check=True)


if __name__ == "__main__":
    main()
