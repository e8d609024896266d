"""Relevance as perplexity under an n-gram language model of the domain (P2).

The domain is given by plain texts (a 5-gram interpolated modified Kneser–Ney
model is trained on them, :mod:`focuscrawl.relevance.kneser_ney`) or by an
existing ARPA model. A page is stripped of boilerplate with trafilatura (P2 used
boilerpipe; falls back to the parser's visible text), normalised like the
training text (:mod:`focuscrawl.relevance.lm_text`) and judged by its
perplexity PP = 2^H, H = −(1/|X|) Σ log2 p(x)  (P2, eq. 1), X = its words plus one
``</s>`` per sentence, as KenLM counts. Lower PP = more relevant.

``score`` maps PP to [0, 1] with a monotone decreasing function anchored on the
model itself: score = 1 − ln PP / ln PP_max, clipped to [0, 1], where PP_max =
1/p(<unk>) is the perplexity of a page made only of unknown words — P2 (section 4)
notes this ceiling (about 10^7 for their model). PP = 1 gives 1, PP ≥ PP_max gives 0.
``threshold`` is derived from ``max_perplexity`` (the relevance cut-off) unless
given directly.

The bounds (the relevance cut-off, P2's discard bound and buckets) come from
domain texts held out of the training, every 10th (``held_out_share``), or given
(``held_out``) (:mod:`focuscrawl.relevance.perplexity_bounds`).
``exclude_every = k`` in the config leaves every k-th text out altogether (neither
trained on nor held out): the articles an evaluation keeps for itself, such as P2's
held-out perplexity (``focuscrawl.evaluation.perplexity.split_heldout``, every 5th).
Queries run in Python (dict look-ups, ARPA back-off) or, with ``backend = "kenlm"``,
through the ``kenlm`` module on the saved ARPA file.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from focuscrawl.exceptions import ModelError
from focuscrawl.parse.maintext import extracted_text
from focuscrawl.relevance.base import register_model
from focuscrawl.relevance.kneser_ney import train_kneser_ney
from focuscrawl.relevance.lm_text import lm_sentences, read_texts, training_sentences
from focuscrawl.relevance.ngram_model import NO_PROB, UNK, UNK_ID, NgramLM, PerplexityStats
from focuscrawl.relevance.perplexity_bounds import CUTOFF_QUANTILE, bucket_of, derive_bounds
from focuscrawl.types import Page

ARPA_FILE = "model.arpa.gz"
PARAMS_FILE = "perplexity.json"
HELD_OUT_EVERY = 10  # every 10th training text is held out for the bounds
UNKNOWN_CEILING = 1e7  # P2, section 4: PP of an all-unknown page, used when p(<unk>) = 0


@dataclass(frozen=True)
class PerplexityParams:
    """The ``[model]`` table of a perplexity model: an ARPA file, or texts to train on."""

    arpa: Path | None = None  # an ARPA model (plain or .gz), e.g. KenLM's lmplz
    texts: tuple[Path, ...] = ()  # or text files to train on (.txt: a text a line; .jsonl)
    field: str = "text"  # the text field of .jsonl records
    order: int = 5  # n-gram order (P2: 5)
    min_words: int = 5  # shortest training sentence (P2: 5)
    lowercase: bool = True
    dedup: bool = True  # drop repeated training sentences
    backend: str = "python"  # or "kenlm" (the kenlm module on the ARPA file)
    boilerplate: bool = True  # strip pages' boilerplate (trafilatura) before scoring
    include_oov: bool = True  # unknown words count in the perplexity
    threshold: float | None = None  # None: the score of max_perplexity
    max_perplexity: float | None = None  # relevance cut-off (None: from held-out texts)
    reference_perplexity: float | None = None  # PP of score 0 (None: 1/p(<unk>))
    cutoff_quantile: float = CUTOFF_QUANTILE  # share of held-out domain texts accepted
    discard_perplexity: float | None = None  # P2's bound for dropping a page's links
    bucket_perplexities: tuple[float, ...] | None = None  # P2's HIGH and MEDIUM upper bounds
    held_out: tuple[Path, ...] = ()  # more domain texts, never trained on, for the bounds
    held_out_share: float | None = None  # share of the texts held out (None: every 10th)
    exclude_every: int = 0  # leave every k-th text out altogether (an evaluation's own)


@register_model("perplexity")
class PerplexityModel:
    """Perplexity of a page under an n-gram LM, mapped to a [0, 1] score (higher = more relevant)."""

    name: ClassVar[str] = "perplexity"
    Params: ClassVar[type[PerplexityParams]] = PerplexityParams

    def __init__(
        self,
        lm: NgramLM | None,
        *,
        arpa_path: Path | None = None,
        backend: str = "python",
        lowercase: bool = True,
        boilerplate: bool = True,
        include_oov: bool = True,
        max_perplexity: float | None = None,
        reference_perplexity: float | None = None,
        threshold: float | None = None,
        cutoff_quantile: float = CUTOFF_QUANTILE,
        discard_perplexity: float | None = None,
        bucket_perplexities: Sequence[float] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        if backend not in ("python", "kenlm"):
            raise ModelError(f"perplexity model: unknown backend {backend!r} (python, kenlm)")
        self.lm, self.arpa_path, self.backend = lm, arpa_path, backend
        self.lowercase, self.boilerplate, self.include_oov = lowercase, boilerplate, include_oov
        self.info: dict[str, Any] = dict(info or {})
        self._kenlm: Any = None
        if backend == "kenlm":
            if arpa_path is None:
                raise ModelError(
                    "perplexity model: the kenlm backend needs an ARPA file (save first)"
                )
            try:
                import kenlm
            except ImportError:
                raise ModelError(
                    "perplexity model: backend 'kenlm' needs `pip install kenlm`"
                ) from None
            self._kenlm = kenlm.Model(str(arpa_path))
        elif lm is None:
            raise ModelError("perplexity model: no language model")
        self.reference_perplexity = float(reference_perplexity or self._unknown_perplexity())
        if not self.reference_perplexity > 1.0:
            raise ModelError("perplexity model: reference_perplexity must be > 1")
        if not 0.0 < cutoff_quantile <= 1.0:
            raise ModelError(
                f"perplexity model: cutoff_quantile must be in (0, 1], not {cutoff_quantile}"
            )
        self.cutoff_quantile = float(cutoff_quantile)
        # what was set by hand stays; the rest follows the held-out texts (_derive_bounds)
        self._given: dict[str, Any] = {
            k: v
            for k, v in (
                ("max_perplexity", max_perplexity), ("threshold", threshold),
                ("discard_perplexity", discard_perplexity),
                ("bucket_perplexities", bucket_perplexities),
            )
            if v is not None
        }  # fmt: skip
        self._derive_bounds()

    def _derive_bounds(self) -> None:
        """Cut-off, discard bound, buckets and threshold: given values, else from the
        held-out quantiles (``info["held_out"]``), else P2's fixed values."""
        bounds = derive_bounds(
            self.info.get("held_out", {}).get("quantiles"), self.cutoff_quantile, self._given,
            self.reference_perplexity,
        )  # fmt: skip
        self.max_perplexity = bounds.max_perplexity
        self.discard_perplexity = bounds.discard_perplexity
        self.bucket_perplexities = bounds.bucket_perplexities
        if "threshold" in self._given:
            self.threshold = float(self._given["threshold"])
        else:
            self.threshold = self.pp_to_score(self.max_perplexity)

    @property
    def calibrated(self) -> bool:
        """The bounds come from held-out domain texts (not P2's fixed numbers)."""
        return bool(self.info.get("held_out", {}).get("quantiles"))

    def calibrate(self, texts: Iterable[str]) -> PerplexityModel:
        """Set the bounds from held-out domain texts (see the module docstring); returns self.

        Texts without any word are skipped. Values given by hand are kept.
        """
        pps = [pp for t in texts if (pp := self.perplexity(t)) < math.inf]
        if not pps:
            raise ModelError("perplexity model: no held-out text with words to calibrate on")
        quantiles = np.quantile(np.asarray(pps), np.linspace(0.0, 1.0, 101))
        self.info["held_out"] = {
            "texts": len(pps),
            "quantiles": [round(float(v), 3) for v in quantiles],
        }
        self._derive_bounds()
        return self

    def bucket(self, perplexity: float) -> str:
        """P2's bucket of a page by its PP: high, medium, normal, or discard (links dropped)."""
        return bucket_of(perplexity, self.bucket_perplexities, self.discard_perplexity)

    def _unknown_perplexity(self) -> float:
        """1/p(<unk>), the PP of a long page of unknown words (P2's ceiling)."""
        if self.lm is not None:
            lp = self.lm.probs[0].get(UNK_ID, NO_PROB)
        else:  # log10 p(<unk>) without context
            lp = float(self._kenlm.score(UNK, bos=False, eos=False))
        return UNKNOWN_CEILING if not NO_PROB < lp < 0.0 else float(10.0**-lp)

    # -- scoring ----------------------------------------------------------------
    def pp_to_score(self, pp: float) -> float:
        """1 − ln PP / ln PP_max clipped to [0, 1] (see the module docstring)."""
        if not pp < math.inf:
            return 0.0
        return min(
            1.0, max(0.0, 1.0 - math.log(max(pp, 1.0)) / math.log(self.reference_perplexity))
        )

    def page_text(self, page: Page) -> str:
        """Main text of ``page`` after boilerplate removal (trafilatura), else its visible text."""
        if self.boilerplate and page.main_text is not None:
            return page.main_text
        if self.boilerplate and page.html:
            # (a page trafilatura cannot read keeps the parser's text)
            text = extracted_text(page.html)
            if text:
                page.main_text = text  # kept beside pages.jsonl for the search index
                return text
        return page.text

    def sentences(self, text: str) -> list[list[str]]:
        return lm_sentences(text, lowercase=self.lowercase)

    def stats(self, page: Page | str) -> PerplexityStats:
        """Token/OOV counts and log10 sums of a page (boilerplate removed) or a text."""
        text = page if isinstance(page, str) else self.page_text(page)
        return self._stats(self.sentences(text))

    def _stats(self, sentences: Sequence[Sequence[str]]) -> PerplexityStats:
        if self._kenlm is None:
            assert self.lm is not None
            return self.lm.stats(sentences)
        st = PerplexityStats()
        for words in sentences:
            for lp, _, oov in self._kenlm.full_scores(" ".join(words)):
                st.tokens += 1
                st.log10_sum += lp
                if oov:
                    st.oovs += 1
                    st.log10_oov += lp
        return st

    def perplexity(self, page: Page | str, include_oov: bool | None = None) -> float:
        """Raw PP (P2, eq. 1) of a page or text; inf when it holds no words."""
        keep = self.include_oov if include_oov is None else include_oov
        return self.stats(page).perplexity(keep)

    def score(self, page: Page) -> float:
        return self.pp_to_score(self.perplexity(page))

    def score_text(self, text: str) -> float:
        return self.pp_to_score(self.perplexity(text))

    # -- building, saving ------------------------------------------------------
    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        *,
        order: int = 5,
        min_words: int = 5,
        lowercase: bool = True,
        dedup: bool = True,
        held_out_every: int = HELD_OUT_EVERY,
        **options: Any,
    ) -> PerplexityModel:
        """Train on plain texts: sentences of >= ``min_words`` words, de-duplicated (P2, 3.1 and 4).

        Every ``held_out_every``-th text (0: none) is not trained on but held out
        to set the bounds (:meth:`calibrate`), when there are at least that many texts.
        """
        start = time.perf_counter()
        all_texts = list(texts)
        held: list[str] = []
        if held_out_every > 0 and len(all_texts) >= held_out_every:
            held = all_texts[held_out_every - 1 :: held_out_every]
            all_texts = [t for i, t in enumerate(all_texts, 1) if i % held_out_every]
        sentences = list(
            training_sentences(all_texts, lowercase=lowercase, min_words=min_words, dedup=dedup)
        )
        lm = train_kneser_ney(sentences, order)
        info = {
            "order": order,
            "min_words": min_words,
            "dedup": dedup,
            "sentences": len(sentences),
            "tokens": sum(len(s) + 1 for s in sentences),
            "ngrams": lm.size,
            "train_seconds": round(time.perf_counter() - start, 3),
        }
        model = cls(lm, lowercase=lowercase, info=info, **options)
        if held:
            try:
                model.calibrate(held)
            except ModelError:  # every held-back text too short to score: P2's fixed bounds
                model.info["held_out"] = {"texts": 0}
        return model

    @classmethod
    def from_arpa(cls, path: Path, **options: Any) -> PerplexityModel:
        """Use an existing ARPA model (plain or .gz), e.g. one built by KenLM's lmplz."""
        backend = options.get("backend", "python")
        if backend not in ("python", "kenlm"):
            raise ModelError(f"perplexity model: unknown backend {backend!r} (python, kenlm)")
        lm = None if backend == "kenlm" else NgramLM.read_arpa(path)
        return cls(lm, arpa_path=Path(path), **options)

    @classmethod
    def from_params(cls, p: PerplexityParams) -> PerplexityModel:
        """An ARPA model (``arpa``), or one trained now on ``texts``; with ``held_out``
        texts, the bounds set from them."""
        options: dict[str, Any] = {
            "backend": p.backend, "lowercase": p.lowercase, "boilerplate": p.boilerplate,
            "include_oov": p.include_oov, "threshold": p.threshold,
            "max_perplexity": p.max_perplexity, "reference_perplexity": p.reference_perplexity,
            "cutoff_quantile": p.cutoff_quantile, "discard_perplexity": p.discard_perplexity,
            "bucket_perplexities": p.bucket_perplexities,
        }  # fmt: skip
        if p.arpa is not None:
            model = cls.from_arpa(p.arpa, **options)
        elif p.texts:
            texts: Iterable[str] = (t for path in p.texts for t in read_texts(path, field=p.field))
            if p.exclude_every > 0:  # e.g. an evaluation's held-out articles (every 5th): never seen here
                texts = (t for i, t in enumerate(texts, 1) if i % p.exclude_every)
            held_out_every = HELD_OUT_EVERY  # a share in the config, every n-th text in train()
            if p.held_out_share is not None:
                held_out_every = round(1.0 / p.held_out_share) if p.held_out_share > 0.0 else 0
            model = cls.train(
                texts, order=p.order, min_words=p.min_words, dedup=p.dedup,
                held_out_every=held_out_every, **options,
            )  # fmt: skip
        else:
            raise ModelError("perplexity model: give 'arpa' (a model file) or 'texts' (text files)")
        if p.held_out:
            model.calibrate(t for path in p.held_out for t in read_texts(path, field=p.field))
        return model

    def save(self, directory: Path) -> None:
        arpa = directory / ARPA_FILE
        if self.lm is not None:
            self.lm.write_arpa(arpa)
        elif self.arpa_path is not None:
            arpa = directory / ("model.arpa.gz" if self.arpa_path.suffix == ".gz" else "model.arpa")
            if self.arpa_path.resolve() != arpa.resolve():
                shutil.copyfile(self.arpa_path, arpa)
        params = {
            "arpa": arpa.name,
            "backend": self.backend,
            "lowercase": self.lowercase,
            "boilerplate": self.boilerplate,
            "include_oov": self.include_oov,
            "reference_perplexity": self.reference_perplexity,
            "cutoff_quantile": self.cutoff_quantile,
            **self._given,  # the rest is derived again from info["held_out"] on loading
            "info": self.info,
        }
        (directory / PARAMS_FILE).write_text(json.dumps(params, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> PerplexityModel:
        try:
            params = json.loads((Path(directory) / PARAMS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{directory}: not a saved perplexity model ({exc})") from None
        arpa = Path(directory) / str(params.pop("arpa"))
        model = cls.from_arpa(arpa, **params)
        return model


__all__ = ["PerplexityModel", "PerplexityParams"]
