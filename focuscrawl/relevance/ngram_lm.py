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
``threshold`` is derived from ``max_perplexity``, P2's discard bound 10^5, unless
given directly. Queries run in Python (dict look-ups, ARPA back-off) or, with
``backend = "kenlm"``, through the ``kenlm`` module on the saved ARPA file.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import load_model, register_model
from focuscrawl.relevance.kneser_ney import (
    NO_PROB,
    UNK,
    UNK_ID,
    NgramLM,
    PerplexityStats,
    train_kneser_ney,
)
from focuscrawl.relevance.lm_text import lm_sentences, read_texts, training_sentences
from focuscrawl.types import Page

ARPA_FILE = "model.arpa.gz"
PARAMS_FILE = "perplexity.json"
DEFAULT_MAX_PERPLEXITY = 1e5  # P2, section 4: links of pages above it are discarded
UNKNOWN_CEILING = 1e7  # P2, section 4: PP of an all-unknown page, used when p(<unk>) = 0
_OPTIONS = {"arpa", "texts", "field", "order", "min_words", "lowercase", "dedup", "backend"}
_OPTIONS |= {"boilerplate", "threshold", "max_perplexity", "reference_perplexity", "include_oov"}


@register_model("perplexity")
class PerplexityModel:
    """Perplexity of a page under an n-gram LM, mapped to a [0, 1] score (higher = more relevant)."""

    name: ClassVar[str] = "perplexity"

    def __init__(
        self,
        lm: NgramLM | None,
        *,
        arpa_path: Path | None = None,
        backend: str = "python",
        lowercase: bool = True,
        boilerplate: bool = True,
        include_oov: bool = True,
        max_perplexity: float = DEFAULT_MAX_PERPLEXITY,
        reference_perplexity: float | None = None,
        threshold: float | None = None,
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
        self.max_perplexity = float(max_perplexity)
        self.reference_perplexity = float(reference_perplexity or self._unknown_perplexity())
        if not self.reference_perplexity > 1.0:
            raise ModelError("perplexity model: reference_perplexity must be > 1")
        self.threshold = (
            self.pp_to_score(self.max_perplexity) if threshold is None else float(threshold)
        )

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
        if self.boilerplate and page.html:
            import trafilatura

            # trafilatura/lxml raise on some malformed pages: then keep the parser's text
            try:
                text = trafilatura.extract(page.html, fast=True, include_comments=False)
            except Exception:
                text = None
            if text:
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
        **options: Any,
    ) -> PerplexityModel:
        """Train on plain texts: sentences of >= ``min_words`` words, de-duplicated (P2, 3.1 and 4)."""
        start = time.perf_counter()
        sentences = list(
            training_sentences(texts, lowercase=lowercase, min_words=min_words, dedup=dedup)
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
        return cls(lm, lowercase=lowercase, info=info, **options)

    @classmethod
    def from_arpa(cls, path: Path, **options: Any) -> PerplexityModel:
        """Use an existing ARPA model (plain or .gz), e.g. one built by KenLM's lmplz."""
        backend = options.get("backend", "python")
        if backend not in ("python", "kenlm"):
            raise ModelError(f"perplexity model: unknown backend {backend!r} (python, kenlm)")
        lm = None if backend == "kenlm" else NgramLM.read_arpa(path)
        return cls(lm, arpa_path=Path(path), **options)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], base_dir: Path) -> PerplexityModel:
        unknown = sorted(set(cfg) - _OPTIONS)
        if unknown:
            raise ModelError(f"perplexity model: unknown option(s) {', '.join(unknown)}")
        options = {k: cfg[k] for k in _OPTIONS & set(cfg) - {"arpa", "texts", "field"}}
        options.update(
            {k: bool(options[k]) for k in ("lowercase", "dedup", "boilerplate") if k in options}
        )
        if "arpa" in cfg:
            options.pop("order", None), options.pop("min_words", None), options.pop("dedup", None)
            return cls.from_arpa(_resolve(base_dir, cfg["arpa"]), **options)
        texts = cfg.get("texts")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts:
            raise ModelError("perplexity model: give 'arpa' (a model file) or 'texts' (text files)")
        field = str(cfg.get("field", "text"))
        paths = [_resolve(base_dir, t) for t in texts]
        return cls.train((t for p in paths for t in read_texts(p, field=field)), **options)

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
            "max_perplexity": self.max_perplexity,
            "reference_perplexity": self.reference_perplexity,
            "threshold": self.threshold,
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
        info = params.pop("info", {})
        model = cls.from_arpa(arpa, **params)
        model.info = info
        return model

    @classmethod
    def add_train_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--texts", nargs="+", required=True, type=Path, help=".txt (a text per line) or .jsonl"
        )
        parser.add_argument("--field", default="text", help="text field of .jsonl records")
        parser.add_argument("--order", type=int, default=5, help="n-gram order (P2: 5)")
        parser.add_argument(
            "--min-words", type=int, default=5, help="shortest training sentence (P2: 5)"
        )
        parser.add_argument("--no-lowercase", dest="lowercase", action="store_false")
        parser.add_argument("--no-dedup", dest="dedup", action="store_false")
        parser.add_argument("--max-perplexity", type=float, default=DEFAULT_MAX_PERPLEXITY)

    @classmethod
    def train_from_args(cls, args: argparse.Namespace) -> PerplexityModel:
        texts = (t for p in args.texts for t in read_texts(p, field=args.field))
        return cls.train(
            texts,
            order=args.order,
            min_words=args.min_words,
            lowercase=args.lowercase,
            dedup=args.dedup,
            max_perplexity=args.max_perplexity,
        )


def _resolve(base_dir: Path, value: Any) -> Path:
    path = Path(str(value))
    return path if path.is_absolute() else base_dir / path


# -- `focuscrawl model perplexity MODEL FILE...` ---------------------------------
def _add_perplexity_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, help="saved model directory or an ARPA file")
    parser.add_argument("files", nargs="+", type=Path, help=".txt, .jsonl or .html files")
    parser.add_argument("--field", default="text", help="text field of .jsonl records")


def _run_perplexity(args: argparse.Namespace) -> int:
    path: Path = args.model
    if path.is_file():
        model = PerplexityModel.from_arpa(path)
    else:
        loaded = load_model(path)
        if not isinstance(loaded, PerplexityModel):
            raise ModelError(f"{path}: a {loaded.name!r} model, not a perplexity model")
        model = loaded
    print("file\tpp\tpp_without_oov\ttokens\toov")
    for file in args.files:
        if file.suffix.lower() in {".html", ".htm"}:
            try:
                html = file.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise ModelError(f"{file}: cannot read ({exc.strerror})") from None
            st = model.stats(Page(url=file.resolve().as_uri(), html=html))
        else:
            st = model.stats("\n".join(read_texts(file, field=args.field)))
        print(
            f"{file}\t{st.perplexity(True):.2f}\t{st.perplexity(False):.2f}\t{st.tokens}\t{st.oovs}"
        )
    return 0


CLI_COMMANDS: dict[
    str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]
] = {"perplexity": (_add_perplexity_arguments, _run_perplexity)}
