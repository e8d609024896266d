"""Per-call cost of ``focuscrawl.urls.normalize_url`` on the links of real pages.

Every ``href`` of every HTML page of the WebKB archive (raw, as written, with the
page's URL as base) is normalised ``--rounds`` times; the best round's time per
call is printed, for all links and for the absolute and relative ones apart.
Without caches: ``normalize_url`` itself (the parser's own per-page and
cross-page caches are left out, so this is the cost of a link never seen).

    python benchmarks/bench_normalize.py [--archive ../shared/testweb/webkb.warc.gz] [--rounds 5]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

from focuscrawl.replay.archive import iter_responses
from focuscrawl.urls import normalize_url

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"
_HREF = re.compile(rb"""<a\s[^>]*?href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


def links(archive: Path, limit: int) -> list[tuple[str, str]]:
    """(href, base) of the archive's HTML pages, in file order, at most ``limit``."""
    out: list[tuple[str, str]] = []
    for response in iter_responses(archive):
        if "html" not in response.header("Content-Type", "text/html").lower():
            continue
        for match in _HREF.finditer(response.body):
            raw = next(g for g in match.groups() if g is not None)
            out.append((raw.decode("utf-8", "replace"), response.url))
            if len(out) >= limit:
                return out
    return out


def best_per_call(pairs: list[tuple[str, str]], rounds: int, call: Callable[[str, str], object]) -> float:
    """Best round's seconds per call."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for href, base in pairs:
            call(href, base)
        best = min(best, time.perf_counter() - start)
    return best / max(1, len(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=200_000)
    args = parser.parse_args()
    pairs = links(args.archive, args.limit)
    absolute = [p for p in pairs if p[0].strip().lower().startswith(("http://", "https://"))]
    relative = [p for p in pairs if p not in absolute]
    kept = sum(normalize_url(h, b) is not None for h, b in pairs)
    print(f"{len(pairs)} links ({len(absolute)} absolute, {len(relative)} relative), {kept} kept")
    for name, group in (("all", pairs), ("absolute", absolute), ("relative", relative)):
        cost = best_per_call(group, args.rounds, normalize_url)
        print(f"{name:9s} {cost * 1e6:6.2f} µs per call")


if __name__ == "__main__":
    main()
