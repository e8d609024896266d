"""focuscrawl: a focused web crawler with replayable test webs and evaluation."""

from __future__ import annotations

from focuscrawl.api import crawl, crawl_async, open_crawl
from focuscrawl.engine import Crawler
from focuscrawl.exceptions import ConfigError, FocuscrawlError, ModelError
from focuscrawl.relevance.base import RelevanceModel, build_model, load_model, save_model
from focuscrawl.settings import Settings, load_settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision, FetchResult, Link, LinkScore, Merge, Page, QueuedURL

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "CrawlStats",
    "Crawler",
    "Decision",
    "FetchResult",
    "FocuscrawlError",
    "Link",
    "LinkScore",
    "Merge",
    "ModelError",
    "Page",
    "QueuedURL",
    "RelevanceModel",
    "Settings",
    "Strategy",
    "__version__",
    "build_model",
    "crawl",
    "crawl_async",
    "load_model",
    "load_settings",
    "open_crawl",
    "save_model",
]
