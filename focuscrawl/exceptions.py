"""Exceptions of focuscrawl. Imports nothing internal."""

from __future__ import annotations


class FocuscrawlError(Exception):
    """Base class of every error focuscrawl raises on purpose."""


class ConfigError(FocuscrawlError):
    """Bad configuration or usage: the CLI prints it as one line and exits 2."""


class ArchiveError(FocuscrawlError):
    """A WARC archive cannot be read."""


class ModelError(FocuscrawlError):
    """A relevance model cannot be built, trained, loaded or applied."""


class FrontierError(FocuscrawlError):
    """The crawl DB is unusable (wrong schema, locked, corrupt)."""


class ResumeError(ConfigError):
    """A run directory's outputs do not match what its crawl DB committed: nothing is touched."""
