"""The names of the crawl's counters (``CrawlStats.counters``, saved in run.json) that
are made from a value: one spelling each, for the recorder that counts and the readers."""

from __future__ import annotations

# skipped URLs whose request never reached its host for want of a connection
UNREACHED = ("skipped_proxy", "skipped_connect", "skipped_dns", "skipped_ssl")


def skipped(error: str | None) -> str:
    """A URL whose request never reached its server (robots, dns, connect...)."""
    return f"skipped_{error}"


def error(error: str | None) -> str:
    """A fetch that failed (no answer) or an answer with a transport error."""
    return f"error_{error}"


def status(code: int) -> str:
    """An answer that is not a page (a status other than 2xx)."""
    return f"status_{code}"


def layer_fetched(layer: int) -> str:
    """A layered crawl's pages fetched in round ``layer``."""
    return f"layer_{layer}_fetched"


def layer_skipped(layer: int) -> str:
    """A layered crawl's URLs skipped in round ``layer``."""
    return f"layer_{layer}_skipped"


def failure(kind: str, exc: BaseException) -> str:
    """A failure of a part on one page: ``parse_error_X``, ``model_error_X``."""
    return f"{kind}_error_{type(exc).__name__}"


def link_rejected(reason: str) -> str:
    """Links left out of the frontier, by reason (``scope:depth`` -> ``link_rejected_depth``)."""
    return f"link_rejected_{reason.split(':', 1)[1]}"


def seed_rejected(reason: str) -> str:
    """Seeds the scope refused, by reason."""
    return f"seed_rejected_{reason}"
