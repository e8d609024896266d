"""Per-call cost of ``focuscrawl.urls.normalize_url`` on the links of real pages.

Every ``href`` of every HTML page of the WebKB archive (raw, as written, with the
page's URL as base) is normalised ``--rounds`` times; the best round's time per
call is printed, for all links and for the absolute and relative ones apart.
Without caches: ``normalize_url`` itself (the parser's own per-page and
cross-page caches are left out, so this is the cost of a link never seen).
``--against old/urls.py`` times that file's ``normalize_url`` too, the two taking
turns round by round in this one process (the machine drifts less within a
round), and counts the links they normalise differently.

    python benchmarks/bench_normalize.py [--archive ../shared/testweb/webkb.warc.gz] [--rounds 5]
    git show HEAD~5:focuscrawl/urls.py > /tmp/old_urls.py
    python benchmarks/bench_normalize.py --against /tmp/old_urls.py --rounds 9
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
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


def load(path: Path) -> Callable[[str, str], object]:
    """``normalize_url`` of another copy of focuscrawl/urls.py (its imports from ours)."""
    spec = importlib.util.spec_from_file_location("other_urls", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules["other_urls"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    function: Callable[[str, str], object] = module.normalize_url
    return function


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=200_000)
    parser.add_argument("--against", type=Path, help="another urls.py to time in turns with ours")
    args = parser.parse_args()
    pairs = links(args.archive, args.limit)
    absolute: list[tuple[str, str]] = []
    relative: list[tuple[str, str]] = []
    for pair in pairs:
        is_absolute = pair[0].strip().lower().startswith(("http://", "https://"))
        (absolute if is_absolute else relative).append(pair)
    kept = sum(normalize_url(h, b) is not None for h, b in pairs)
    print(f"{len(pairs)} links ({len(absolute)} absolute, {len(relative)} relative), {kept} kept")
    functions: dict[str, Callable[[str, str], object]] = {"ours": normalize_url}
    if args.against is not None:
        functions = {"against": load(args.against), "ours": normalize_url}
        other = functions["against"]
        differ = sum(other(h, b) != normalize_url(h, b) for h, b in pairs)
        print(f"normalised differently by the two: {differ}")
    for name, group in (("all", pairs), ("absolute", absolute), ("relative", relative)):
        costs: dict[str, list[float]] = {key: [] for key in functions}
        for _ in range(args.rounds):
            for key, function in functions.items():
                costs[key].append(best_per_call(group, 1, function))
        line = "  ".join(f"{key} {statistics.median(c) * 1e6:5.2f}" for key, c in costs.items())
        print(f"{name:9s} µs per call (median of {args.rounds} rounds): {line}")


if __name__ == "__main__":
    main()
