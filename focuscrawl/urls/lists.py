"""Files of URLs (seeds, examples, target lists): one a line, with comments."""

from __future__ import annotations

from pathlib import Path

from focuscrawl.exceptions import ConfigError


def read_url_lines(path: Path | str) -> list[str]:
    """The URLs of a seed or example file: one a line, blank lines and ``#`` comments skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read URL list ({exc.strerror or exc})") from None
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]
