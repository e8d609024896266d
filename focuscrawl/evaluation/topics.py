"""Topic sets from a label file, built the way P1 [Topic selection] built them from ODP.

A *category* is a value of a list label such as Wikispeedia's ``categories``
(``subject.Science.Biology.Mammals``); a page belongs to it and to each of its
ancestors (``subject.Science.Biology``, ``subject.Science``). A topic is a category
with enough pages (``min_pages``, at most ``max_pages`` so that it is specific),
at depth ``min_level`` or deeper, and no ancestor of another candidate (the more
specific one is kept, as P1 preferred topics far from the root). ``n_topics`` of the
candidates are drawn at random (seeded).

Each topic's pages are shuffled (seeded) and split into disjoint sets:

* ``seeds``: the first ``n_seeds`` (P1: 10) — where the crawl starts;
* ``train_pos``: the next ``max_pos`` (P1: 75) — the classifier's positive examples;
* ``targets``: all the rest — P1's target set, never seen by the crawler's model;
* ``train_neg``: ``max_neg`` (P1: 150) pages drawn from outside the category.

So the crawler's classifier is trained on pages outside the target set, and the
crawl is judged by the label file, not by that classifier. Everything is cached
under the experiment's output directory (``topics/<name>/``) and rebuilt only when
its parameters change.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import save_model
from focuscrawl.relevance.classifier import ClassifierModel
from focuscrawl.relevance.training import load_texts
from focuscrawl.replay.archive import load_labels


@dataclass(frozen=True)
class TopicSetSpec:
    """How to draw topics from a label file (the ``[topics]`` table of an experiment)."""

    labels: str
    archive: str
    key: str = "categories"
    n_topics: int = 10
    min_pages: int = 125
    max_pages: int = 400
    min_level: int = 1  # depth below the root label ("subject" = 0)
    n_seeds: int = 10
    max_pos: int = 75
    max_neg: int = 150
    seed: int = 0
    include: tuple[str, ...] = ()  # these categories, in this order, instead of a random draw

    def __post_init__(self) -> None:
        if self.n_seeds < 1 or self.max_pos < 2 or self.max_neg < 2 or self.n_topics < 1:
            raise ConfigError("topics: n_seeds >= 1, max_pos >= 2, max_neg >= 2, n_topics >= 1")
        if self.min_pages < self.n_seeds + self.max_pos + 1:
            raise ConfigError(
                f"topics: min_pages must exceed n_seeds + max_pos ({self.n_seeds + self.max_pos}) "
                "so that every topic keeps a target set"
            )


@dataclass
class Topic:
    """One topic: its category, seed / target / training URLs, and the selector that
    judges relevance independently (``key~=category`` on the label file)."""

    name: str
    category: str
    relevant: list[str]
    seeds: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    train_pos: list[str] = field(default_factory=list)
    train_neg: list[str] = field(default_factory=list)
    # per strategy name, parameters this topic sets (P4: {"language": {"target": ["ja"]}})
    strategy_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Topic:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def ancestors(category: str) -> list[str]:
    """The category and its ancestors below the root label, most general first.

    >>> ancestors("subject.Science.Biology.Mammals")
    ['subject.Science', 'subject.Science.Biology', 'subject.Science.Biology.Mammals']
    >>> ancestors("plain")
    ['plain']
    """
    parts = category.split(".")
    if len(parts) == 1:
        return [category]
    return [".".join(parts[:k]) for k in range(2, len(parts) + 1)]


def category_members(labels: Mapping[str, Mapping[str, Any]], key: str) -> dict[str, list[str]]:
    """``{category: [url, ...]}`` counting every page under each ancestor of its categories.

    >>> labels = {"u1": {"c": ["s.A.B"]}, "u2": {"c": ["s.A"]}, "u3": {"c": "s.C"}}
    >>> category_members(labels, "c")
    {'s.A': ['u1', 'u2'], 's.A.B': ['u1'], 's.C': ['u3']}
    """
    members: dict[str, list[str]] = {}
    for url, label in labels.items():
        raw = label.get(key)
        values = raw if isinstance(raw, list | tuple) else ([] if raw is None else [raw])
        cats = {a for v in values for a in ancestors(str(v))}
        for cat in sorted(cats):
            members.setdefault(cat, []).append(url)
    return dict(sorted(members.items()))


def candidate_categories(
    counts: Mapping[str, int], *, min_pages: int, max_pages: int, min_level: int
) -> list[str]:
    """Categories with min_pages..max_pages pages at depth >= min_level that are no
    ancestor of another such category, sorted.

    >>> counts = {"s.A": 300, "s.A.B": 150, "s.C": 200, "s.D": 20, "s.E.F": 900}
    >>> candidate_categories(counts, min_pages=100, max_pages=400, min_level=1)
    ['s.A.B', 's.C']
    """
    ok = [
        c for c, n in counts.items()
        if min_pages <= n <= max_pages and c.count(".") >= min_level
    ]  # fmt: skip
    return sorted(c for c in ok if not any(o != c and o.startswith(c + ".") for o in ok))


def topic_name(category: str) -> str:
    """A short file-system name: the last one or two path parts.

    >>> topic_name("subject.Science.Biology.Birds"), topic_name("subject.Countries")
    ('Biology.Birds', 'Countries')
    """
    parts = category.split(".")[1:] or [category]
    return ".".join(parts[-2:])


def split_topic(
    category: str, members: Sequence[str], others: Sequence[str], spec: TopicSetSpec, rng: random.Random
) -> Topic:
    """Seeds, training positives, targets and training negatives of one category (see above)."""
    pages = sorted(members)  # the draw depends on the seed only, not on the label file order
    rng.shuffle(pages)
    s, p = spec.n_seeds, spec.max_pos
    negatives = sorted(others)
    neg = sorted(rng.sample(negatives, min(spec.max_neg, len(negatives))))
    return Topic(
        name=topic_name(category), category=category, relevant=[f"{spec.key}^={category}"],
        seeds=pages[:s], train_pos=sorted(pages[s : s + p]), targets=sorted(pages[s + p :]),
        train_neg=neg,
    )  # fmt: skip


def build_topics(spec: TopicSetSpec, labels: Mapping[str, Mapping[str, Any]]) -> list[Topic]:
    """The topic set of ``spec`` (deterministic for a given label file and seed)."""
    members = category_members(labels, spec.key)
    if spec.include:
        missing = [c for c in spec.include if c not in members]
        if missing:
            raise ConfigError(f"topics: no page has {spec.key} {', '.join(missing)}")
        chosen = list(spec.include)
    else:
        counts = Counter({c: len(u) for c, u in members.items()})
        candidates = candidate_categories(
            counts, min_pages=spec.min_pages, max_pages=spec.max_pages, min_level=spec.min_level
        )
        if len(candidates) < spec.n_topics:
            raise ConfigError(
                f"topics: only {len(candidates)} categories have {spec.min_pages}-{spec.max_pages} "
                f"pages; lower n_topics or min_pages"
            )
        chosen = sorted(random.Random(spec.seed).sample(candidates, spec.n_topics))
    topics = []
    for i, cat in enumerate(chosen):
        inside = set(members[cat])
        others = [u for u in labels if u not in inside]
        rng = random.Random(spec.seed * 1_000_003 + i)
        topics.append(split_topic(cat, members[cat], others, spec, rng))
    return topics


def cached_topics(spec: TopicSetSpec, out_dir: Path) -> list[Topic]:
    """:func:`build_topics`, cached in ``out_dir/topics.json`` with the spec that made it;
    the URL lists are also written per topic (``out_dir/<name>/seeds.txt`` ...)."""
    cache = out_dir / "topics.json"
    key = asdict(spec)
    key["include"] = list(spec.include)
    if cache.is_file():
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("spec") == key:
            return [Topic.from_dict(t) for t in data["topics"]]
    try:
        labels = load_labels(spec.labels)
    except OSError as exc:
        raise ConfigError(f"{spec.labels}: cannot read labels ({exc.strerror})") from None
    topics = build_topics(spec, labels)
    out_dir.mkdir(parents=True, exist_ok=True)
    for t in topics:
        tdir = out_dir / t.name
        tdir.mkdir(exist_ok=True)
        for part in ("seeds", "targets", "train_pos", "train_neg"):
            (tdir / f"{part}.txt").write_text("".join(u + "\n" for u in getattr(t, part)), encoding="utf-8")
    payload = {"spec": key, "topics": [t.to_dict() for t in topics]}
    cache.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    return topics


def train_topic_models(
    topics: Sequence[Topic], archive: Path | str, out_dir: Path, *, algorithm: str = "svm-linear",
    seed: int = 0,
) -> dict[str, Path]:  # fmt: skip
    """Each topic's classifier (P1: TF-IDF, chi² 2000 terms, 75 pos / 150 neg) trained on its
    training URLs and saved in ``out_dir/<topic>/model-<algorithm>`` (cached); the
    training pages of all topics are read from the archive in one pass."""
    dirs = {t.name: out_dir / t.name / f"model-{algorithm}" for t in topics}
    todo = [t for t in topics if not (dirs[t.name] / "model.json").is_file()]
    if todo:
        texts = load_texts(archive, {u for t in todo for u in (*t.train_pos, *t.train_neg)})
        for t in todo:
            pos = [texts[u] for u in t.train_pos if u in texts]
            neg = [texts[u] for u in t.train_neg if u in texts]
            model = ClassifierModel(algorithm=algorithm, seed=seed).train(pos, neg)
            save_model(model, dirs[t.name])
    return dirs
