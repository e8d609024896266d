"""Labelled example pages: label filters and pages read from WARC archives.

Every model that learns from examples (classifiers, GenerateTerms, comment
keywords) and ``focuscrawl model eval`` choose pages the same way.

Filters (``key<op>value``; several must all hold):

* ``key=value``   the label equals ``value`` (a list label: contains it);
  ``value`` may list alternatives: ``type=course|project``;
* ``key!=value``  the opposite;
* ``key^=value``  the label starts with ``value`` (a list label: one element does);
* ``key~=value``  the label contains ``value`` as a substring (a list label: one
  element does): ``categories~=Mammals``.

Labels are compared as text, with JSON spelling for booleans (``relevant=true``).

>>> f = parse_filter("type!=course")
>>> f.matches({"type": "faculty"}), f.matches({"type": "course"})
(True, False)
>>> parse_filter("categories^=subject.Science").matches({"categories": ["subject.Science.Physics"]})
True
>>> parse_filter("type=course|project").matches({"type": "project"})
True
>>> f = parse_filter("categories~=Mammals")
>>> f.matches({"categories": ["subject.Science.Biology.Mammals"]}), f.matches({"categories": []})
(True, False)
>>> parse_filter("has_comments=true").matches({"has_comments": True})
True
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ModelError
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.replay.archive import iter_responses
from focuscrawl.types import Page

_OPERATORS = ("!=", "^=", "~=", "=")  # two-character ones first: "a!=b" is not "a!" = "b"


def _label_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class LabelFilter:
    key: str
    op: str
    value: str

    def matches(self, label: Mapping[str, Any]) -> bool:
        raw = label.get(self.key)
        if raw is None:
            values: list[str] = []
        elif isinstance(raw, list | tuple):
            values = [_label_text(v) for v in raw]
        else:
            values = [_label_text(raw)]
        if self.op == "^=":
            return any(v.startswith(self.value) for v in values)
        if self.op == "~=":
            return any(self.value in v for v in values)
        hit = any(v in self.value.split("|") for v in values)
        return hit if self.op == "=" else not hit


def parse_filter(expr: str) -> LabelFilter:
    """``"type=course"`` -> LabelFilter; a malformed expression is a ModelError.

    The operator is the first one in the text (``url~=a=b`` looks for ``a=b``).
    """
    found = [(expr.find(op), -len(op), op) for op in _OPERATORS if op in expr]
    if found:
        _, _, op = min(found)
        key, _, value = expr.partition(op)
        if key.strip() and value.strip():
            return LabelFilter(key.strip(), op, value.strip())
    raise ModelError(
        f"bad label filter {expr!r} (use key=value, key!=value, key^=prefix or key~=substring)"
    )


def all_match(filters: Sequence[LabelFilter], label: Mapping[str, Any]) -> bool:
    return all(f.matches(label) for f in filters)


def select_urls(labels: Mapping[str, Mapping[str, Any]], where: Sequence[str]) -> list[str]:
    """URLs whose labels pass every filter of ``where``, in label-file order."""
    filters = [parse_filter(e) for e in where]
    return [url for url, label in labels.items() if all_match(filters, label)]


def stratified_sample(strata: Mapping[Any, Iterable[str]], n: int, seed: int = 0) -> list[str]:
    """A seeded random sample of ``n`` URLs of the ``strata`` (class -> URLs), each class
    given its share of ``n`` (the largest remainders rounded up, the larger class first
    at a tie), so that the sample keeps the classes' ratio; sorted. All of them when
    ``n`` <= 0 or is at least their number. The draw depends only on the seed and the
    URLs, not on their order.

    >>> sample = stratified_sample({True: "abc", False: "defghijkl"}, 4)  # 4 x 3/12, 4 x 9/12
    >>> sum(u in "abc" for u in sample), len(sample), sample == stratified_sample({True: "cba", False: "lkjihgfed"}, 4)
    (1, 4, True)
    >>> sample = stratified_sample({1: "abc", 2: "defg", 3: "hij"}, 5, seed=7)  # 1.5, 2.0, 1.5
    >>> [sum(u in group for u in sample) for group in ("abc", "defg", "hij")]
    [2, 2, 1]
    """
    groups = {key: sorted(set(urls)) for key, urls in strata.items()}
    total = sum(len(urls) for urls in groups.values())
    if n <= 0 or n >= total:
        return sorted(u for urls in groups.values() for u in urls)
    shares = {key: n * len(urls) / total for key, urls in groups.items()}
    counts = {key: int(share) for key, share in shares.items()}
    by_remainder = sorted(groups, key=lambda k: (counts[k] - shares[k], -len(groups[k])))
    for key in by_remainder[: n - sum(counts.values())]:
        counts[key] += 1
    rng = random.Random(seed)
    return sorted(u for key in sorted(groups, key=str) for u in rng.sample(groups[key], counts[key]))


def _values(labels: Iterable[Mapping[str, Any]], key: str, shown: int = 6) -> str:
    """The most frequent values of ``key`` (list labels counted element by element)."""
    counts: Counter[str] = Counter()
    for label in labels:
        raw = label.get(key)
        for v in raw if isinstance(raw, list | tuple) else [] if raw is None else [raw]:
            counts[_label_text(v)] += 1
    top = [v for v, _ in counts.most_common(shown)]
    return ", ".join(top) + (", ..." if len(counts) > shown else "")


def check_selector(
    labels: Mapping[str, Mapping[str, Any]], filters: Sequence[LabelFilter], source: str = "the labels"
) -> None:
    """A ModelError when a filter's key is on no label line, or the filters together accept
    no labelled page: a typo (``typo=course``, ``type=Course``, ``type==course``) would
    otherwise judge every page irrelevant and report zeros.

    >>> labels = {"u1": {"url": "u1", "type": "course"}, "u2": {"url": "u2", "type": "faculty"}}
    >>> check_selector(labels, [parse_filter("type=course")])
    >>> check_selector(labels, [parse_filter("typo=course")])
    Traceback (most recent call last):
    ...
    focuscrawl.exceptions.ModelError: selector 'typo=course': no line of the labels has the key 'typo' (keys: type, url)
    >>> check_selector(labels, [parse_filter("type=Course")])
    Traceback (most recent call last):
    ...
    focuscrawl.exceptions.ModelError: selector 'type=Course' matches no page of the labels (type: course, faculty)
    >>> check_selector({}, [parse_filter("type=course")])
    Traceback (most recent call last):
    ...
    focuscrawl.exceptions.ModelError: the labels: no label line, so every page would be unlabelled
    """
    if not filters:
        return
    if not labels:
        raise ModelError(f"{source}: no label line, so every page would be unlabelled")
    shown = " ".join(f"{f.key}{f.op}{f.value}" for f in filters)
    keys: set[str] = set()
    for label in labels.values():
        keys.update(label)
    for f in filters:
        if f.key not in keys:
            raise ModelError(
                f"selector {shown!r}: no line of {source} has the key {f.key!r} (keys: {', '.join(sorted(keys))})"
            )
    if not any(all_match(filters, label) for label in labels.values()):
        values = "; ".join(f"{k}: {_values(labels.values(), k)}" for k in dict.fromkeys(f.key for f in filters))
        raise ModelError(f"selector {shown!r} matches no page of {source} ({values})")


def iter_archive_pages(
    archives: Path | str | Iterable[Path | str],
    urls: set[str] | None = None,
    *,
    limit: int = 0,
    only_ok: bool = False,
) -> Iterator[Page]:
    """Pages parsed from the HTML response records of archives, as the crawler parses them.

    ``urls`` restricts to those URLs; ``only_ok`` to status 200; ``limit`` (0 = all)
    stops after that many pages.
    """
    n = 0
    for rec in iter_responses(archives):
        if urls is not None and rec.url not in urls:
            continue
        ctype = rec.content_type.lower()
        if (ctype and "html" not in ctype) or (only_ok and rec.status != 200):
            continue
        yield page_from_bytes(rec.url, rec.body, rec.content_type or "text/html")
        n += 1
        if limit and n >= limit:
            return
