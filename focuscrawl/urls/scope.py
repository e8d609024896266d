"""Scope rules: whether a URL may enter the frontier (length, depth, spider traps,
hosts, the seeds' sites, extensions, patterns), and why not."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from focuscrawl.settings import ScopeSettings, check_regex
from focuscrawl.urls.hosts import extension_of, host_matches, host_of, path_of, registered_domain


def trap_reason(path: str, max_segments: int, max_repeats: int) -> str | None:
    """"too-many-segments", "repeated-segments" or None: the spider-trap rules on a URL path.

    A block of one to three segments repeated ``max_repeats`` + 1 times in a row
    is what relative links on a page that answers any path produce (``a/`` on
    ``/x/a/`` gives ``/x/a/a/``), and calendar or session traps in cycles.

    >>> trap_reason("/trap/a/a/a/", 20, 2), trap_reason("/x/b/c/b/c/b/c", 20, 2)
    ('repeated-segments', 'repeated-segments')
    >>> trap_reason("/a/a/b/a/a", 20, 2), trap_reason("/any/any/menu/any/x.htm", 20, 2)
    (None, None)
    >>> trap_reason("/1/2/3/4", 3, 2), trap_reason("/1/2/3/", 3, 2), trap_reason("/a/a/a", 0, 0)
    ('too-many-segments', None, None)
    """
    slashes = path.count("/")
    if slashes <= max_repeats and slashes <= max_segments:
        return None  # the common short path: nothing to check
    segments = [s for s in path.split("/") if s]  # "/1/2/3/" has 3 segments
    if max_segments and len(segments) > max_segments:
        return "too-many-segments"
    # a block repeated n + 1 times repeats each of its segments n times at least:
    # a path with n or more repeated segments is checked, others (most) need not be
    if (
        max_repeats
        and len(segments) - len(set(segments)) >= max_repeats
        and _repeated_block(max_repeats).search(path[1:] + "/")
    ):
        return "repeated-segments"
    return None


@lru_cache(maxsize=8)
def _repeated_block(repeats: int) -> re.Pattern[str]:
    # whole segments only: the block starts at the path's start or after a '/'
    # and ends with a '/'; it is matched on the path without its leading '/'
    return re.compile(rf"(?:^|/)((?:[^/]+/){{1,3}})\1{{{repeats}}}")


@dataclass
class Scope:
    """Decides whether a URL may enter the frontier; ``reject`` says why not."""

    settings: ScopeSettings
    seed_domains: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._allow = [check_regex("scope.allow_regex", p) for p in self.settings.allow_regex]
        self._deny = [check_regex("scope.deny_regex", p) for p in self.settings.deny_regex]
        self._deny_ext = frozenset(e.lower().lstrip(".") for e in self.settings.deny_extensions)

    @classmethod
    def for_seeds(cls, settings: ScopeSettings, seeds: Sequence[str]) -> Scope:
        # the seeds' registered domains are read by same_site_only alone
        domains = frozenset(registered_domain(s) for s in seeds) if settings.same_site_only else frozenset()
        return cls(settings, domains)

    def reject(self, url: str, depth: int = 0, *, extensions: bool = True) -> str | None:
        """None if ``url`` is in scope, else a short reason (for counters); with
        ``extensions`` false, ``deny_extensions`` is not asked (a sitemap or a feed:
        its ``.xml`` is what it is)."""
        s = self.settings
        if len(url) > s.max_url_length:
            return "url-too-long"
        if s.max_depth >= 0 and depth > s.max_depth:
            return "too-deep"
        if s.max_path_segments or s.max_segment_repeats:
            trap = trap_reason(path_of(url), s.max_path_segments, s.max_segment_repeats)
            if trap is not None:
                return trap
        host = host_of(url)
        if s.deny_hosts and host_matches(host, s.deny_hosts):
            return "denied-host"
        if s.allow_hosts and not host_matches(host, s.allow_hosts):
            return "host-not-allowed"
        if s.same_site_only and self.seed_domains and registered_domain(host) not in self.seed_domains:
            return "off-site"
        if extensions and self._deny_ext and extension_of(url) in self._deny_ext:
            return "extension"
        if any(p.search(url) for p in self._deny):
            return "denied-regex"
        if self._allow and not any(p.search(url) for p in self._allow):
            return "not-allowed-regex"
        return None

