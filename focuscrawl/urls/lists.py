"""Files of URLs (seeds, examples, target lists): one a line, with comments."""

from __future__ import annotations

from pathlib import Path

from focuscrawl.exceptions import ConfigError
from focuscrawl.urls.normalize import normalize_url


def read_url_lines(path: Path | str) -> list[str]:
    """The URLs of a seed or example file: one a line, blank lines and ``#`` comments skipped."""
    return [url for _, url in _numbered(_lines(path))]


def read_seed_file(path: Path | str) -> list[str]:
    """The URLs of a seed file, as :func:`read_url_lines`; a line that is no http(s)
    URL is one error naming the file and the line."""
    lines = _lines(path)
    for number, url in _numbered(lines):
        if normalize_url(url) is None:
            raise ConfigError(f"{path}, line {number}: {url!r} is not an http(s) URL "
                              "(a seed file holds one URL a line, # comments)")  # fmt: skip
    return [url for _, url in _numbered(lines)]


def _lines(path: Path | str) -> list[str]:
    """The file's lines; a UTF-8 byte order mark (Windows editors write one) is not part
    of the first URL."""
    try:
        return Path(path).read_text(encoding="utf-8-sig", errors="replace").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read URL list ({exc.strerror or exc})") from None


def _numbered(lines: list[str]) -> list[tuple[int, str]]:
    """The lines' URLs with their line numbers (from 1), blank lines and comments skipped."""
    found = ((n, line.split("#", 1)[0].strip()) for n, line in enumerate(lines, 1))
    return [(n, url) for n, url in found if url]
