"""The oracle: a ceiling for experiments, which reads the answers (never for real crawls).

It knows what no crawler knows: the label file (which pages are relevant) and, when it
is given the web's link graph, where every link leads. Its rule, a greedy look-ahead:

* a URL's score is ``1 / (1 + d)``, where ``d`` is the length of the shortest link
  path from the URL to a relevant page that has not been fetched yet (``d = 0``: the
  URL is such a page; no path: score 0). Relevant pages therefore come first, then
  the pages one link away from one, then two links away, ...; ties go in discovery
  order (the frontier's tie-break), as breadth-first's do.
* ``d`` is counted on the link graph of the archives (``graph``: a ``.json`` graph
  written by :func:`write_graph`, or the ``.warc.gz`` archives themselves, parsed at
  start-up as the crawler parses them; 3xx answers are edges to their Location).
  Every 50 results the distances are computed again without the relevant pages
  fetched by then, and every queued URL whose distance changed is rescored: a page
  whose only relevant neighbours have been found falls back.
* A simulation (``simulate``, or the API with ``archives``) gives the oracle the
  simulated archives as its graph unless ``graph`` names one
  (:func:`with_archive_graph`). Without a graph (a live crawl) the oracle says so in
  one log line and looks one link ahead only: relevant URLs score 1, the other links
  of a page score 1/2 if the page itself was relevant, else 1/3.

It is a reference, not a proven optimum (choosing the best order for a budget is a
prize-collecting path problem): a strategy may beat it at some checkpoint, and the
share of the way from breadth-first to the oracle is then above 1.

Parameters (as ``focuscrawl eval`` takes them): ``labels`` (label file), ``relevant``
(selector, several joined by ``,``: all must hold) and ``graph`` (see above).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.examples import all_match, parse_filter
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate, URLState
from focuscrawl.urls import normalize_url

Graph = Mapping[str, Sequence[str]]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OracleParams:
    labels: str = ""  # the label file (JSONL, one {"url": ..., ...} a line)
    relevant: tuple[str, ...] = ()  # selector, e.g. ("type=course", "university=texas")
    graph: str = ""  # a graph .json or the archives (.warc.gz, several joined by ",")

    def __post_init__(self) -> None:
        if not self.labels:
            raise ValueError("labels is required (the label file)")
        if not self.relevant:
            raise ValueError("relevant is required (a selector such as type=course)")


def relevant_urls(labels_path: Path | str, selector: Sequence[str]) -> set[str]:
    """The normalised URLs of the label file that the selector accepts."""
    try:
        filters = [parse_filter(s) for s in selector]
        labels = load_labels(labels_path)
    except ModelError as exc:
        raise ConfigError(f"strategy 'oracle': {exc}") from None
    except OSError as exc:
        raise ConfigError(f"strategy 'oracle': cannot read {labels_path} ({exc.strerror})") from None
    return {normalize_url(u) or u for u, lab in labels.items() if all_match(filters, lab)}


def with_archive_graph(
    strategy: str, params: Mapping[str, Any], archives: Sequence[Path | str]
) -> dict[str, Any]:
    """The oracle's ``params`` with the simulated ``archives`` as its graph where it names
    none (a simulation's oracle would otherwise look one link ahead only: 0.796 instead
    of 1.000 target recall at 500 URLs on hidden Wikispeedia topics); other strategies'
    params as they are."""
    out = dict(params)
    if strategy == "oracle" and archives and not out.get("graph"):
        out["graph"] = ",".join(str(a) for a in archives)
    return out


def build_graph(archives: Iterable[Path | str]) -> dict[str, list[str]]:
    """``{url: [out-link, ...]}`` of the archives' HTML pages and redirects, as the crawler
    parses them (normalised URLs; a 3xx answer links to its Location)."""
    graph: dict[str, list[str]] = {}
    for rec in iter_responses(list(archives)):
        url = normalize_url(rec.url) or rec.url
        if 300 <= rec.status < 400:
            target = normalize_url(rec.header("Location"), url) if rec.header("Location") else None
            graph[url] = [target] if target else []
            continue
        ctype = rec.content_type.lower()
        if rec.status != 200 or (ctype and "html" not in ctype):
            continue
        html = decode_html(rec.body, detect_charset(rec.content_type, rec.body))
        page = parse_html(url, html, links_only=True)
        graph[url] = [link.url for link in page.links if link.url != url]
    return graph


def write_graph(archives: Iterable[Path | str], path: Path) -> Path:
    """The archives' link graph as JSON (built once per experiment, read by every oracle crawl)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(build_graph(archives), separators=(",", ":")), encoding="utf-8")
    tmp.replace(path)
    return path


def load_graph(spec: str) -> dict[str, list[str]]:
    paths = [Path(p.strip()) for p in spec.split(",") if p.strip()]
    if len(paths) == 1 and paths[0].suffix == ".json":
        try:
            data: Any = json.loads(paths[0].read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"strategy 'oracle': cannot read graph {paths[0]} ({exc})") from None
        return {str(k): [str(v) for v in vs] for k, vs in data.items()}
    for p in paths:
        if not p.is_file():
            raise ConfigError(f"strategy 'oracle': graph archive {p} not found")
    return build_graph(paths)


def distances_to(targets: Iterable[str], graph: Graph) -> dict[str, int]:
    """Shortest link-path length from every URL that reaches one of ``targets`` to the
    nearest of them (a breadth-first search backwards from all targets at once).

    >>> sorted(distances_to({"c"}, {"a": ["b"], "b": ["c"], "x": ["a"], "y": []}).items())
    [('a', 2), ('b', 1), ('c', 0), ('x', 3)]
    """
    reverse: dict[str, list[str]] = {}
    for src, outs in graph.items():
        for dst in outs:
            reverse.setdefault(dst, []).append(src)
    dist = dict.fromkeys(targets, 0)
    todo = deque(dist)
    while todo:
        url = todo.popleft()
        step = dist[url] + 1
        for src in reverse.get(url, ()):
            if src not in dist:
                dist[src] = step
                todo.append(src)
    return dist


def score_of(d: int | None) -> float:
    """The oracle's priority of a URL ``d`` links from the nearest unfound relevant page.

    >>> score_of(0), score_of(1), score_of(3), score_of(None)
    (1.0, 0.5, 0.25, 0.0)
    """
    return 0.0 if d is None else 1.0 / (1 + d)


@dataclass(frozen=True)
class OracleState(StrategyState):
    """The relevant URLs fetched (or that cannot be had), sorted: the distances are
    computed again from them on resume."""

    found: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls([str(u) for u in raw.get("found", [])])


@register_strategy("oracle")
class OracleStrategy(Strategy[OracleParams]):
    name: ClassVar[str] = "oracle"
    merge: ClassVar[Merge] = Merge.SET  # a URL's score is its distance now, not a best-of
    needs_text: ClassVar[bool] = False
    tick_every: ClassVar[int] = 50  # distances recomputed every 50 results

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.relevant = relevant_urls(self.p.labels, self.p.relevant)
        self.graph: dict[str, list[str]] | None = load_graph(self.p.graph) if self.p.graph else None
        if self.graph is None:
            log.warning("oracle: no link graph (graph = a .json graph or the archives): "
                        "it looks one link ahead only")  # fmt: skip
        self.found: set[str] = set()  # relevant URLs fetched (their own or their final URL)
        self.dist: dict[str, int] = {}
        if self.graph is not None:
            self.dist = distances_to(self.relevant, self.graph)

    def _score(self, url: str, parent_relevant: bool) -> float:
        if self.graph is None:  # one link of look-ahead
            return 1.0 if url in self.relevant else (0.5 if parent_relevant else 1 / 3)
        return score_of(self.dist.get(url))

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        return [ScoreUpdate(u, self._score(u, False), Merge.SET, reason="oracle seed") for u in seeds]

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        here = {page.url, queued.url} & self.relevant
        self.found |= here
        return Decision(links=[
            LinkScore(link, self._score(link.url, bool(here)), reason="oracle: 1/(1+distance to relevant)")
            for link in page.links
        ])  # fmt: skip

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        if queued.url in self.relevant:
            self.found.add(queued.url)  # cannot be had: no use leading to it
        return Decision()

    def on_tick(self, results: int) -> Decision:
        """The distances again, to the relevant pages not fetched yet; queued URLs rescored."""
        if self.graph is None:
            return Decision()
        self.dist = distances_to(self.relevant - self.found, self.graph)
        updates = []
        for row in self.view.urls(URLState.QUEUED):
            score = score_of(self.dist.get(row.url))
            if score != row.score:
                updates.append(ScoreUpdate(row.url, score, Merge.SET, reason="oracle: distance now"))
        return Decision(updates=updates)

    def state_dict(self) -> dict[str, Any]:
        return OracleState(sorted(self.found)).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.found = set(OracleState.from_json(state).found)
        if self.graph is not None:
            self.dist = distances_to(self.relevant - self.found, self.graph)
