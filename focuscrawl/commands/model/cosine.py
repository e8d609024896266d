"""Commands of the cosine model: ``focuscrawl model idf`` and ``focuscrawl model generate-terms``.

``idf`` counts document frequencies over the pages of WARC archives (the
reference collection of eq. 3.4, P3 4.1.1). ``generate-terms`` runs
GenerateTerms (Algorithm 3, P3 5.2) on example pages taken from archives (the
replay web) by URL or by label, and writes a topic TOML file whose ``[model]``
table is a ready-to-use cosine model (``focuscrawl crawl --config topic.toml``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from focuscrawl.commands import Subcommand
from focuscrawl.exceptions import ConfigError, FocuscrawlError, ModelError
from focuscrawl.relevance.base import build_model, topic_table
from focuscrawl.relevance.examples import iter_archive_pages, select_urls
from focuscrawl.relevance.terms import (
    COUNTS,
    IdfTable,
    compute_idf,
    generate_terms,
    normalise_term,
    page_tokens,
)
from focuscrawl.relevance.text import checked_words_language
from focuscrawl.replay.archive import load_labels
from focuscrawl.urls import read_url_lines


def toml_value(value: Any) -> str:
    """A TOML literal for str, bool, int, float or a list of those.

    >>> toml_value(["a \\"b\\"", 1, 0.5, True])
    '["a \\\\"b\\\\"", 1, 0.5, true]'
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def write_topic(path: Path, model: Mapping[str, Any], comments: Sequence[str] = ()) -> None:
    """Write a topic file holding one ``[model]`` table (lists one item a line)."""
    lines = [f"# {c}" for c in comments] + ["[model]"]
    for key, value in model.items():
        if isinstance(value, list | tuple) and value:
            lines.append(f"{key} = [")
            lines.extend(f"    {toml_value(v)}," for v in value)
            lines.append("]")
        else:
            lines.append(f"{key} = {toml_value(value)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_url_list(spec: str) -> list[str]:
    """URLs from a file (one a line, # comments) when ``spec`` names one, else comma-separated."""
    if Path(spec).is_file():
        return read_url_lines(spec)
    return [u.strip() for u in spec.split(",") if u.strip()]


def select_examples(
    lists: Sequence[str], where: Sequence[str], labels: Mapping[str, Mapping[str, Any]] | None
) -> list[str]:
    """Example URLs: those listed, plus those whose label passes ``where``."""
    urls = [u for spec in lists for u in read_url_list(spec)]
    if where:
        if labels is None:
            raise ConfigError("generate-terms: --genre-where/--relevant-where need --labels")
        urls.extend(select_urls(labels, where))
    return list(dict.fromkeys(urls))


# -- focuscrawl model idf ---------------------------------------------------------------


def add_idf_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "archives", nargs="+", help="WARC archives forming the reference collection"
    )
    parser.add_argument("--out", required=True, type=Path, help="idf table to write (JSON)")
    parser.add_argument("--lang", default="en", help="stop-word list (default: en)")
    parser.add_argument("--stem", action="store_true", help="stem words (if the topic does)")
    parser.add_argument(
        "--max-n", type=int, default=3, help="count phrases of up to N words (default 3)"
    )
    parser.add_argument(
        "--min-df", type=int, default=2, help="keep terms in at least this many pages (default 2)"
    )
    parser.add_argument(
        "--terms", type=Path, help="topic TOML: count only its genre/content/URL terms"
    )


def run_idf(args: argparse.Namespace) -> int:
    args.lang = checked_words_language(args.lang, "idf")
    terms: list[str] = []
    if args.terms is not None:
        table = topic_table(args.terms, "cosine")
        raw = [t for k in ("genre_terms", "content_terms", "url_terms") for t in table.get(k, [])]
        terms = [n for n in (normalise_term(str(t), args.lang, stem=args.stem) for t in raw) if n]
        if not terms:
            raise ConfigError(f"{args.terms}: no terms")
    docs = (
        page_tokens(p, args.lang, stem=args.stem)
        for p in iter_archive_pages(args.archives, only_ok=True)
    )
    idf = compute_idf(docs, max_n=args.max_n, min_df=args.min_df, terms=terms, lang=args.lang)
    if idf.n_docs == 0:
        raise ModelError("idf: the archives hold no HTML pages")
    idf.save(args.out)
    print(f"pages {idf.n_docs}")
    print(f"terms {len(idf.df)}")
    print(f"wrote {args.out}")
    return 0


# -- focuscrawl model generate-terms ------------------------------------------------------


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--archive", action="append", required=True, help="WARC archive (repeatable)"
    )
    parser.add_argument(
        "--genre-examples",
        action="append",
        default=[],
        metavar="URLS_OR_FILE",
        help="pages of the genre: comma-separated URLs or a file of URLs",
    )
    parser.add_argument(
        "--relevant-examples",
        action="append",
        default=[],
        metavar="URLS_OR_FILE",
        help="relevant pages (genre and content): URLs or a file of URLs",
    )
    parser.add_argument(
        "--labels", type=Path, help="labels JSONL for --genre-where/--relevant-where"
    )
    parser.add_argument(
        "--genre-where",
        action="append",
        default=[],
        metavar="KEY=V[|V]",
        help="take genre examples whose label matches (repeat = AND)",
    )
    parser.add_argument(
        "--relevant-where",
        action="append",
        default=[],
        metavar="KEY=V[|V]",
        help="take relevant examples whose label matches (repeat = AND)",
    )
    parser.add_argument("--sample", type=int, default=0, help="use at most N examples of each set")
    parser.add_argument("--seed", type=int, default=0, help="random seed of --sample")
    parser.add_argument("--top-n", type=int, default=40, help="terms per set (thesis: 40)")
    parser.add_argument("--genre-n", type=int, help="genre terms (default: --top-n)")
    parser.add_argument("--content-n", type=int, help="content terms (default: --top-n)")
    parser.add_argument("--max-n", type=int, default=3, help="words per term at most (thesis: 3)")
    parser.add_argument(
        "--count",
        choices=COUNTS,
        default=None,
        help="rank by total frequency (thesis), by number of example pages, or by pages x idf "
        "of the --idf table (terms that set the examples apart from the collection); default: "
        "idf with --idf (WebKB course AUC 0.916 vs 0.852 for freq), else freq",
    )
    parser.add_argument("--url-terms", default="", help="comma-separated URL terms to include")
    parser.add_argument("--lang", default="en", help="stop-word list (default: en)")
    parser.add_argument("--idf", help="idf table to name in the topic file (default: idf 1)")
    parser.add_argument("--threshold", type=float, default=0.47, help="similarity threshold")
    parser.add_argument("--out", required=True, type=Path, help="topic TOML file to write")  # fmt: skip


def _sample(urls: list[str], n: int, seed: int) -> list[str]:
    return sorted(random.Random(seed).sample(urls, n)) if 0 < n < len(urls) else urls


def run_generate(args: argparse.Namespace) -> int:
    args.lang = checked_words_language(args.lang, "generate-terms")
    labels = load_labels(args.labels) if args.labels else None
    genre = _sample(
        select_examples(args.genre_examples, args.genre_where, labels), args.sample, args.seed
    )
    relevant = _sample(
        select_examples(args.relevant_examples, args.relevant_where, labels), args.sample, args.seed
    )
    if not genre and not relevant:
        raise ConfigError(
            "generate-terms: give --genre-examples/--genre-where or --relevant-examples/--relevant-where"
        )
    tokens: dict[str, list[str]] = {}
    for page in iter_archive_pages(args.archive, set(genre) | set(relevant), only_ok=True):
        tokens.setdefault(page.url, page_tokens(page, args.lang))
    missing = [u for u in dict.fromkeys(genre + relevant) if u not in tokens]
    genre_docs = [tokens[u] for u in genre if u in tokens]
    relevant_docs = [tokens[u] for u in relevant if u in tokens]
    n_genre = args.top_n if args.genre_n is None else args.genre_n
    n_content = args.top_n if args.content_n is None else args.content_n
    idf = None
    if args.count is None:
        args.count = "idf" if args.idf else "freq"
    if args.count == "idf":
        if not args.idf:
            raise ConfigError("generate-terms: --count idf needs --idf (a table of `model idf`)")
        idf_path = Path(args.idf)
        idf = IdfTable.load(idf_path if idf_path.is_absolute() else args.out.parent / idf_path)
    genre_terms, content_terms = generate_terms(
        genre_docs, relevant_docs, n_genre, n_content, max_n=args.max_n, count=args.count, idf=idf
    )
    table: dict[str, Any] = {
        "name": "cosine",
        "genre_terms": genre_terms,
        "content_terms": content_terms,
        "url_terms": [u.strip() for u in args.url_terms.split(",") if u.strip()],
        "threshold": args.threshold,
        "lang": args.lang,
    }
    if args.idf:
        table["idf"] = str(args.idf)
    try:  # the file must load as a model: fail here, not at crawl time
        build_model(table, args.out.parent)
    except FocuscrawlError as exc:
        raise ModelError(f"generate-terms: no usable terms ({exc})") from None
    comments = [
        "Topic written by `focuscrawl model generate-terms` (GenerateTerms, P3 Algorithm 3).",
        f"Examples: {len(genre_docs)} genre pages, {len(relevant_docs)} relevant pages "
        f"({len(missing)} URLs not found in the archives); terms of <= {args.max_n} words, ranked by {args.count}.",
    ]
    write_topic(args.out, table, comments)
    print(f"genre pages {len(genre_docs)}")
    print(f"relevant pages {len(relevant_docs)}")
    print(f"missing {len(missing)}")
    print(f"genre terms {len(genre_terms)}: " + ", ".join(genre_terms[:10]))
    print(f"content terms {len(content_terms)}: " + ", ".join(content_terms[:10]))
    print(f"wrote {args.out}")
    return 0


CLI_COMMANDS: dict[str, Subcommand] = {
    "idf": (add_idf_arguments, run_idf),
    "generate-terms": (add_generate_arguments, run_generate),
}
