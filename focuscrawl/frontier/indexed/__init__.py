"""The indexed store: a crawl DB kept as numpy columns in memory, committed to SQLite.

One module per concept:

- ``store``: ``IndexedFrontier``, the store composed of its roles;
- ``core``: the state the roles share;
- ``table``: the numpy columns and their rows;
- ``queue``: the URL queue role (take, put back, states);
- ``columns``: the URL columns role (scores, marks, the top of a column);
- ``adds`` and ``links``: URLs and out-links added, parent edges kept;
- ``graph``: the link graph role;
- ``order/``: "what's next" (the best-first buffer, its order, hosts, selection, tops);
- ``storage/``: the SQLite schema, the commits and the journal, the cold texts.
"""

from __future__ import annotations

from focuscrawl.frontier.indexed.store import IndexedFrontier

__all__ = ["IndexedFrontier"]
