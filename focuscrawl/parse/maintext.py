"""A page's main text as the models read it: trafilatura's, boilerplate removed.

One function for every reader of it (the n-gram model, the perplexity experiments,
the export and the search index), so that they read the same text, with trafilatura's
options made once (:func:`_extractor`): trafilatura otherwise builds them, reading its
configuration, on every call (7 % of its CPU). trafilatura (with lxml and its
language data) is imported at the first page read, not when a crawl starts: a crawl
with no model never reads a main text.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["extracted_text"]


def extracted_text(html: str) -> str | None:
    """trafilatura's main text of decoded HTML; None where it finds none (or fails).

    The same as ``trafilatura.extract(html, fast=True, include_comments=False)``."""
    if not html:
        return None
    import trafilatura  # see the module docstring

    try:
        text = trafilatura.extract(html, options=_extractor())
    except Exception:  # trafilatura/lxml raise on some malformed pages
        return None
    return str(text) if text else None


@functools.cache
def _extractor() -> Any:
    """trafilatura's options of ``extract(fast=True, include_comments=False)``, made once
    (trafilatura shares them safely: its recall retry works on a copy)."""
    from trafilatura.settings import Extractor

    return Extractor(fast=True, comments=False)
