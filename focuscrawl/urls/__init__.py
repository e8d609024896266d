"""URLs: the canonical form (:mod:`.normalize`), the parts of a URL and host patterns
(:mod:`.hosts`), scope rules (:mod:`.scope`) and files of URLs (:mod:`.lists`)."""

from __future__ import annotations

from focuscrawl.urls.hosts import (
    extension_of,
    host_matches,
    host_of,
    hostname_of,
    path_of,
    registered_domain,
)
from focuscrawl.urls.lists import read_seed_file, read_url_lines
from focuscrawl.urls.normalize import is_plain_url, normalize_escapes, normalize_url
from focuscrawl.urls.scope import Scope, trap_reason

__all__ = [
    "Scope",
    "extension_of",
    "host_matches",
    "host_of",
    "hostname_of",
    "is_plain_url",
    "normalize_escapes",
    "normalize_url",
    "path_of",
    "read_seed_file",
    "read_url_lines",
    "registered_domain",
    "trap_reason",
]
