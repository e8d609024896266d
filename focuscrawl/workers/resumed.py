"""A shared crawl resumed by its coordinator (``crawl --resume`` of a ``--workers``
crawl): its state in Redis checked to be there still, and a new page budget
(``--max-pages``) applied to the budget left in Redis rather than silently ignored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.redis.decode import decoded_json
from focuscrawl.frontier.redis.keys import Keys

# the field of the crawl's meta hash that holds its published run (protocol 2: "crawl";
# protocol 1 wrote "run"), read and written here and in workers/shared.py
RUN_FIELD = "crawl"

# the budget left moved by (new - old) pages, unless that is below 0: then the pages
# handed out already (the budget's old total less what is left) are returned, negative
_MOVE_BUDGET = """#!lua
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
local moved = left + tonumber(ARGV[2]) - tonumber(ARGV[1])
if moved < 0 then return -(tonumber(ARGV[1]) - left) - 1 end
redis.call('SET', KEYS[1], moved)
return moved
"""


def state_gone_error(url: str, prefix: str, out_dir: Path) -> FrontierError:
    """The one line for a shared crawl whose keys are no longer in Redis."""
    return FrontierError(
        f"frontier {url}: the shared crawl {prefix} is gone from Redis (restarted without its "
        f"data, or flushed): its queue and budget cannot be rebuilt from {out_dir}; restore "
        "Redis's data (appendonly / a dump) and --resume, or start afresh with another --out"
    )


def check_still_published(db: Any, url: str, prefix: str, out_dir: Path, meta: str) -> bool:
    """Whether the crawl is published in Redis; if not, and its workers ran (a resume
    after Redis lost its data), one line instead of publishing it afresh (which would
    crawl the seeds again into workers' files that hold pages already)."""
    if db.hexists(meta, RUN_FIELD):
        return True
    workers = Path(out_dir) / "workers"
    if workers.is_dir() and any(workers.iterdir()):
        raise state_gone_error(url, prefix, out_dir)
    return False


def change_budget(db: Any, prefix: str, run: dict[str, Any], asked: int | None) -> None:
    """``--max-pages asked`` on a resumed shared crawl: the budget left in Redis moved
    by the difference, and the crawl's settings (run.json's and the published run's)
    changed to it; one line where it cannot be (below the pages handed out already, or
    a limit turned on or off)."""
    old = int(run["settings"]["crawl"].get("max_pages", 0))
    if asked is None or int(asked) == old:
        return
    new = int(asked)
    if (old == 0) != (new == 0):
        raise ConfigError(f"--max-pages {new}: this shared crawl's budget is {old or 'no limit'}; "
                          "a limit cannot be turned on or off on --resume")  # fmt: skip
    meta = Keys(prefix).meta
    if not db.hexists(meta + "meta", RUN_FIELD):  # not published yet: it will be with this budget
        run["settings"]["crawl"]["max_pages"] = new
        return
    moved = int(db.eval(_MOVE_BUDGET, 1, meta + "budget", old, new))
    if moved < 0:
        raise ConfigError(f"--max-pages {new}: {-moved - 1} pages of this shared crawl's budget "
                          "are handed out already; at least that many")  # fmt: skip
    run["settings"]["crawl"]["max_pages"] = new
    raw = db.hget(meta + "meta", RUN_FIELD)
    if raw is not None:
        published = decoded_json(f"{meta}meta (field {RUN_FIELD})", raw)
        published["settings"]["crawl"]["max_pages"] = new
        db.hset(meta + "meta", RUN_FIELD, json.dumps(published, default=str))
