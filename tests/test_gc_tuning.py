"""The collector settings of a crawl loop: set while a crawl runs, put back after."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from focuscrawl.api import crawl
from focuscrawl.gc_tuning import CRAWL_THRESHOLDS, crawl_gc
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import Decision, LinkScore, Page, QueuedURL


@pytest.fixture(autouse=True)
def _default_collector() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_set_inside_and_put_back_after() -> None:
    assert gc.get_freeze_count() == 0
    with crawl_gc():
        assert gc.get_threshold() == CRAWL_THRESHOLDS
        assert gc.get_freeze_count() > 0  # what existed before is kept out of collections
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_overlapping_crawls_share_it_and_the_last_one_puts_it_back() -> None:
    first, second = crawl_gc(), crawl_gc()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first crawl ends while the second runs
    assert gc.get_threshold() == CRAWL_THRESHOLDS
    second.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_a_process_own_freeze_and_higher_thresholds_are_kept() -> None:
    gc.set_threshold(50_000, 5, 100)
    gc.freeze()
    try:
        with crawl_gc():
            assert gc.get_threshold() == (50_000, 20, 100)
        assert gc.get_freeze_count() > 0  # not unfrozen by us
        assert gc.get_threshold() == (50_000, 5, 100)
    finally:
        gc.unfreeze()


def test_cyclic_garbage_is_still_collected_while_it_is_set() -> None:
    class Node:
        pass

    gone: list[int] = []
    with crawl_gc():
        for i in range(3):
            node = Node()
            node.self = node  # type: ignore[attr-defined]  # a cycle: no refcount frees it
            weakref.finalize(node, gone.append, i)
            del node
        # containers that stay alive count towards a young collection (freed ones do not)
        kept = [[] for _ in range(3 * CRAWL_THRESHOLDS[0])]
    del kept
    assert sorted(gone) == [0, 1, 2]


class _Watcher(Strategy):
    """Breadth-first; notes the collector's thresholds whenever a page comes in."""

    name: ClassVar[str] = "test-gc-watcher"
    seen: ClassVar[set[tuple[int, int, int]]] = set()

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        _Watcher.seen.add(gc.get_threshold())
        return Decision(links=[LinkScore(link, 0.0) for link in page.links])


register_strategy("test-gc-watcher")(_Watcher)


def test_a_crawl_runs_with_it_and_leaves_the_process_as_it_was(
    sample_archive: Path, tmp_path: Path
) -> None:
    stats = crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="test-gc-watcher", max_pages=8,
                  archives=[sample_archive])  # fmt: skip
    assert stats.pages == 8  # the budget: the watcher below saw the whole crawl
    assert _Watcher.seen == {CRAWL_THRESHOLDS}
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0
