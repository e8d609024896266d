"""``focuscrawl model perplexity MODEL FILE...``: PP of text, JSONL or HTML files under a model."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.commands import Subcommand
from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import load_model
from focuscrawl.relevance.lm_text import read_texts
from focuscrawl.relevance.ngram_lm import PerplexityModel
from focuscrawl.types import Page


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


CLI_COMMANDS: dict[str, Subcommand] = {"perplexity": (_add_perplexity_arguments, _run_perplexity)}
