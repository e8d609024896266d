"""``focuscrawl export RUN_DIR --format parquet|jsonl|cdxj|wacz``: a run as a corpus
(one row per page with its main text) or as an archive a wayback machine replays."""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from focuscrawl.commands import Command
from focuscrawl.exceptions import ConfigError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("--format", dest="fmt", default="parquet",
                   help="parquet or jsonl (one row per page, with its main text), cdxj (the "
                        "WARC's index, pywb's format) or wacz (ReplayWeb.page's package)")  # fmt: skip
    p.add_argument("-o", "--out", type=Path, default=None,
                   help="the file to write (default: corpus.<format> in the run directory)")  # fmt: skip
    p.add_argument("-j", "--jobs", type=int, default=None,
                   help="processes extracting the text (default: the machine's cores)")  # fmt: skip


def peak_rss_mb() -> float:
    """The peak resident memory of this process and of its largest child, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, child) / 1024  # Linux: KB


def run(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise ConfigError(f"export: --jobs {args.jobs}: must be 1 or more")
    if args.out is not None and args.out.is_dir():
        raise ConfigError(f"export: --out {args.out}: is a directory (give a file name)")
    if args.out is not None and not args.out.parent.is_dir():
        raise ConfigError(f"export: --out {args.out}: no such directory {args.out.parent}")
    # imported here, as the commands layer may: every command's module is imported to
    # build the parser, and the export's (a process pool, pyarrow's readers) would add
    # to every crawl's start-up
    from focuscrawl.output.export import export

    start = time.perf_counter()
    out, n = export(args.run_dir, args.fmt, args.out, jobs=args.jobs)
    unit = "lines" if args.fmt == "cdxj" else "pages"
    print(f"{out}: {n:,} {unit} in {time.perf_counter() - start:.1f} s, "
          f"peak RSS {peak_rss_mb():.0f} MB", file=sys.stdout)  # fmt: skip
    return 0


COMMAND = Command(
    "export", "a run as a corpus (Parquet, JSONL) or an archive to replay (CDXJ, WACZ)",
    add_arguments, run,
)  # fmt: skip
