"""Peak RSS and time of reading a sitemap at the sitemaps.org limits (50,000 URLs,
50 MB uncompressed, gzip) in 64 KB pieces as they would arrive, against parsing
it whole with lxml; each in a child process of its own.

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
if mode == "streamed":
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
        for mode in ("streamed", "whole"):
            subprocess.run([sys.executable, "-c", CHILD, str(path), mode], check=True)


if __name__ == "__main__":
    main()
