"""P2's perplexity bounds: the relevance cut-off, the discard bound and the buckets.

The bounds come from the domain (:meth:`~focuscrawl.relevance.ngram_lm.PerplexityModel.calibrate`): P2's fixed
10^5 accepted every page, since the largest PP the model can give is about
1.5·10^5 (English, Japanese and German pages alike). Training sets aside every
10th text (``held_out_share``), and the perplexities of those held-out domain
texts give, unless set by hand:

* ``max_perplexity``, the relevance cut-off: their ``cutoff_quantile`` (0.95),
  so that about 95 % of domain documents are judged relevant;
* ``discard_perplexity``, P2's bound above which a page's links are dropped:
  twice the largest held-out PP, far from the domain but still below the
  ceiling of unknown words;
* ``bucket_perplexities`` = (HIGH, MEDIUM) upper bounds of P2's three buckets
  (section 3.2, "assigned by the user ... by short test crawls"): the held-out
  median and the cut-off; NORMAL runs up to the discard bound.

Without held-out texts (an ARPA file, or fewer than 10 training texts) they
fall back to P2's 10^5 and (10^4, 10^5), unless ``calibrate`` is called with
domain texts (``held_out`` in the config, ``--held-out`` on the command line).
A model whose own ceiling (the PP of a page of unknown words) is not above P2's
cut-off, a model of a small corpus, would judge every page relevant by it
(threshold 0: a German or Japanese page relevant to an English model of one
article), so its cut-off is P2's at the same place below its ceiling: 10^5 of
P2's 10^7 is score 2/7, PP = ceiling^(5/7) (:data:`PAPER_CUTOFF_SHARE`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from focuscrawl.exceptions import ModelError

DEFAULT_MAX_PERPLEXITY = 1e5  # P2, section 4: links of pages above it are discarded
CUTOFF_QUANTILE = 0.95  # share of held-out domain texts judged relevant
DISCARD_FACTOR = 2.0  # discard bound = this x the largest held-out PP
PAPER_CEILING = 1e7  # P2, section 4: the PP of an all-unknown page under its model
#: where P2's cut-off lies below its model's ceiling, in log PP: ln 10^5 / ln 10^7
PAPER_CUTOFF_SHARE = math.log(DEFAULT_MAX_PERPLEXITY) / math.log(PAPER_CEILING)
BUCKETS = ("high", "medium", "normal", "discard")


@dataclass(frozen=True)
class Bounds:
    max_perplexity: float  # the relevance cut-off
    discard_perplexity: float  # P2's bound above which a page's links are dropped
    bucket_perplexities: tuple[float, float]  # upper bounds of HIGH and MEDIUM


def derive_bounds(
    quantiles: Sequence[float] | None,
    cutoff_quantile: float,
    given: Mapping[str, Any],
    ceiling: float = math.inf,
) -> Bounds:
    """The bounds ``given`` by hand (``max_perplexity``, ``discard_perplexity``,
    ``bucket_perplexities``), the rest from the held-out texts' PP ``quantiles``
    (at 0, 0.01, ..., 1), else P2's fixed values, the cut-off below the model's
    ``ceiling`` (see the module docstring).

    >>> derive_bounds(None, 0.95, {})
    Bounds(max_perplexity=100000.0, discard_perplexity=100000.0, bucket_perplexities=(10000.0, 100000.0))
    >>> derive_bounds([10.0, 20.0, 40.0], 0.5, {"max_perplexity": 30.0})
    Bounds(max_perplexity=30.0, discard_perplexity=80.0, bucket_perplexities=(20.0, 30.0))
    >>> round(derive_bounds(None, 0.95, {}, ceiling=1e4).max_perplexity, 1)  # 10^(4·5/7)
    719.7
    """
    if quantiles:
        q = np.asarray(quantiles, dtype=np.float64)  # PP at quantiles 0, 0.01, ..., 1
        cut = float(np.interp(cutoff_quantile, np.linspace(0.0, 1.0, len(q)), q))
        median = float(np.interp(0.5, np.linspace(0.0, 1.0, len(q)), q))
        discard = DISCARD_FACTOR * float(q[-1])
    else:
        cut, discard = DEFAULT_MAX_PERPLEXITY, DEFAULT_MAX_PERPLEXITY
        median = DEFAULT_MAX_PERPLEXITY / 10.0
        if ceiling <= cut:  # P2's cut-off would pass every page: at P2's place below the ceiling
            cut = ceiling**PAPER_CUTOFF_SHARE
    max_perplexity = float(given.get("max_perplexity", cut))
    discard_perplexity = float(given.get("discard_perplexity", max(discard, max_perplexity)))
    buckets = given.get("bucket_perplexities", (min(median, max_perplexity), max_perplexity))
    if len(buckets) != 2 or not 0.0 < float(buckets[0]) <= float(buckets[1]):
        raise ModelError("perplexity model: bucket_perplexities must be two bounds, low <= high")
    return Bounds(max_perplexity, discard_perplexity, (float(buckets[0]), float(buckets[1])))


def bucket_of(perplexity: float, buckets: tuple[float, float], discard: float) -> str:
    """P2's bucket of a page by its PP: high, medium, normal, or discard (links dropped).

    >>> [bucket_of(pp, (10.0, 100.0), 1000.0) for pp in (5, 10, 50, 500, 5000)]
    ['high', 'high', 'medium', 'normal', 'discard']
    """
    low, high = buckets
    if perplexity <= low:
        return "high"
    if perplexity <= high:
        return "medium"
    return "normal" if perplexity <= discard else "discard"
